//! Side-by-side heat maps of sampled frequencies and a target.

use std::path::Path;

use super::axes::{FRAME, INK, MUTED, WHITE, format_ticks, format_value, nice_ticks, viridis};
use super::raster::{Canvas, text_height, text_width};
use super::{DataError, PlotError, draw_title, fitting_scale};

/// Largest panel side in pixels; larger grids are averaged down, smaller ones enlarged.
const PANEL: usize = 420;

/// One axis of a heat map in the model's units: cell `k` of the grid covers the values
/// `first + k·per_cell … first + (k+1)·per_cell − 1` (a lattice pooled into blocks of
/// `per_cell` values), and the ticks name values, not cell numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct GridAxis {
    /// What the axis shows (`x_1`, `column j`).
    pub label: String,
    /// The value at the start of the first cell.
    pub first: f64,
    /// The last value shown.
    pub last: f64,
    /// Values per cell (1: one cell per value).
    pub per_cell: f64,
}

impl GridAxis {
    /// Cell numbers `0 … cells − 1`, one value per cell.
    pub fn cells(label: &str, cells: usize) -> Self {
        Self::values(label, cells, 1)
    }

    /// The values `0 … values − 1` pooled into cells of `per_cell` values.
    pub fn values(label: &str, values: usize, per_cell: usize) -> Self {
        Self {
            label: label.to_string(),
            first: 0.0,
            last: values.saturating_sub(1) as f64,
            per_cell: per_cell.max(1) as f64,
        }
    }

    /// The tick values (in the axis's units) and their labels: about five round values from
    /// `first` to `last`.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        let (ticks, step) = nice_ticks(self.first, self.last, 5, true);
        let (labels, _) = format_ticks(&ticks, step);
        ticks.into_iter().zip(labels).collect()
    }

    /// The offset in pixels of value `v`'s centre on a panel of `cells` cells over `pixels`.
    fn offset(&self, v: f64, cells: usize, pixels: i64) -> i64 {
        ((v - self.first + 0.5) / self.per_cell * pixels as f64 / cells as f64) as i64
    }
}

/// What a pair of heat maps shows besides its data: the title and both axes.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatmapSpec {
    /// The title at the top.
    pub title: String,
    /// The vertical axis (the grid's rows, top to bottom).
    pub rows: GridAxis,
    /// The horizontal axis (the grid's columns, left to right).
    pub cols: GridAxis,
}

impl HeatmapSpec {
    /// The legend entries printed on the picture: the two panels' headings and the colour
    /// bar's label.
    pub fn legend() -> [&'static str; 3] {
        [SAMPLED_HEADING, TARGET_HEADING, COLOUR_CAPTION]
    }
}

const SAMPLED_HEADING: &str = "Sampled frequency";
const TARGET_HEADING: &str = "Target";
const COLOUR_CAPTION: &str = "Colour: P(cell), the probability of a cell; one scale for both maps";

/// Writes a PNG with two heat maps side by side over an `n × m` grid: the empirical visit
/// frequencies of a sampler (`visited_counts`, any non-negative weights, normalised here) and
/// the target density (`target`, non-negative and unnormalised, e.g. `exp(U)` on the grid),
/// on one shared viridis colour scale with a colour bar, and the total variation distance
/// between the two printed under the title.
///
/// Cell `(i, j)` is `values[i * m + j]`: row `i` runs top to bottom and column `j` left to
/// right. Each panel is at most 420 pixels a side: grids up to 420 cells a side are enlarged by
/// the whole factor `z = ⌊420 / max(n, m)⌋` (panels `m·z × n·z` pixels), larger ones are shrunk
/// with each pixel showing the mean of the cells it covers, so the colours always read as
/// probability per cell. The picture is `2·(panel width) + 360` pixels wide (at least 640) and
/// `panel height + 212` high (a caption under the maps explains the colours).
///
/// # Errors
///
/// [`PlotError::Input`] if `n` or `m` is zero, a slice is not `n · m` long, a value is negative
/// or not finite, or a map sums to zero; [`PlotError::Io`] and [`PlotError::Encode`] from
/// writing the file.
pub fn heatmap_pair(
    path: impl AsRef<Path>,
    title: &str,
    visited_counts: &[f64],
    target: &[f64],
    n: usize,
    m: usize,
) -> Result<(), PlotError> {
    let spec = HeatmapSpec {
        title: title.to_string(),
        rows: GridAxis::cells("row i", n),
        cols: GridAxis::cells("column j", m),
    };
    heatmap_pair_with(path, &spec, visited_counts, target, n, m)
}

