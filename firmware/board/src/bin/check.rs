//! The firmware check, run under QEMU with semihosting and `-icount shift=7`:
//!
//! 1. the golden hashes of every pinned run (DULA and DMALA on the 8×8 Ising lattice for seeds
//!    1, 2, 3, and on the small quadratic, RBM and graph models), then of every other kernel
//!    (ordinal, categorical, tabulated lattice, baselines, second order, continuous
//!    integrators) with its instructions per step and stack high-water mark;
//! 2. per-step instruction counts of every cost case; the extreme cases of the bounded family
//!    (see `CostCase::is_bounded`) cost at most 1.25× their nominal case, in mean and in maximum;
//! 3. the per-step stack high-water mark (at most 2 KiB; 2.25 KiB on ARMv6-M) and the RAM of a
//!    d = 64 chain's state and caches (at most 1 KiB).
//!
//! Exit status: 0 pass, 2 golden mismatch, 3 time bound exceeded, 4 stack bound exceeded,
//! 5 RAM bound exceeded, 6 a run failed, 101 panic, 99 hard fault (the lowest failing check
//! wins).
#![no_std]
#![no_main]

use langevin_core::binary::{BinaryChain, ChainStorage, Dmala, FlipProposal};
use langevin_core::models::{ConstDims, IsingLattice};
use langevin_firmware::{BOARD, Calibration, SysTickMeter, entry, exit, hprintln, start_counter};
use langevin_scenarios::Failure;
use langevin_scenarios::cost::{COST_CASES, Meter, run_case};
use langevin_scenarios::golden::{GOLDEN, Hashes, run, run_lattice};
use langevin_scenarios::kernels::{KERNEL_GOLDEN, run_kernel};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Steps measured per cost case.
const COST_STEPS: u32 = 100;
/// Extreme cases may cost at most `BOUND_NUM / BOUND_DEN` times their nominal mean.
const BOUND_NUM: u64 = 125;
const BOUND_DEN: u64 = 100;
/// Stack per step: 2 KiB, and 2.25 KiB on ARMv6-M, whose Thumb-1 instructions reach only eight
/// registers (r0–r7) for most operations, so the same code spills more to the stack.
#[cfg(not(armv6m))]
const STACK_BUDGET: u32 = 2048;
#[cfg(armv6m)]
const STACK_BUDGET: u32 = 2304;
const RAM_BUDGET: usize = 1024;

