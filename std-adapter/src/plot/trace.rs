//! Trace and autocorrelation panels.

use std::path::Path;

use super::axes::{self, FRAME, INK, MUTED, Panel, Scale, WHITE, padded, series_color};
use super::raster::{Canvas, text_height, text_width};
use super::{DataError, PlotError, draw_title};
use crate::diagnostics::{autocorrelation, ess};

const WIDTH: usize = 1000;
const HEIGHT: usize = 800;

/// What a trace-and-autocorrelation picture shows besides its data: the title and the trace's
/// axes.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSpec {
    /// The title at the top.
    pub title: String,
    /// What the trace's horizontal axis counts (`kept draw (every 5th step after 1000 burn-in
    /// steps)`, `evaluation`).
    pub x_label: String,
    /// What the trace's values are.
    pub y_label: String,
}

impl TraceSpec {
    /// A title with the default axes: `kept draw` against `value`.
    pub fn new(title: &str) -> Self {
        Self {
            title: title.to_string(),
            x_label: "kept draw".into(),
            y_label: "value".into(),
        }
    }

    /// Every legend entry the picture prints for `chains` chains: one per chain shown (at most
    /// eight, then `+k more`) above the trace, and the autocorrelation panel's band and line.
    pub fn legend(chains: usize) -> Vec<String> {
        let shown = chains.min(8);
        let mut out: Vec<String> = (1..=shown).map(|k| format!("chain {k}")).collect();
        if chains > shown {
            out.push(format!("+{} more", chains - shown));
        }
        out.extend(ACF_LEGEND.iter().map(|s| (*s).to_string()));
        out
    }
}

impl From<&str> for TraceSpec {
    /// [`TraceSpec::new`].
    fn from(title: &str) -> Self {
        Self::new(title)
    }
}

/// The autocorrelation panel's legend: the shaded band, then the grey line.
const ACF_LEGEND: [&str; 2] = [
    "95% band of white noise: +-1.96/sqrt(n)",
    "zero correlation",
];

