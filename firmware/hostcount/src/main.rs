//! Runs step-cost cases on the host so that `valgrind --tool=callgrind
//! --toggle-collect='*metered_step*'` counts the instructions of the step calls alone.
//!
//! `langevin-hostcount list` prints index, kernel, baseline index, bounded or info, and name; `langevin-hostcount INDEX STEPS`
//! runs one case and prints its outcome.

use langevin_scenarios::cost::{COST_CASES, NoMeter, run_case};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [cmd] if cmd == "list" => {
            for (i, case) in COST_CASES.iter().enumerate() {
                let bounded = if case.is_bounded() { "bounded" } else { "info" };
                println!(
                    "{i}\t{}\t{}\t{bounded}\t{}",
                    case.kernel.name(),
                    case.baseline,
                    case.name
                );
            }
            ExitCode::SUCCESS
        }
        [index, steps] => {
            let (Ok(index), Ok(steps)) = (index.parse::<usize>(), steps.parse::<u32>()) else {
                eprintln!("usage: langevin-hostcount list | INDEX STEPS");
                return ExitCode::from(2);
            };
            let Some(case) = COST_CASES.get(index) else {
                eprintln!("no case {index}");
                return ExitCode::from(2);
            };
            match run_case(case, steps, &mut NoMeter) {
                Ok(out) => {
                    println!(
                        "{}\t{}\tsteps={} accepted={} flips={}",
                        case.kernel.name(),
                        case.name,
                        out.steps,
                        out.accepted,
                        out.flips
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{}: {e}", case.name);
                    ExitCode::from(1)
                }
            }
        }
        _ => {
            eprintln!("usage: langevin-hostcount list | INDEX STEPS");
            ExitCode::from(2)
        }
    }
}
