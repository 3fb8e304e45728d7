//! `--plot`: the trace and autocorrelation of the run's statistic, and where the model allows,
//! a heat map of a 2-D ordinal model or a grid of sampled RBM images.
//!
//! Pictures are rendered to memory (through a temporary file) so that they are written with
//! the other outputs, all or none.

use super::spec::RunSpec;
use crate::CliError;
use langevin_std::binary::{BinaryModel, BinaryRun, Statistic};
use langevin_std::diagnostics::DiscreteValue;
use langevin_std::labels::{LabelDomain, LabelModel, LabelRun};
use langevin_std::plot::{PlotError, heatmap_pair, image_grid, trace_and_acf};
use std::path::{Path, PathBuf};

/// Largest lattice side drawn as a heat map (`S²` cells are priced by the model).
const MAX_HEATMAP_SIDE: usize = 2048;
/// Images per chain and most chains in the RBM grid.
const IMAGES_PER_CHAIN: usize = 8;
const IMAGE_CHAINS: usize = 4;

/// Renders a picture through a temporary file next to `path` and returns its bytes.
fn render(
    path: &Path,
    draw: impl FnOnce(&Path) -> Result<(), PlotError>,
) -> Result<(PathBuf, Vec<u8>), CliError> {
    let name = path
        .file_name()
        .ok_or_else(|| CliError(format!("{}: not a file name", path.display())))?;
    let tmp = path.with_file_name(format!(".{}.render", name.to_string_lossy()));
    let outcome = draw(&tmp).map_err(|e| CliError(format!("{}: {e}", path.display())));
    let bytes = outcome.and_then(|()| {
        std::fs::read(&tmp).map_err(|e| CliError(format!("{}: {e}", path.display())))
    });
    let _ = std::fs::remove_file(&tmp);
    Ok((path.to_path_buf(), bytes?))
}

/// The trace and autocorrelation of the distance statistic, one series per chain.
fn trace<T: DiscreteValue>(
    path: &Path,
    title: &str,
    chains: &[&[T]],
    dim: usize,
    states: usize,
    statistic: Statistic,
    seed: u64,
) -> Result<(PathBuf, Vec<u8>), CliError> {
    let reference: Vec<T> = Statistic::reference(dim, states, seed)?;
    let series: Vec<Vec<f64>> = chains
        .iter()
        .map(|c| statistic.series(c, &reference))
        .collect();
    let kept = series.first().map_or(0, Vec::len);
    let max_lag = (kept / 2).clamp(1, 200);
    render(path, |p| trace_and_acf(p, title, &series, max_lag))
}

fn title(spec: &RunSpec, what: &str) -> String {
    let sampler = spec.sampler.name();
    let model = spec.model.file_name().map_or_else(
        || spec.model.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    format!("{what}, {sampler} on {model}")
}

/// Pictures of a binary run.
pub fn binary(
    path: &Path,
    spec: &RunSpec,
    model: &BinaryModel,
    run: &BinaryRun,
) -> Result<Vec<(PathBuf, Vec<u8>)>, CliError> {
    let d = run.dim;
    let chains: Vec<&[u8]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    let mut files = vec![trace(
        path,
        &title(spec, "Hamming distance to a reference state"),
        &chains,
        d,
        2,
        Statistic::Hamming,
        spec.config.seed,
    )?];
    let side = (d as f64).sqrt().round() as usize;
    if matches!(model, BinaryModel::Rbm { .. }) && side * side == d && side >= 2 {
        let kept = run.chains.first().map_or(0, |c| c.draws.len() / d);
        let per_chain = IMAGES_PER_CHAIN.min(kept);
        let mut images: Vec<&[u8]> = Vec::new();
        for c in run.chains.iter().take(IMAGE_CHAINS) {
            for k in 0..per_chain {
                // Evenly spaced draws ending with the last one.
                let t = (k + 1) * kept / per_chain - 1;
                images.push(&c.draws[t * d..(t + 1) * d]);
            }
        }
        if !images.is_empty() {
            let out = path.with_extension("images.png");
            files.push(render(&out, |p| {
                image_grid(p, &images, side, side, per_chain.max(1))
            })?);
        }
    }
    Ok(files)
}

/// Pictures of a label run.
pub fn labels(
    path: &Path,
    spec: &RunSpec,
    model: &LabelModel,
    run: &LabelRun,
) -> Result<Vec<(PathBuf, Vec<u8>)>, CliError> {
    let (d, s) = (run.dim, run.states);
    let chains: Vec<&[u16]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    let what = match run.domain {
        LabelDomain::Ordinal => "L1 distance to a reference state",
        LabelDomain::Categorical => "Hamming distance to a reference state",
    };
    let mut files = vec![trace(
        path,
        &title(spec, what),
        &chains,
        d,
        s,
        run.statistic(),
        spec.config.seed,
    )?];
    if run.domain == LabelDomain::Ordinal && d == 2 && s <= MAX_HEATMAP_SIDE {
        let out = path.with_extension("heatmap.png");
        let heat = Heat::new(model.log_density_fn(), &chains, s);
        let what = title(spec, "Visits against the target");
        files.push(render(&out, |p| heat.draw(p, &what))?);
    }
    Ok(files)
}

/// Target cells per heat-map side before cells are pooled into blocks.
const HEATMAP_CELLS: usize = 90;

/// A 2-D ordinal model's visits and target on its `S × S` lattice, pooled into square blocks
/// of `block` values a side so that both maps stay readable (and their distance is not all
/// sampling noise) on wide lattices.
#[derive(Debug)]
pub struct Heat {
    /// Visit counts per block, `side × side`, row `x_0`, column `x_1`.
    pub counts: Vec<f64>,
    /// `Σ exp(U − max U)` per block.
    pub target: Vec<f64>,
    /// Blocks per side.
    pub side: usize,
    /// Lattice values per block side.
    pub block: usize,
}

impl Heat {
    /// Pools the draws of `chains` (pairs) and the target `u` over `{0..S−1}²`.
    pub fn new(mut u: impl FnMut(&[u16]) -> f64, chains: &[&[u16]], s: usize) -> Self {
        let block = s.div_ceil(HEATMAP_CELLS).max(1);
        let side = s.div_ceil(block);
        let cell = |a: usize, b: usize| (a / block) * side + b / block;
        let mut counts = vec![0.0; side * side];
        for chain in chains {
            for x in chain.chunks_exact(2) {
                counts[cell(usize::from(x[0]), usize::from(x[1]))] += 1.0;
            }
        }
        let log: Vec<f64> = (0..s * s)
            .map(|k| u(&[(k / s) as u16, (k % s) as u16]))
            .collect();
        let top = log.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut target = vec![0.0; side * side];
        for (k, v) in log.iter().enumerate() {
            target[cell(k / s, k % s)] += (v - top).exp();
        }
        Self {
            counts,
            target,
            side,
            block,
        }
    }

    /// A note for the title when cells are pooled.
    pub fn pooling(&self) -> String {
        if self.block > 1 {
            format!(" (blocks of {b}x{b} values)", b = self.block)
        } else {
            String::new()
        }
    }

    /// Writes the pair of maps.
    pub fn draw(&self, path: &Path, title: &str) -> Result<(), PlotError> {
        heatmap_pair(
            path,
            &format!("{title}{}", self.pooling()),
            &self.counts,
            &self.target,
            self.side,
            self.side,
        )
    }
}
