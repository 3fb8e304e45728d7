//! `langevin sdp`: the diagonal SDP `min Σ d_i s.t. d ≥ 0, W + diag(d) ⪰ 0`.

use crate::CliError;
use crate::args::ReportArgs;
use clap::Args;
use langevin_std::io::npy::{NpyData, read_matrix_f64};
use langevin_std::io::{json_bytes, npy_bytes};
use langevin_std::sdp::{SdpOptions, SymmetricMatrix, solve_diagonal_sdp};
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `langevin sdp`.
#[derive(Args, Debug, Clone)]
pub struct SdpArgs {
    /// The symmetric matrix W (`.npy`, float64 or float32, square).
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
}

#[derive(Debug, Serialize)]
struct SdpSummary {
    dim: usize,
    trace: f64,
    lower_bound: f64,
    rel_gap: f64,
    lambda_min: f64,
    iterations: usize,
    converged: bool,
    wall_time_s: f64,
}

pub fn run(args: &SdpArgs) -> Result<(), CliError> {
    let (rows, cols, data) = read_matrix_f64(&args.matrix)
        .map_err(|e| CliError(format!("{}: {e}", args.matrix.display())))?;
    let w = SymmetricMatrix::from_row_major(rows, cols, &data)
        .map_err(|e| CliError(format!("{}: {e}", args.matrix.display())))?;
    let mut options = SdpOptions::default();
    options.rel_gap = args.rel_gap;
    let solution = solve_diagonal_sdp(&w, &options)?;
    let summary = SdpSummary {
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
    if !args.report.quiet {
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