/// Writes a PNG with two panels for a scalar statistic of one or more chains: the **trace**
/// (value against kept draw, one colour per chain) and the **autocorrelation** of each chain
/// for lags `0..=max_lag`, with the ±1.96/√n band of white noise shaded and the multi-chain
/// [`ess`] of the draws printed above it.
///
/// The picture is 1000 × 800 pixels. Long chains are drawn as per-pixel-column ranges, so a million draws plot as fast and as
/// clearly as a thousand. Non-finite draws are skipped in the trace; a chain that is constant
/// or not finite throughout has no autocorrelation curve.
///
/// # Errors
///
/// The title and the trace's axes are those of `spec`: a [`TraceSpec`], or a title alone
/// (`&str`) with the default axes of [`TraceSpec::new`]. Every band and line is explained in a
/// legend ([`TraceSpec::legend`]).
///
/// # Errors
///
/// [`PlotError::Input`] if there are no chains, every chain is empty, or no draw is finite;
/// [`PlotError::Io`] and [`PlotError::Encode`] from writing the file.
pub fn trace_and_acf(
    path: impl AsRef<Path>,
    spec: impl Into<TraceSpec>,
    series_per_chain: &[Vec<f64>],
    max_lag: usize,
) -> Result<(), PlotError> {
    let spec = spec.into();
    let title = spec.title.as_str();
    let longest = series_per_chain.iter().map(Vec::len).max().unwrap_or(0);
    if longest == 0 {
        return Err(PlotError::Input(DataError::NoDraws));
    }
    let finite = || {
        series_per_chain
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
    };
    let lo = finite().fold(f64::INFINITY, f64::min);
    let hi = finite().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return Err(PlotError::Input(DataError::NoFiniteDraws));
    }

    let mut canvas = Canvas::new(WIDTH, HEIGHT, WHITE);
    draw_title(&mut canvas, title, 18);
    let th = text_height(2);

    // Trace panel.
    let (y_lo, y_hi) = padded(lo, hi);
    let x_hi = (longest.max(2) - 1) as f64;
    let trace = Panel {
        left: 110,
        top: 100,
        width: WIDTH as i64 - 110 - 36,
        height: 260,
        x: Scale {
            lo: 0.0,
            hi: x_hi,
            log: false,
            integer: true,
        },
        y: Scale {
            lo: y_lo,
            hi: y_hi,
            log: false,
            integer: false,
        },
    };
    canvas.text(trace.left, trace.top - th - 12, "Trace", 2, INK);
    draw_legend(
        &mut canvas,
        series_per_chain.len(),
        trace.left + trace.width,
        trace.top - th - 12,
    );
    trace.draw_axes(&mut canvas, &spec.x_label, &spec.y_label, 2);
    for (k, chain) in series_per_chain.iter().enumerate() {
        draw_trace(&mut canvas, &trace, chain, series_color(k));
    }
    canvas.stroke_rect(trace.left, trace.top, trace.width, trace.height + 1, FRAME);

    // Autocorrelation panel.
    let acfs: Vec<Option<Vec<f64>>> = series_per_chain
        .iter()
        .map(|c| autocorrelation(c, max_lag).ok())
        .collect();
    let acf_lo = acfs
        .iter()
        .flatten()
        .flatten()
        .copied()
        .fold(0.0f64, f64::min);
    let shortest = series_per_chain
        .iter()
        .map(Vec::len)
        .filter(|&n| n > 0)
        .min()
        .unwrap_or(1);
    let band = 1.96 / (shortest as f64).sqrt();
    let lags = max_lag.min(longest - 1).max(1) as f64;
    let acf = Panel {
        left: trace.left,
        top: trace.top + trace.height + 130,
        width: trace.width,
        height: 250,
        x: Scale {
            lo: 0.0,
            hi: lags,
            log: false,
            integer: true,
        },
        y: Scale {
            lo: (acf_lo - 0.08).min(-band - 0.05).max(-1.05),
            hi: 1.05,
            log: false,
            integer: false,
        },
    };
    canvas.text(acf.left, acf.top - th - 12, "Autocorrelation", 2, INK);
    if let Some(note) = ess_note(series_per_chain) {
        let w = text_width(&note, 2);
        canvas.text(acf.left + acf.width - w, acf.top - th - 12, &note, 2, MUTED);
    }
    acf.draw_axes(&mut canvas, "lag", "ACF", 2);
    // White-noise band and the zero line.
    let (b_top, b_bottom) = (acf.py(band), acf.py(-band));
    canvas.fill_rect(
        acf.left + 1,
        b_top.round() as i64,
        acf.width - 2,
        (b_bottom - b_top).round() as i64,
        BAND,
        0.16,
    );
    let zero = acf.py(0.0).round() as i64;
    canvas.fill_rect(acf.left, zero, acf.width, 1, ZERO, 1.0);
    let dots = max_lag <= 60;
    for (k, curve) in acfs.iter().enumerate() {
        let Some(curve) = curve else { continue };
        let color = series_color(k);
        let points: Vec<(f64, f64)> = curve
            .iter()
            .enumerate()
            .map(|(t, &r)| (acf.px(t as f64), acf.py(r)))
            .collect();
        for pair in points.windows(2) {
            canvas.line(pair[0], pair[1], 1.8, color, 0.9);
        }
        if dots {
            for &(x, y) in &points {
                canvas.disc(x, y, 2.6, color);
            }
        }
    }
    draw_acf_legend(&mut canvas, &acf, BAND);
    canvas.stroke_rect(acf.left, acf.top, acf.width, acf.height + 1, FRAME);
    canvas.save(path.as_ref())
}

/// The white-noise band's colour.
const BAND: [u8; 3] = [120, 150, 200];
/// The zero line's colour.
const ZERO: [u8; 3] = [150, 150, 150];