#[entry]
fn main() -> ! {
    start_counter();
    hprintln!("langevin firmware check: board {}", BOARD);
    let mut status = 0u32;
    let mut fail = |code: u32| {
        if status == 0 || code < status {
            status = code;
        }
    };

    // 1. Golden hashes.
    for g in GOLDEN {
        match run(g.model, g.kernel, g.seed, g.steps) {
            Ok(h) if h == g.hashes => hprintln!(
                "golden {} {} seed {}: state {:#018x} log-density {:#018x} ok",
                g.model.name(),
                g.kernel.name(),
                g.seed,
                h.state,
                h.log_density
            ),
            Ok(h) => {
                hprintln!(
                    "golden {} {} seed {}: MISMATCH state {:#018x} log-density {:#018x}",
                    g.model.name(),
                    g.kernel.name(),
                    g.seed,
                    h.state,
                    h.log_density
                );
                fail(2);
            }
            Err(e) => {
                hprintln!(
                    "golden {} {}: run failed: {}",
                    g.model.name(),
                    g.kernel.name(),
                    e
                );
                fail(6);
            }
        }
    }

    // 2. Instructions per step, nominal against extreme.
    let cal = Calibration::measure();
    hprintln!(
        "calibration: 1000 NOPs = {} ticks; meter overhead = {} ticks",
        cal.ticks_per_1000,
        cal.overhead
    );

    // 1b. Golden hashes of every other kernel, with instructions per step.
    for g in KERNEL_GOLDEN {
        // Each step measured, and the run measured whole: its state, buffers and deepest step.
        let mut whole = SysTickMeter::whole(cal);
        whole.start();
        let mut meter = SysTickMeter::inside(&whole);
        let result = run_kernel(g.run, g.seed, g.steps, &mut meter);
        whole.stop_around(&meter);
        match result {
            Ok(h) => {
                let verdict = if h == g.hashes { "ok" } else { "MISMATCH" };
                hprintln!(
                    "golden {} seed {}: state {:#018x} second {:#018x} {}; mean {} instr/step, max {}, stack {} B per step, {} B whole run",
                    g.run.name(),
                    g.seed,
                    h.state,
                    h.log_density,
                    verdict,
                    meter.mean_instructions(),
                    meter.max_instructions(),
                    meter.max_stack,
                    whole.max_stack
                );
                if h != g.hashes {
                    fail(2);
                }
            }
            Err(e) => {
                hprintln!("golden {}: run failed: {}", g.run.name(), e);
                fail(6);
            }
        }
    }
    let mut nominal = [(0u64, 0u64); COST_CASES.len()];
    let mut max_stack = 0u32;
    for (i, case) in COST_CASES.iter().enumerate() {
        let mut meter = SysTickMeter::new(cal);
        let outcome = run_case(case, COST_STEPS, &mut meter);
        let (mean, max) = (meter.mean_instructions(), meter.max_instructions());
        if let Some(n) = nominal.get_mut(i) {
            *n = (mean, max);
        }
        max_stack = max_stack.max(meter.max_stack);
        let (base_mean, base_max) = nominal.get(case.baseline).copied().unwrap_or((0, 0));
        let over = case.is_bounded()
            && !case.is_nominal(i)
            && (mean * BOUND_DEN > base_mean * BOUND_NUM || max * BOUND_DEN > base_max * BOUND_NUM);
        let tag = match (case.is_bounded(), over) {
            (_, true) => "OVER BOUND",
            (true, false) => "bounded",
            (false, false) => "info",
        };
        match outcome {
            Ok(o) => hprintln!(
                "cost {} {}: mean {} instr/step (x{}), max {} (x{}), stack {} B, accepted {}/{}, {}",
                case.kernel.name(),
                case.name,
                mean,
                Ratio(mean, base_mean),
                max,
                Ratio(max, base_max),
                meter.max_stack,
                o.accepted,
                o.steps,
                tag
            ),
            Err(e) => {
                hprintln!(
                    "cost {} {}: run failed: {}",
                    case.kernel.name(),
                    case.name,
                    e
                );
                fail(6);
            }
        }
        if over {
            fail(3);
        }
    }

    // 3. Stack and RAM.
    hprintln!(
        "stack high-water per step: {} B (budget {} B)",
        max_stack,
        STACK_BUDGET
    );
    if max_stack > STACK_BUDGET {
        fail(4);
    }
    let ram = core::mem::size_of::<ChainStorage<64>>()
        + core::mem::size_of::<BinaryChain<'static>>()
        + core::mem::size_of::<IsingLattice<ConstDims<8, 8>>>()
        + core::mem::size_of::<Xoshiro256PlusPlus>();
    hprintln!(
        "RAM of a d = 64 chain: storage {} B + chain {} B + model {} B + rng {} B = {} B (budget {} B)",
        core::mem::size_of::<ChainStorage<64>>(),
        core::mem::size_of::<BinaryChain<'static>>(),
        core::mem::size_of::<IsingLattice<ConstDims<8, 8>>>(),
        core::mem::size_of::<Xoshiro256PlusPlus>(),
        ram,
        RAM_BUDGET
    );
    if ram > RAM_BUDGET {
        fail(5);
    }
    // Everything a DMALA lattice program needs beyond its entry frame: storage, chain, model,
    // generator and the deepest step, measured like a step.
    let mut meter = SysTickMeter::new(cal);
    meter.start();
    let whole = lattice_dmala_run();
    meter.stop();
    hprintln!(
        "whole DMALA 8x8 run of 1000 steps: {} B of stack",
        meter.max_stack
    );
    if whole.is_err() {
        fail(6);
    }
    hprintln!("status {}", status);
    exit(status)
}

#[inline(never)]
fn lattice_dmala_run() -> Result<Hashes, Failure> {
    let proposal = FlipProposal::new(0.5, 0.5).map_err(|_| Failure::Param)?;
    run_lattice(Dmala::new(proposal), 1, 1000)
}

/// `a / b` printed with two decimals.
struct Ratio(u64, u64);

impl core::fmt::Display for Ratio {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let r = self.0 * 100 / self.1.max(1);
        write!(f, "{}.{:02}", r / 100, r % 100)
    }
}

#[cfg(not(target_arch = "riscv32"))]
#[cortex_m_rt::exception]
unsafe fn HardFault(ef: &cortex_m_rt::ExceptionFrame) -> ! {
    hprintln!("hard fault: {:?}", ef);
    exit(99)
}

/// Any trap (an illegal instruction, a misaligned or faulting access) ends the run.
#[cfg(target_arch = "riscv32")]
#[unsafe(export_name = "ExceptionHandler")]
fn exception_handler(frame: &riscv_rt::TrapFrame) -> ! {
    hprintln!(
        "trap: mcause {:#x} mepc {:#x} ra {:#x}",
        riscv::register::mcause::read().bits(),
        riscv::register::mepc::read(),
        frame.ra
    );
    exit(99)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("panic: {}", info);
    exit(101)
}
