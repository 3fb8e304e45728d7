//! `langevin sdp`: the diagonal SDP `min Σ d_i s.t. d ≥ 0, W + diag(d) ⪰ 0`.

use crate::CliError;
use crate::args::{MemoryArgs, ReportArgs};
use crate::provenance::Provenance;
use clap::Args;
use langevin_std::io::npy::{NpyData, read_matrix_f64_within};
use langevin_std::io::{is_stdout, json_bytes, npy_bytes, prepare};
use langevin_std::sdp::{SdpOptions, SymmetricMatrix, solve_diagonal_sdp};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Arguments of `langevin sdp`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct SdpArgs {
    /// The symmetric matrix W (`.npy`, square, any numeric dtype: floats or integers).
    #[arg(long)]
    pub matrix: PathBuf,
    /// Stop once the certified relative duality gap is at most this.
    #[arg(long = "rel-gap", default_value_t = 1e-3)]
    pub rel_gap: f64,
    /// Write the diagonal d here (`.npy`, float64).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
    #[command(flatten)]
    pub memory: MemoryArgs,
}

#[derive(Debug, Serialize)]
struct SdpSummary {
    #[serde(flatten)]
    provenance: Provenance,
    matrix: String,
    requested_rel_gap: f64,
    dim: usize,
    trace: f64,
    lower_bound: f64,
    rel_gap: f64,
    lambda_min: f64,
    iterations: usize,
    converged: bool,
    wall_time_s: f64,
}

/// Refuses, before the solver starts, a matrix whose solution needs more memory than the cap:
/// the matrix as read, its symmetrised copy, the dense factorisation that certifies the bound
/// (each `n × n` doubles) and the mixing method's rank-`k` vectors (`k ≈ √(2n)`, twice).
fn check_solver_memory(memory: &MemoryArgs, rows: usize, cols: usize) -> Result<(), CliError> {
    let n = rows.max(cols) as u64;
    let square = [n, n, 8];
    let rank = (2.0 * n as f64).sqrt().ceil() as u64 + 4;
    memory.check(&[
        ("W as read", &square),
        ("its symmetric copy", &square),
        ("the certifying factorisation", &square),
        ("the mixing vectors", &[n, rank, 16]),
    ])
}

pub fn run(args: &SdpArgs) -> Result<(), CliError> {
    let outputs: Vec<(&str, &Path)> = [("--out", &args.out), ("--summary", &args.report.summary)]
        .into_iter()
        .filter_map(|(flag, p)| Some((flag, p.as_deref()?)))
        .collect();
    // Held until the outputs are written: a second run on either is refused.
    let _outputs = prepare(&[("--matrix", args.matrix.as_path())], &outputs)?;
    let quiet = args.report.quiet || outputs.iter().any(|(_, p)| is_stdout(p));
    let budget = args.memory.budget();
    let (rows, cols, data) =
        read_matrix_f64_within(&args.matrix, &budget).map_err(|e| match e {
            // Refusals name the file themselves.
            langevin_std::io::npy::NpyError::Input(e) => CliError(e.to_string()),
            e => CliError(format!("{}: {e}", args.matrix.display())),
        })?;
    check_solver_memory(&args.memory, rows, cols)?;
    let w = SymmetricMatrix::from_row_major(rows, cols, &data)
        .map_err(|e| CliError(format!("{}: {e}", args.matrix.display())))?;
    let mut options = SdpOptions::default();
    options.rel_gap = args.rel_gap;
    let solution = solve_diagonal_sdp(&w, &options)?;
    let summary = SdpSummary {
        provenance: Provenance::new(Some(&args.matrix)),
        matrix: args.matrix.display().to_string(),
        requested_rel_gap: args.rel_gap,
        dim: rows,
        trace: solution.trace,
        lower_bound: solution.lower_bound,
        rel_gap: solution.rel_gap,
        lambda_min: solution.lambda_min,
        iterations: solution.iterations,
        converged: solution.converged,
        wall_time_s: solution.wall_time.as_secs_f64(),
    };
    let d_bytes = npy_bytes(&[rows], &NpyData::F64(solution.d.clone()))?;
    let summary_bytes = json_bytes(&summary)?;
    args.report
        .write(args.out.as_deref(), d_bytes, summary_bytes)?;
    if !quiet {
        println!("dim                 {}", summary.dim);
        println!("trace of D          {:.9}", summary.trace);
        println!(
            "certified bound     {:.9} (relative gap {:.2e})",
            summary.lower_bound, summary.rel_gap
        );
        println!(
            "λ_min(W + diag d)   ≥ {:.3e} (certified)",
            summary.lambda_min
        );
        println!(
            "iterations          {} sweeps{}",
            summary.iterations,
            if summary.converged {
                ""
            } else {
                " (gap not reached)"
            }
        );
        println!("time                {:.3} s", summary.wall_time_s);
    }
    Ok(())
}
