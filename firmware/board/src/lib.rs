//! Board support for the firmware checks: semihosting exit with a status, an instruction meter
//! that counts instructions under QEMU `-icount`, and a painted-stack high-water mark per step.
//!
//! On Arm the meter reads the SysTick: under `-icount shift=N` QEMU advances virtual time by
//! `2^N` ns per guest instruction, and the SysTick counts core clock ticks of that virtual time,
//! so ticks are proportional to instructions. On RISC-V it reads `minstret`, which QEMU derives
//! from the same instruction count. The ratio is measured (1000 NOPs) rather than assumed, so the
//! same code serves every board.
#![no_std]
#![deny(missing_docs, missing_debug_implementations)]

use langevin_scenarios::cost::{Meter, metered_nothing};

#[cfg(not(target_arch = "riscv32"))]
mod arch {
    use core::sync::atomic::{Ordering, compiler_fence};
    use cortex_m::peripheral::{SYST, syst::SystClkSource};

    pub use cortex_m_rt::entry;
    pub use cortex_m_semihosting::hprintln;

    /// Semihosting call with a parameter block (or, for `SYS_WRITE0`, the text).
    pub fn semihosting<T>(op: usize, block: &T) {
        // SAFETY: a semihosting call with a valid parameter block.
        unsafe {
            cortex_m_semihosting::syscall(op, block);
        }
    }

    /// Traps (after an exit that returned: a board without a debugger).
    pub fn trap() -> ! {
        cortex_m::asm::udf()
    }

    /// Starts the 24-bit SysTick as a free-running down-counter on the core clock, no
    /// interrupt.
    pub fn start_counter() {
        // SAFETY: the SysTick is used by this module alone.
        let mut syst = unsafe { cortex_m::Peripherals::steal() }.SYST;
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(0x00FF_FFFF);
        syst.clear_current();
        syst.disable_interrupt();
        syst.enable_counter();
    }

    #[inline(always)]
    pub fn now() -> u32 {
        compiler_fence(Ordering::SeqCst);
        let t = SYST::get_current();
        compiler_fence(Ordering::SeqCst);
        t
    }

    /// Ticks from `from` to `to` of the down-counter.
    #[inline(always)]
    pub fn elapsed(from: u32, to: u32) -> u32 {
        from.wrapping_sub(to) & 0x00FF_FFFF
    }

    #[inline(always)]
    pub fn stack_pointer() -> u32 {
        cortex_m::register::msp::read()
    }
}

#[cfg(target_arch = "riscv32")]
mod arch {
    use core::sync::atomic::{Ordering, compiler_fence};

    pub use riscv_rt::entry;
    pub use riscv_semihosting::hprintln;

    /// Semihosting call with a parameter block (or, for `SYS_WRITE0`, the text).
    pub fn semihosting<T>(op: usize, block: &T) {
        // SAFETY: a semihosting call with a valid parameter block.
        unsafe {
            riscv_semihosting::syscall(op, block);
        }
    }

    /// Traps (after an exit that returned: a board without a debugger).
    pub fn trap() -> ! {
        loop {
            riscv::asm::wfi();
        }
    }

    /// `minstret` runs from reset; nothing to start.
    pub fn start_counter() {}

    #[inline(always)]
    pub fn now() -> u32 {
        compiler_fence(Ordering::SeqCst);
        let t = riscv::register::minstret::read() as u32;
        compiler_fence(Ordering::SeqCst);
        t
    }

    /// Ticks from `from` to `to` of the up-counter.
    #[inline(always)]
    pub fn elapsed(from: u32, to: u32) -> u32 {
        to.wrapping_sub(from)
    }