/// [`heatmap_pair`] with the axes of `spec`: ticks in the model's units (lattice values, also
/// when cells pool blocks of values) and its axis labels.
///
/// # Errors
///
/// As [`heatmap_pair`].
pub fn heatmap_pair_with(
    path: impl AsRef<Path>,
    spec: &HeatmapSpec,
    visited_counts: &[f64],
    target: &[f64],
    n: usize,
    m: usize,
) -> Result<(), PlotError> {
    let title = spec.title.as_str();
    if n == 0 || m == 0 {
        return Err(PlotError::Input(DataError::EmptyGrid));
    }
    let cells = n
        .checked_mul(m)
        .ok_or(PlotError::Input(DataError::GridTooLarge))?;
    let sampled = normalised(visited_counts, cells, "visited_counts")?;
    let target = normalised(target, cells, "target")?;
    let tv = 0.5
        * sampled
            .iter()
            .zip(&target)
            .map(|(a, b)| (a - b).abs())
            .sum::<f64>();

    // Small grids are enlarged by a whole factor (crisp cells); large ones are shrunk to 420
    // pixels a side, each pixel showing the mean probability of the cells it covers, so the
    // colour bar reads "probability per cell" in both cases.
    let side = n.max(m);
    let (pw, ph) = if side <= PANEL {
        let zoom = PANEL / side;
        (m * zoom, n * zoom)
    } else {
        ((m * PANEL).div_ceil(side), (n * PANEL).div_ceil(side))
    };
    let sampled_px = resample(&sampled, n, m, ph, pw);
    let target_px = resample(&target, n, m, ph, pw);
    let vmax = sampled_px
        .iter()
        .chain(&target_px)
        .copied()
        .fold(0.0, f64::max);
    let (pw, ph) = (pw as i64, ph as i64);

    let (left, top, gap, bar_gap, bar_w) = (84i64, 112i64, 90i64, 34i64, 22i64);
    let width = (left + pw + gap + pw + bar_gap + bar_w + 130) as usize;
    let height = (top + ph + 100) as usize;
    let mut canvas = Canvas::new(width.max(640), height, WHITE);
    draw_title(&mut canvas, title, 18);
    let note = format!("total variation distance {}", format_value(tv));
    let w = text_width(&note, 2);
    canvas.text((canvas.width() as i64 - w) / 2, 52, &note, 2, MUTED);

    let th = text_height(2);
    let panels = [
        (left, SAMPLED_HEADING, &sampled_px),
        (left + pw + gap, TARGET_HEADING, &target_px),
    ];
    for (x0, heading, values) in panels {
        canvas.text(x0, top - th - 10, heading, 2, INK);
        for (r, row) in values.chunks_exact(pw as usize).enumerate() {
            for (c, &v) in row.iter().enumerate() {
                let color = viridis(if vmax > 0.0 { v / vmax } else { 0.0 });
                canvas.fill_rect(x0 + c as i64, top + r as i64, 1, 1, color, 1.0);
            }
        }
        canvas.stroke_rect(x0 - 1, top - 1, pw + 2, ph + 2, FRAME);
        // Ticks at the centres of the values they name.
        for (v, label) in spec.cols.ticks() {
            let x = x0 + spec.cols.offset(v, m, pw);
            canvas.fill_rect(x, top + ph + 1, 1, 5, FRAME, 1.0);
            canvas.text(x - text_width(&label, 2) / 2, top + ph + 10, &label, 2, INK);
        }
        for (v, label) in spec.rows.ticks() {
            let y = top + spec.rows.offset(v, n, ph);
            canvas.fill_rect(x0 - 6, y, 5, 1, FRAME, 1.0);
            canvas.text(x0 - 10 - text_width(&label, 2), y - th / 2, &label, 2, INK);
        }
        let label = spec.cols.label.as_str();
        canvas.text(
            x0 + (pw - text_width(label, 2)) / 2,
            top + ph + 34,
            label,
            2,
            MUTED,
        );
    }
    let label = spec.rows.label.as_str();
    canvas.text_up(14, top + (ph - text_width(label, 2)) / 2, label, 2, MUTED);

    // Colour bar: probability per shown cell, 0 at the bottom.
    let bx = left + pw + gap + pw + bar_gap;
    for y in 0..ph {
        let t = 1.0 - y as f64 / (ph - 1).max(1) as f64;
        canvas.fill_rect(bx, top + y, bar_w, 1, viridis(t), 1.0);
    }
    canvas.stroke_rect(bx - 1, top - 1, bar_w + 2, ph + 2, FRAME);
    let (ticks, step) = nice_ticks(0.0, vmax, 5, false);
    let (labels, factor) = format_ticks(&ticks, step);
    for (&v, label) in ticks.iter().zip(&labels) {
        let y = top + ph - 1 - ((v / vmax) * (ph - 1) as f64).round() as i64;
        canvas.fill_rect(bx + bar_w + 1, y, 5, 1, FRAME, 1.0);
        canvas.text(bx + bar_w + 10, y - th / 2, label, 2, INK);
    }
    canvas.text(bx, top - th - 10, "P(cell)", 2, MUTED);
    let scale = fitting_scale(COLOUR_CAPTION, 2, canvas.width() as i64 - 24);
    let w = text_width(COLOUR_CAPTION, scale);
    canvas.text(
        (canvas.width() as i64 - w) / 2,
        top + ph + 64,
        COLOUR_CAPTION,
        scale,
        MUTED,
    );
    if let Some(factor) = factor {
        canvas.text(bx + bar_w + 10, top + ph + 10, &factor, 2, MUTED);
    }
    canvas.save(path.as_ref())
}

