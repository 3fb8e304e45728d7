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
use langevin_std::plot::{
    GridAxis, HeatmapSpec, PlotError, TraceSpec, heatmap_pair_with, image_grid_titled,
    trace_and_acf,
};
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
    Ok((path.to_path_buf(), langevin_std::io::render(path, draw)?))
}

/// The pictures `--plot PATH` may write beside `PATH`: a 2-D ordinal model's heat map and an
/// RBM's image grid.
pub fn companions(path: &Path) -> Vec<PathBuf> {
    vec![heatmap_path(path), images_path(path)]
}

fn heatmap_path(path: &Path) -> PathBuf {
    path.with_extension("heatmap.png")
}

fn images_path(path: &Path) -> PathBuf {
    path.with_extension("images.png")
}

/// What the trace's horizontal axis counts: kept draws, one every `thin` steps after `burn_in`
/// burn-in steps.
pub fn kept_draw_label(thin: u64, burn_in: u64) -> String {
    let every = match thin {
        0 | 1 => "every step".to_string(),
        t => format!("every {}", ordinal(t)),
    };
    let every = if thin > 1 {
        format!("{every} step")
    } else {
        every
    };
    format!("kept draw ({every} after {burn_in} burn-in steps)")
}

/// `2nd`, `3rd`, `11th`, `21st`, …
fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The trace picture's title and axes for a run of `spec` on the statistic `what`.
pub fn trace_spec(spec: &RunSpec, what: &str, burn_in_taken: u64) -> TraceSpec {
    TraceSpec {
        title: title(spec, what),
        x_label: kept_draw_label(spec.config.thin, burn_in_taken),
        y_label: what.trim_end_matches(" to a reference state").to_string(),
    }
}

/// The trace and autocorrelation of the distance statistic, one series per chain.
fn trace<T: DiscreteValue>(
    path: &Path,
    spec: &TraceSpec,
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
    render(path, |p| trace_and_acf(p, spec.clone(), &series, max_lag))
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
    let burn_in = run.chains.first().map_or(0, |c| c.burn_in_stats.steps);
    let mut files = vec![trace(
        path,
        &trace_spec(spec, "Hamming distance to a reference state", burn_in),
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
            let out = images_path(path);
            let (grid_title, caption) = image_titles(spec, run.chains.len(), per_chain);
            files.push(render(&out, |p| {
                image_grid_titled(
                    p,
                    &grid_title,
                    &caption,
                    &images,
                    side,
                    side,
                    per_chain.max(1),
                )
            })?);
        }
    }
    Ok(files)
}

/// The RBM image grid's title and caption: whose draws, and what its rows and columns are.
pub fn image_titles(spec: &RunSpec, chains: usize, per_chain: usize) -> (String, String) {
    let rows = match chains.min(IMAGE_CHAINS) {
        0 | 1 => "row: chain 1".to_string(),
        n => format!("rows: chains 1-{n}"),
    };
    (
        title(spec, "Sampled visible units"),
        format!("{rows}; columns: {per_chain} kept draws, the last on the right"),
    )
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
    let burn_in = run.chains.first().map_or(0, |c| c.burn_in_stats.steps);
    let mut files = vec![trace(
        path,
        &trace_spec(spec, what, burn_in),
        &chains,
        d,
        s,
        run.statistic(),
        spec.config.seed,
    )?];
    if run.domain == LabelDomain::Ordinal && d == 2 && s <= MAX_HEATMAP_SIDE {
        let out = heatmap_path(path);
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
    /// Lattice values per side, `S`.
    pub values: usize,
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
            values: s,
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

    /// The maps' title and axes: lattice values `x_0` (rows) and `x_1` (columns), whatever
    /// the pooling.
    pub fn spec(&self, title: &str) -> HeatmapSpec {
        HeatmapSpec {
            title: format!("{title}{}", self.pooling()),
            rows: GridAxis::values("x_0", self.values, self.block),
            cols: GridAxis::values("x_1", self.values, self.block),
        }
    }

    /// Writes the pair of maps.
    pub fn draw(&self, path: &Path, title: &str) -> Result<(), PlotError> {
        heatmap_pair_with(
            path,
            &self.spec(title),
            &self.counts,
            &self.target,
            self.side,
            self.side,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_map_axes_count_lattice_values() {
        // The 450-value lattice pools 5 × 5 blocks into 90 cells a side; its ticks still name
        // lattice values, up to 400, not block numbers up to 90.
        let chains: [&[u16]; 1] = [&[0, 0, 449, 449]];
        let heat = Heat::new(|_| 0.0, &chains, 450);
        assert_eq!((heat.side, heat.block), (90, 5));
        let spec = heat.spec("Visits");
        for axis in [&spec.rows, &spec.cols] {
            let ticks = axis.ticks();
            let top = ticks.last().unwrap().0;
            assert!((400.0..=449.0).contains(&top), "{ticks:?}");
            assert_eq!(ticks[0], (0.0, "0".to_string()));
        }
        assert_eq!(
            (spec.rows.label.as_str(), spec.cols.label.as_str()),
            ("x_0", "x_1")
        );
        assert!(spec.title.starts_with("Visits") && spec.title.contains("5x5"));
    }

    #[test]
    fn the_trace_axis_names_what_it_counts() {
        assert_eq!(
            kept_draw_label(1, 1000),
            "kept draw (every step after 1000 burn-in steps)"
        );
        assert_eq!(
            kept_draw_label(5, 0),
            "kept draw (every 5th step after 0 burn-in steps)"
        );
        assert_eq!(ordinal(2), "2nd");
        assert_eq!(ordinal(12), "12th");
        assert_eq!(ordinal(21), "21st");
        // Every band and line of the picture has a legend entry.
        let legend = TraceSpec::legend(3);
        assert_eq!(&legend[..3], ["chain 1", "chain 2", "chain 3"]);
        assert!(legend.iter().any(|l| l.contains("95% band")));
        assert!(legend.iter().any(|l| l.contains("zero")));
    }
}