    #[inline(always)]
    pub fn stack_pointer() -> u32 {
        let sp: u32;
        // SAFETY: reads the stack pointer register only.
        unsafe {
            core::arch::asm!("mv {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }
}

use arch::{elapsed, now};
pub use arch::{entry, hprintln, start_counter};

/// The board this image was built for (from the target).
pub const BOARD: &str = env!("LANGEVIN_BOARD");

/// Ends the program: QEMU exits with `code` as its process status (semihosting
/// `SYS_EXIT_EXTENDED`; the plain `SYS_EXIT` reports only 0 or 1 on 32-bit Arm and RISC-V).
pub fn exit(code: u32) -> ! {
    // ADP_Stopped_ApplicationExit and the status.
    arch::semihosting(0x20, &[0x20026, code]);
    // Not reached under QEMU; on a debugger-less board, trap.
    arch::trap()
}

/// Prints `label`, a space, `n` in decimal and a line break on the host's console (semihosting
/// `SYS_WRITE0`), with no formatting machinery: for images whose size is the point.
pub fn print_number(label: &[u8], n: u32) {
    let mut text = [0u8; 48];
    let mut len = 0;
    for (slot, &b) in text.iter_mut().zip(label.iter().take(32)) {
        *slot = b;
        len += 1;
    }
    let mut digits = [0u8; 10];
    let (mut count, mut v) = (0, n);
    loop {
        if let Some(d) = digits.get_mut(count) {
            *d = b'0' + (v % 10) as u8;
        }
        count += 1;
        v /= 10;
        if v == 0 || count == digits.len() {
            break;
        }
    }
    let tail = core::iter::once(b' ')
        .chain(digits.iter().take(count).rev().copied())
        .chain(core::iter::once(b'\n'));
    for b in tail {
        if let Some(slot) = text.get_mut(len) {
            *slot = b;
            len += 1;
        }
    }
    // The last byte stays 0: the text ends there at the latest.
    if let Some(last) = text.last_mut() {
        *last = 0;
    }
    arch::semihosting(0x04, &text);
}

/// Bytes below the stack pointer painted by [`stack_high_water`].
pub const STACK_WINDOW: u32 = 4 * 1024;

unsafe extern "C" {
    /// The top of the stack (the runtime's linker script).
    static _stack_start: u32;
}

/// Runs `run` and returns its result with the program's stack high-water mark in bytes: from
/// the top of the stack (so the frames of the start-up code and of the caller count) to the
/// lowest word `run` wrote within [`STACK_WINDOW`] bytes below the stack pointer.
#[inline(always)]
pub fn stack_high_water<T>(run: impl FnOnce() -> T) -> (T, u32) {
    stack_high_water_in(STACK_WINDOW, run)
}

/// [`stack_high_water`] with `window` bytes painted below the stack pointer (for a run whose
/// buffers live on the stack).
#[inline(always)]
pub fn stack_high_water_in<T>(window: u32, run: impl FnOnce() -> T) -> (T, u32) {
    let sp = arch::stack_pointer() & !3;
    let bottom = sp - window;
    paint(bottom, sp);
    let out = run();
    let p = lowest_written(bottom, sp);
    let top = (&raw const _stack_start) as u32 & !7;
    (out, top.saturating_sub(p))
}

/// Paints the memory from `bottom` up to the stack pointer `sp`.
#[inline(always)]
fn paint(bottom: u32, sp: u32) {
    let mut p = bottom;
    while p < sp {
        // SAFETY: the window lies in RAM below the stack pointer, in memory no live frame uses
        // (no interrupt is enabled); painting is how the high-water mark is found.
        unsafe { core::ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
}

/// The lowest address from `from` up to the stack pointer `sp` that no longer holds the paint
/// (`sp` if none).
#[inline(always)]
fn lowest_written(from: u32, sp: u32) -> u32 {
    let mut p = from;
    // SAFETY: reads of memory below the stack pointer, painted by the caller (or by the outer
    // meter a meter runs inside).
    while p < sp && unsafe { core::ptr::read_volatile(p as *const u32) } == PAINT {
        p += 4;
    }
    p
}

/// How counter ticks map to instructions on this board and emulator setting.
#[derive(Clone, Copy, Debug)]
pub struct Calibration {
    /// Ticks taken by 1000 NOPs beyond an empty measurement.
    pub ticks_per_1000: u32,
    /// Ticks an empty metered call reads (subtracted from every measurement).
    pub overhead: u32,
}

impl Calibration {
    /// Measures both constants.
    pub fn measure() -> Self {
        let t0 = now();
        let t1 = now();
        nops_1000();
        let t2 = now();
        let empty = elapsed(t0, t1);
        let nops = elapsed(t1, t2);
        let mut m = SysTickMeter::new(Calibration {
            ticks_per_1000: 1000,
            overhead: 0,
        });
        let mut x = 0u32;
        m.start();
        metered_nothing(&mut x);
        m.stop();
        Self {
            ticks_per_1000: nops.saturating_sub(empty).max(1),
            overhead: m.max_ticks,
        }
    }

    /// Instructions for `ticks` ticks of a metered call.
    pub fn instructions(&self, ticks: u64) -> u64 {
        ticks.saturating_sub(u64::from(self.overhead)) * 1000 / u64::from(self.ticks_per_1000)
    }
}

#[inline(never)]
fn nops_1000() {
    // SAFETY: NOPs only.
    unsafe {
        core::arch::asm!(
            ".rept 1000",
            "nop",
            ".endr",
            options(nomem, nostack, preserves_flags)
        );
    }
}

/// Bytes below the stack pointer painted before each measured call.
pub const PAINT_WINDOW: u32 = 8 * 1024;
/// The window of [`SysTickMeter::whole`], for a whole run measured as one call.
pub const WHOLE_WINDOW: u32 = 16 * 1024;
const PAINT: u32 = 0xCCCC_CCCC;

/// A [`Meter`] that records counter ticks and the stack high-water mark of every call.
#[derive(Debug)]
pub struct SysTickMeter {
    cal: Calibration,
    t0: u32,
    sp: u32,
    /// Calls measured.
    pub calls: u32,
    /// Sum of ticks over all calls.
    pub ticks: u64,
    /// The largest ticks of one call.
    pub max_ticks: u32,
    /// The most stack one call used, in bytes (the whole window means at least that).
    pub max_stack: u32,
    /// Bytes painted below the stack pointer.
    window: u32,
    /// The lowest address of the memory known painted (by this meter, or by the outer meter
    /// it runs inside); `None` before any painting.
    painted: Option<u32>,
    /// The lowest address found written, by a call or by the code between calls.
    deepest: u32,
}

impl SysTickMeter {
    /// An empty meter.
    pub fn new(cal: Calibration) -> Self {
        Self {
            cal,
            t0: 0,
            sp: 0,
            calls: 0,
            ticks: 0,
            max_ticks: 0,
            max_stack: 0,
            window: PAINT_WINDOW,
            painted: None,
            deepest: u32::MAX,
        }
    }

    /// A meter for a whole run measured as one call: it paints [`WHOLE_WINDOW`] bytes.
    pub fn whole(cal: Calibration) -> Self {
        Self {
            window: WHOLE_WINDOW,
            ..Self::new(cal)
        }
    }

    /// A per-call meter for a run that `outer` measures whole: see
    /// [`stop_around`](Self::stop_around). (Made before `outer` has started, it knows of no
    /// painted memory and counts only what it sees from its first call on.)
    pub fn inside(outer: &Self) -> Self {
        Self {
            painted: (outer.sp != 0).then(|| outer.sp - outer.window),
            ..Self::new(outer.cal)
        }
    }

    /// Stops a whole-run meter around a run whose calls `inner` measured. Painting before each
    /// call hides from this meter what the code before that call wrote within the call's
    /// window; `inner` read that memory before painting it, so its deepest address counts.
    pub fn stop_around(&mut self, inner: &Self) {
        self.stop();
        if inner.deepest < self.sp {
            self.max_stack = self.max_stack.max(self.sp - inner.deepest);
        }
    }

    /// Mean instructions per call.
    pub fn mean_instructions(&self) -> u64 {
        if self.calls == 0 {
            return 0;
        }
        self.cal.instructions(self.ticks / u64::from(self.calls))
    }

    /// Instructions of the most expensive call.
    pub fn max_instructions(&self) -> u64 {
        self.cal.instructions(u64::from(self.max_ticks))
    }
}

impl Meter for SysTickMeter {
    #[inline(always)]
    fn start(&mut self) {
        let sp = arch::stack_pointer() & !3;
        let bottom = sp - self.window;
        // What was written since the memory was painted (by the previous call and the code
        // after it, or before the first call), before painting hides it.
        if let Some(painted) = self.painted {
            self.deepest = self.deepest.min(lowest_written(bottom.max(painted), sp));
        }
        self.painted = Some(self.painted.map_or(bottom, |p| p.min(bottom)));
        self.sp = sp;
        paint(bottom, sp);
        self.t0 = now();
    }

    #[inline(always)]
    fn stop(&mut self) {
        let t1 = now();
        let d = elapsed(self.t0, t1);
        self.calls += 1;
        self.ticks += u64::from(d);
        self.max_ticks = self.max_ticks.max(d);
        let p = lowest_written(self.sp - self.window, self.sp);
        self.deepest = self.deepest.min(p);
        self.max_stack = self.max_stack.max(self.sp - p);
    }
}

/// Runs the large RBM's pinned DMALA run ([`langevin_scenarios::large`]) with weights `w`
/// (`format` names their storage) and prints its figures: instructions of the chain's start
/// and per step (mean and largest), flips, the stack high-water mark of the whole run and the
/// golden check. Exits 0 on a match, 2 on a mismatch, 3 if a step may exceed the counter's
/// range (run with a smaller `-icount` shift), 6 if the run failed.
pub fn large_rbm<E: langevin_core::models::Weight>(format: &str, w: &[E]) -> ! {
    use langevin_scenarios::large::{LARGE_PIN, LARGE_SEED, LARGE_STEPS, run_large_rbm};
    start_counter();
    let cal = Calibration::measure();
    // The 24-bit counter wraps after this many instructions; keep every call under half of it.
    let range = cal.instructions(0x00FF_FFFF);
    hprintln!(
        "large RBM 784x500, W in {}: board {}, {} ticks per 1000 instructions, counter range {} instructions",
        format,
        BOARD,
        cal.ticks_per_1000,
        range
    );
    let (mut init, mut step) = (SysTickMeter::new(cal), SysTickMeter::new(cal));
    let (run, stack) = stack_high_water_in(64 * 1024, || {
        run_large_rbm(w, LARGE_SEED, LARGE_STEPS, &mut init, &mut step)
    });
    let Ok(run) = run else {
        hprintln!("run failed");
        exit(6)
    };
    hprintln!(
        "start (U and grad U from scratch): {} instructions",
        init.max_instructions()
    );
    hprintln!(
        "step: mean {} instructions, largest {}, over {} steps ({} accepted, {} coordinates flipped)",
        step.mean_instructions(),
        step.max_instructions(),
        step.calls,
        run.accepted,
        run.flips
    );
    hprintln!(
        "stack high-water {} B (a step alone: {} B beyond its caller's frame)",
        stack,
        step.max_stack
    );
    let ok = run.hashes == LARGE_PIN;
    hprintln!(
        "golden state {:#018x} log-density {:#018x} {}",
        run.hashes.state,
        run.hashes.log_density,
        if ok { "ok" } else { "MISMATCH" }
    );
    if init.max_instructions().max(step.max_instructions()) > range / 2 {
        hprintln!("a call may exceed the counter's range: use a smaller -icount shift");
        exit(3)
    }
    exit(if ok { 0 } else { 2 })
}