/// The band and the zero line explained on one line above the autocorrelation panel's
/// heading, right-aligned with the panel.
fn draw_acf_legend(canvas: &mut Canvas, panel: &Panel, band: [u8; 3]) {
    let th = text_height(2);
    let y = panel.top - 2 * th - 30;
    let total: i64 = ACF_LEGEND
        .iter()
        .map(|l| text_width(l, 2) + 36)
        .sum::<i64>()
        + 24;
    let mut x = panel.left + panel.width - total;
    // The band: a shaded swatch; the zero line: a grey stroke.
    canvas.fill_rect(x, y, 28, th, band, 0.35);
    canvas.text(x + 36, y, ACF_LEGEND[0], 2, INK);
    x += 36 + text_width(ACF_LEGEND[0], 2) + 24;
    let mid = (y + th / 2) as f64;
    canvas.line((x as f64, mid), (x as f64 + 28.0, mid), 1.5, ZERO, 1.0);
    canvas.text(x + 36, y, ACF_LEGEND[1], 2, INK);
}

/// "ESS 1234 of 4000 draws" for equal-length chains whose ESS is defined.
fn ess_note(chains: &[Vec<f64>]) -> Option<String> {
    let views: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
    let e = ess(&views).ok()?;
    let total: usize = chains.iter().map(Vec::len).sum();
    Some(format!("ESS {} of {total} draws", axes::format_value(e)))
}

/// One chain's trace: a polyline, or per-pixel-column ranges when there are many more draws
/// than columns.
fn draw_trace(canvas: &mut Canvas, panel: &Panel, chain: &[f64], color: [u8; 3]) {
    let n = chain.len();
    if n as i64 <= 2 * panel.width {
        let mut previous: Option<(f64, f64)> = None;
        for (t, &v) in chain.iter().enumerate() {
            if !v.is_finite() {
                previous = None;
                continue;
            }
            let p = (panel.px(t as f64), panel.py(v));
            match previous {
                Some(q) => canvas.line(q, p, 1.3, color, 0.85),
                None if n == 1 => canvas.disc(p.0, p.1, 2.5, color),
                None => {}
            }
            previous = Some(p);
        }
        return;
    }
    // Column c gathers the draws whose x falls in it: (min, max, first, last).
    let columns = panel.width as usize;
    let mut cells: Vec<Option<(f64, f64, f64, f64)>> = vec![None; columns];
    for (t, &v) in chain.iter().enumerate() {
        if !v.is_finite() {
            continue;
        }
        let c =
            ((panel.px(t as f64) - panel.left as f64).floor().max(0.0) as usize).min(columns - 1);
        cells[c] = Some(match cells[c] {
            None => (v, v, v, v),
            Some((lo, hi, first, _)) => (lo.min(v), hi.max(v), first, v),
        });
    }
    let mut previous_last: Option<(f64, f64)> = None;
    for (c, cell) in cells.iter().enumerate() {
        let Some((lo, hi, first, last)) = *cell else {
            previous_last = None;
            continue;
        };
        let x = panel.left as f64 + c as f64 + 0.5;
        if let Some(q) = previous_last {
            canvas.line(q, (x, panel.py(first)), 1.0, color, 0.85);
        }
        canvas.line((x, panel.py(lo)), (x, panel.py(hi)), 1.0, color, 0.85);
        previous_last = Some((x, panel.py(last)));
    }
}

/// "— chain 1  — chain 2 …", right-aligned to `right` on the line at `y`.
fn draw_legend(canvas: &mut Canvas, chains: usize, right: i64, y: i64) {
    let shown = chains.min(8);
    let mut entries: Vec<(String, Option<usize>)> = (0..shown)
        .map(|k| (format!("chain {}", k + 1), Some(k)))
        .collect();
    if chains > shown {
        entries.push((format!("+{} more", chains - shown), None));
    }
    let th = text_height(2);
    let entry_width =
        |label: &str, swatch: bool| text_width(label, 2) + if swatch { 30 } else { 0 };
    let total: i64 = entries
        .iter()
        .map(|(l, k)| entry_width(l, k.is_some()) + 18)
        .sum::<i64>()
        - 18;
    let mut x = right - total;
    for (label, k) in &entries {
        if let Some(k) = k {
            let mid = y as f64 + th as f64 / 2.0;
            canvas.line(
                (x as f64, mid),
                (x as f64 + 22.0, mid),
                3.0,
                series_color(*k),
                1.0,
            );
            x += 30;
        }
        canvas.text(x, y, label, 2, INK);
        x += text_width(label, 2) + 18;
    }
}
