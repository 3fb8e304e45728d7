//! `--exact`: enumerate a small model and compare the sampled marginals with the exact ones.

use crate::CliError;
use langevin_std::binary::BinaryModel;
use langevin_std::core_kernels::{BinaryTarget, FlipMove};
use langevin_std::diagnostics::{
    DiscreteValue, Enumeration, empirical_marginals, enumerate, marginal_rmse,
};
use langevin_std::labels::LabelModel;

/// The most bits of state `--exact` enumerates: `d·log2(S) ≤ 24`, 16.8 million states.
const MAX_BITS: f64 = 24.0;

/// Fails unless a model of `d` coordinates over `S` values can be enumerated.
pub fn check_size(d: usize, s: usize) -> Result<(), CliError> {
    let bits = d as f64 * (s as f64).log2();
    if bits > MAX_BITS + 1e-9 {
        return Err(CliError(format!(
            "--exact needs d·log2(S) ≤ 24, this model has d = {d}, S = {s} ({bits:.1} bits)"
        )));
    }
    Ok(())
}

/// The exact law of a binary model. States are visited in odometer order and `U` is updated
/// through the model's incremental evaluation (two flips per state on average), so a model of
/// 24 bits takes seconds, not minutes.
pub fn binary(model: &BinaryModel) -> Result<Enumeration, CliError> {
    let d = model.dim();
    let mut cache = vec![0.0f64; model.cache_len()];
    let mut target = model
        .target(&mut cache)
        .map_err(|e| CliError(e.to_string()))?;
    let mut current = vec![0u8; d];
    let (mut grad, mut grad_new) = (vec![0.0f32; d], vec![0.0f32; d]);
    let mut u = match target.log_density_and_grad(&current, &mut grad) {
        Ok(u) => u,
        Err(e) => match e {},
    };
    let mut flipped: Vec<u32> = Vec::with_capacity(d);
    Ok(enumerate::<u8, _>(d, 2, |x| {
        flipped.clear();
        flipped.extend(
            x.iter()
                .zip(&current)
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(i, _)| i as u32),
        );
        if !flipped.is_empty() {
            let mv = FlipMove {
                from: &current,
                to: x,
                flipped: &flipped,
                from_log_density: u,
                from_grad: &grad,
            };
            u = match target.log_density_and_grad_after(&mv, &mut grad_new) {
                Ok(u) => u,
                Err(e) => match e {},
            };
            target.commit();
            current.copy_from_slice(x);
            std::mem::swap(&mut grad, &mut grad_new);
        }
        u
    })?)
}

/// The exact law of a label model.
pub fn labels(model: &LabelModel) -> Result<Enumeration, CliError> {
    Ok(enumerate::<u16, _>(
        model.dim(),
        model.states(),
        model.log_density_fn(),
    )?)
}

/// RMSE of the pooled empirical marginals `P̂(x_i = k)` against the exact ones.
pub fn rmse<T: DiscreteValue>(
    exact: &Enumeration,
    chains: &[&[T]],
    d: usize,
    s: usize,
) -> Result<f64, CliError> {
    let sampled = empirical_marginals(chains, d, s)?;
    Ok(marginal_rmse(&sampled, exact.marginals())?)
}