/// `values / sum(values)` after checking length, sign and finiteness.
fn normalised(values: &[f64], cells: usize, name: &'static str) -> Result<Vec<f64>, PlotError> {
    if values.len() != cells {
        return Err(PlotError::Input(DataError::CellCount {
            name,
            len: values.len(),
            expected: cells,
        }));
    }
    if values.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Err(PlotError::Input(DataError::NegativeOrNotFinite { name }));
    }
    let sum: f64 = values.iter().sum();
    if sum <= 0.0 {
        return Err(PlotError::Input(DataError::SumsToZero { name }));
    }
    Ok(values.iter().map(|v| v / sum).collect())
}

/// The `n × m` grid shown on `rows × cols` pixels: pixel `(r, c)` takes the mean of the cells
/// it covers (at least one), which for an enlargement is the one cell under it.
fn resample(values: &[f64], n: usize, m: usize, rows: usize, cols: usize) -> Vec<f64> {
    let span = |p: usize, cells: usize, pixels: usize| {
        let a = p * cells / pixels;
        let b = ((p + 1) * cells / pixels).max(a + 1).min(cells);
        a..b
    };
    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let rs = span(r, n, rows);
        for c in 0..cols {
            let cs = span(c, m, cols);
            let count = (rs.len() * cs.len()) as f64;
            let sum: f64 = rs
                .clone()
                .map(|i| values[i * m + cs.start..i * m + cs.end].iter().sum::<f64>())
                .sum();
            out.push(sum / count);
        }
    }
    out
}
