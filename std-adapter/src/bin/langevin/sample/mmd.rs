//! `--mmd`: the sampled draws of an RBM against block-Gibbs reference draws.

use crate::CliError;
use langevin_std::binary::{BinaryModel, BinaryRun};
use langevin_std::diagnostics::{log_mmd2_hamming, mmd2_hamming};
use langevin_std::models::RbmBlockGibbs;
use langevin_std::seeding::chain_rng;
use rand_core::Rng;
use serde::Serialize;

/// At most this many draws enter each side of the MMD (its cost is quadratic in them).
const MAX_DRAWS: usize = 2000;
/// Block-Gibbs sweeps discarded before the first reference draw.
const REFERENCE_BURN_IN: usize = 1000;
/// Block-Gibbs sweeps between reference draws.
const REFERENCE_THIN: usize = 5;

/// MMD² between the run's draws and reference draws, with the kernel `exp(−mean Hamming)`.
#[derive(Debug, Serialize)]
pub struct MmdReport {
    /// The biased (V-statistic) MMD².
    pub mmd2: f64,
    /// Its natural logarithm, as the discrete Langevin paper reports it.
    pub log_mmd2: f64,
    /// Draws of the run used (evenly spaced over all chains' kept draws).
    pub draws: usize,
    /// Reference draws: one block-Gibbs chain, burn-in 1000 sweeps, one draw every 5 sweeps.
    pub reference_draws: usize,
}

/// Compares `run` with block-Gibbs draws of the RBM `model`, using the random stream after the
/// run's chains (`chain_rng(seed, chains)`), so the report is reproducible.
pub fn rbm(model: &BinaryModel, run: &BinaryRun, seed: u64) -> Result<MmdReport, CliError> {
    let BinaryModel::Rbm { w, b, c, .. } = model else {
        return Err(CliError(
            "--mmd compares against block-Gibbs draws and needs an rbm model".into(),
        ));
    };
    let d = run.dim;
    let all = run.samples();
    let total = all.len() / d.max(1);
    if total == 0 {
        return Err(CliError("--mmd needs at least one kept draw".into()));
    }
    let n = total.min(MAX_DRAWS);
    let sampled: Vec<u8> = (0..n)
        .flat_map(|k| {
            let t = k * total / n;
            all[t * d..(t + 1) * d].iter().copied()
        })
        .collect();
    let mut gibbs = RbmBlockGibbs::new(w.clone(), b.clone(), c.clone())?;
    let mut rng = chain_rng(seed, run.chains.len());
    let mut x: Vec<u8> = (0..d)
        .map(|_| u8::from(rng.next_u32() >> 31 == 1))
        .collect();
    for _ in 0..REFERENCE_BURN_IN {
        gibbs.sweep(&mut x, &mut rng)?;
    }
    let mut reference = Vec::with_capacity(n * d);
    for _ in 0..n {
        for _ in 0..REFERENCE_THIN {
            gibbs.sweep(&mut x, &mut rng)?;
        }
        reference.extend_from_slice(&x);
    }
    Ok(MmdReport {
        mmd2: mmd2_hamming(&sampled, &reference, d)?,
        log_mmd2: log_mmd2_hamming(&sampled, &reference, d)?,
        draws: n,
        reference_draws: n,
    })
}
