//! Bar charts for side-by-side comparisons.

use std::path::Path;

use super::axes::{FRAME, INK, MUTED, Panel, Scale, WHITE, format_value, nice_ticks, series_color};
use super::raster::{Canvas, Rgb, text_height, text_width};
use super::{AxisScale, DataError, PlotError, draw_title, fit_text, fitting_scale};

/// Writes a PNG bar chart with one bar per label, each value printed above its bar, on a linear
/// or logarithmic axis (see [`AxisScale`]). Non-finite values (and, on a log axis, values
/// `≤ 0`) are marked "n/a" instead of drawn. Labels too long for their slot are put on two
/// lines or shortened.
///
/// The picture is `140 + max(420, 84 · bars)` pixels wide and 464 high (488 when a label takes
/// two lines).
///
/// # Errors
///
/// [`PlotError::Input`] if there are no labels, `labels` and `values` differ in length, or no
/// value can be drawn; [`PlotError::Io`] and [`PlotError::Encode`] from writing the file.
pub fn bar_chart(
    path: impl AsRef<Path>,
    title: &str,
    labels: &[&str],
    values: &[f64],
    scale: AxisScale,
) -> Result<(), PlotError> {
    if labels.len() != values.len() {
        return Err(PlotError::Input(DataError::LabelCount {
            labels: labels.len(),
            values: values.len(),
        }));
    }
    let bars = Bars {
        title,
        groups: labels,
        series: &[],
        values,
        scale,
        axes: None,
    };
    draw_bars(path.as_ref(), &bars)
}

/// The axes and marks of a [`bar_chart_with`]: what the bars' labels name and what their
/// values measure, which bars are marked (drawn pale, hatched) and the note that says why.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSpec<'a> {
    /// The title at the top.
    pub title: &'a str,
    /// What the bars are (`sampler`), under their labels.
    pub x_label: &'a str,
    /// What the values measure, written up the value axis; on a logarithmic axis say so
    /// (`ESS per second (log scale)`).
    pub y_label: &'a str,
    /// One flag per bar: `true` draws the bar pale and hatched (a figure not to be trusted).
    pub marked: &'a [bool],
    /// A line under the chart explaining the marks (empty: none).
    pub note: &'a str,
}

/// A [`bar_chart`] with labelled axes and marked bars.
///
/// # Errors
///
/// As [`bar_chart`]; also [`PlotError::Input`] when `spec.marked` is not one flag per label.
pub fn bar_chart_with(
    path: impl AsRef<Path>,
    spec: &BarSpec<'_>,
    labels: &[&str],
    values: &[f64],
    scale: AxisScale,
) -> Result<(), PlotError> {
    if labels.len() != values.len() || spec.marked.len() != labels.len() {
        return Err(PlotError::Input(DataError::MarkCount {
            labels: labels.len(),
            values: values.len(),
            marks: spec.marked.len(),
        }));
    }
    let bars = Bars {
        title: spec.title,
        groups: labels,
        series: &[],
        values,
        scale,
        axes: Some(spec),
    };
    draw_bars(path.as_ref(), &bars)
}

/// Writes a PNG grouped bar chart: for each group (e.g. a model) one bar per series (e.g. a
/// sampler), coloured by series with a legend, values printed above the bars. `values` is
/// row-major `groups × series`: `values[g * series.len() + s]`.
///
/// The picture is `140 + max(420, groups · (30 · series + 36))` pixels wide; the legend rows
/// under the title make it taller than a [`bar_chart`].
///
/// # Errors
///
/// [`PlotError::Input`] if there are no groups or series, `values` is not
/// `groups.len() × series.len()` long, or no value can be drawn; [`PlotError::Io`] and
/// [`PlotError::Encode`] from writing the file.
pub fn grouped_bars(
    path: impl AsRef<Path>,
    title: &str,
    groups: &[&str],
    series: &[&str],
    values: &[f64],
    scale: AxisScale,
) -> Result<(), PlotError> {
    if series.is_empty() {
        return Err(PlotError::Input(DataError::NoSeries));
    }
    if values.len() != groups.len() * series.len() {
        return Err(PlotError::Input(DataError::GroupValues {
            values: values.len(),
            groups: groups.len(),
            series: series.len(),
        }));
    }
    let bars = Bars {
        title,
        groups,
        series,
        values,
        scale,
        axes: None,
    };
    draw_bars(path.as_ref(), &bars)
}

/// What a bar chart shows.
struct Bars<'a> {
    title: &'a str,
    groups: &'a [&'a str],
    series: &'a [&'a str],
    values: &'a [f64],
    scale: AxisScale,
    axes: Option<&'a BarSpec<'a>>,
}

fn draw_bars(path: &Path, bars: &Bars<'_>) -> Result<(), PlotError> {
    let Bars {
        title,
        groups,
        series,
        values,
        scale,
        axes: labelled,
    } = *bars;
    if groups.is_empty() {
        return Err(PlotError::Input(DataError::NoBars));
    }
    let log = scale == AxisScale::Log;
    let shown: Vec<f64> = values
        .iter()
        .copied()
        .filter(|&v| drawable(v, log))
        .collect();
    if shown.is_empty() {
        return Err(PlotError::Input(DataError::NothingDrawable));
    }
    let layout = Layout::new(bars);
    let mut canvas = Canvas::new(layout.width as usize, layout.height as usize, WHITE);
    draw_title(&mut canvas, title, 18);

    let panel = Panel {
        left: layout.left,
        top: layout.top,
        width: layout.plot_w,
        height: 320,
        x: Scale {
            lo: 0.0,
            hi: 1.0,
            log: false,
            integer: false,
        },
        y: value_scale(&shown, log),
    };
    // The y axis only: draw_axes with an x scale that puts no ticks inside is simplest done by
    // hand here.
    draw_y_axis(&mut canvas, &panel);

    let base = if log {
        panel.top + panel.height
    } else {
        panel.py(0.0).round() as i64
    };
    let offset = (layout.plot_w - groups.len() as i64 * layout.group_w) / 2;
    for (g, name) in groups.iter().enumerate() {
        let gx = layout.left + offset + g as i64 * layout.group_w + layout.group_gap / 2;
        for s in 0..layout.per_group {
            let bar = Bar {
                value: values[g * layout.per_group + s],
                x: gx + s as i64 * layout.bar_w,
                width: layout.bar_w,
                color: series_color(if series.is_empty() { 0 } else { s }),
                marked: labelled
                    .and_then(|a| a.marked.get(g))
                    .copied()
                    .unwrap_or(false),
            };
            bar.draw(&mut canvas, &panel, base, log);
        }
        let center = gx + layout.per_group as i64 * layout.bar_w / 2;
        let (lines, scale) = label_lines(name, layout.group_w - 8);
        for (k, line) in lines.iter().enumerate() {
            let w = text_width(line, scale);
            let y = panel.top + panel.height + 14 + k as i64 * (text_height(scale) + 8);
            canvas.text(center - w / 2, y, line, scale, INK);
        }
    }
    if !log {
        canvas.fill_rect(layout.left, base, layout.plot_w, 1, FRAME, 1.0);
    }
    canvas.fill_rect(
        layout.left,
        panel.top + panel.height,
        layout.plot_w,
        1,
        FRAME,
        1.0,
    );
    if let Some(spec) = labelled {
        draw_axis_labels(&mut canvas, spec, &panel, &layout);
    }
    draw_legend(&mut canvas, series, &layout.legend_rows, layout.width);
    canvas.save(path)
}

/// Whether a value can be drawn: finite, and positive on a log axis.
fn drawable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// The value axis for the drawable values `shown`: from half a decade below the smallest on
/// a log axis, else from zero (or the smallest negative value), with room above the largest.
fn value_scale(shown: &[f64], log: bool) -> Scale {
    let (lo, hi) = (
        shown.iter().copied().fold(f64::INFINITY, f64::min),
        shown.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    if log {
        Scale {
            // At least half a decade below the smallest bar, so that it stays visible.
            lo: 10f64.powf((lo.log10() - 0.5).floor()),
            hi: 10f64.powf(hi.log10() + 0.12 * (hi.log10() - lo.log10()).max(1.0)),
            log: true,
            integer: false,
        }
    } else {
        let (lo, hi) = (lo.min(0.0), hi.max(0.0));
        let span = (hi - lo).max(f64::MIN_POSITIVE);
        let (ticks, step) = nice_ticks(lo, hi + 0.1 * span, 5, false);
        let top = ticks
            .last()
            .copied()
            .unwrap_or(hi)
            .max(hi + 0.1 * span)
            .max(step);
        Scale {
            lo,
            hi: top,
            log: false,
            integer: false,
        }
    }
}

/// Sizes and positions of a bar chart, in pixels.
struct Layout {
    per_group: usize,
    bar_w: i64,
    group_gap: i64,
    group_w: i64,
    left: i64,
    plot_w: i64,
    top: i64,
    width: i64,
    height: i64,
    /// Whether a group label takes two lines.
    two_lines: bool,
    legend_rows: Vec<Vec<usize>>,
}

impl Layout {
    fn new(bars: &Bars<'_>) -> Self {
        let (groups, series) = (bars.groups, bars.series);
        let per_group = series.len().max(1);
        let bar_w: i64 = if per_group == 1 { 56 } else { 30 };
        let group_gap: i64 = if per_group == 1 { 28 } else { 36 };
        let group_w = per_group as i64 * bar_w + group_gap;
        let left = if bars.axes.is_some() { 140 } else { 110 };
        let plot_w = (groups.len() as i64 * group_w).max(420);
        let legend_rows = legend_layout(series, left + plot_w + 30 - 40);
        let top = 70
            + if series.is_empty() {
                0
            } else {
                legend_rows.len() as i64 * 26 + 10
            };
        let width = left + plot_w + 30;
        let two_lines = groups
            .iter()
            .any(|g| label_lines(g, group_w - 8).0.len() > 1);
        let below = if bars.axes.is_some() { 60 } else { 0 };
        let height = top + 320 + 74 + below + if two_lines { 24 } else { 0 };
        Self {
            per_group,
            bar_w,
            group_gap,
            group_w,
            left,
            plot_w,
            top,
            width,
            height,
            two_lines,
            legend_rows,
        }
    }
}

/// One bar: its value, left edge, width, colour and whether it is marked.
struct Bar {
    value: f64,
    x: i64,
    width: i64,
    color: Rgb,
    marked: bool,
}

impl Bar {
    /// Draws the bar from `base` with its value above it, or "n/a" on the base line when it
    /// cannot be drawn.
    fn draw(&self, canvas: &mut Canvas, panel: &Panel, base: i64, log: bool) {
        let (v, x, bar_w, color) = (self.value, self.x, self.width, self.color);
        let label = if drawable(v, log) {
            format_value(v)
        } else {
            "n/a".to_string()
        };
        let label_scale = fitting_scale(&label, 2, bar_w + 4);
        let lw = text_width(&label, label_scale);
        if !drawable(v, log) {
            let y = base - text_height(1) - 5;
            canvas.text(x + bar_w / 2 - lw / 2, y, &label, label_scale, MUTED);
            return;
        }
        let yv = panel.py(v).round() as i64;
        let (y0, y1) = (yv.min(base), yv.max(base));
        if self.marked {
            // Pale, with dark diagonal hatching: a figure not to be trusted.
            canvas.fill_rect(x + 2, y0, bar_w - 4, (y1 - y0).max(1), color, 0.3);
            let inner = bar_w - 4;
            let mut k = y0;
            while k < y1 {
                // A segment up and to the right from (x + 2, k + run) to (x + 2 + run, k).
                let run = inner.min(y1 - k) as f64;
                let (x0, y) = ((x + 2) as f64, k as f64);
                canvas.line((x0, y + run), (x0 + run, y), 1.2, INK, 0.6);
                k += 10;
            }
            canvas.stroke_rect(x + 2, y0, bar_w - 4, (y1 - y0).max(1), FRAME);
        } else {
            canvas.fill_rect(x + 2, y0, bar_w - 4, (y1 - y0).max(1), color, 1.0);
        }
        let ly = if v >= 0.0 || log {
            y0 - text_height(label_scale) - 5
        } else {
            y1 + 5
        };
        canvas.text(x + bar_w / 2 - lw / 2, ly, &label, label_scale, INK);
    }
}

/// What the bars are (under their labels), what the values measure (up the value axis) and
/// the note under the chart.
fn draw_axis_labels(canvas: &mut Canvas, spec: &BarSpec<'_>, panel: &Panel, layout: &Layout) {
    let (left, plot_w, width) = (layout.left, layout.plot_w, layout.width);
    let th = text_height(2);
    let labels = if layout.two_lines { 2 * th + 8 } else { th };
    let under = panel.top + panel.height + 14 + labels + 14;
    let w = text_width(spec.x_label, 2);
    canvas.text(left + (plot_w - w) / 2, under, spec.x_label, 2, MUTED);
    let h = text_width(spec.y_label, 2);
    canvas.text_up(
        12,
        panel.top + (panel.height - h) / 2,
        spec.y_label,
        2,
        MUTED,
    );
    if !spec.note.is_empty() {
        let scale = fitting_scale(spec.note, 2, width - 20);
        let note = fit_text(spec.note, scale, width - 20);
        let w = text_width(&note, scale);
        canvas.text((width - w) / 2, under + th + 14, &note, scale, INK);
    }
}

/// The legend rows under the title: a colour swatch and the name of each series.
fn draw_legend(canvas: &mut Canvas, series: &[&str], rows: &[Vec<usize>], width: i64) {
    for (r, row) in rows.iter().enumerate() {
        let total: i64 = row
            .iter()
            .map(|&s| text_width(series[s], 2) + 26 + 22)
            .sum::<i64>()
            - 22;
        let mut x = (width - total) / 2;
        let y = 56 + r as i64 * 26;
        for &s in row {
            canvas.fill_rect(x, y, 16, 14, series_color(s), 1.0);
            canvas.text(x + 24, y, series[s], 2, INK);
            x += text_width(series[s], 2) + 26 + 22;
        }
    }
}

/// A group label as one line at scale 2, else two lines at scale 2 (split at the space nearest
/// the middle), else one line at the largest scale that fits, shortened if need be.
fn label_lines(name: &str, room: i64) -> (Vec<String>, i64) {
    if text_width(name, 2) <= room {
        return (vec![name.to_string()], 2);
    }
    let middle = name.chars().count() / 2;
    let split = name
        .char_indices()
        .filter(|&(_, c)| c == ' ')
        .map(|(i, _)| i)
        .min_by_key(|&i| name[..i].chars().count().abs_diff(middle));
    if let Some(i) = split {
        let (a, b) = (name[..i].trim(), name[i..].trim());
        if text_width(a, 2) <= room && text_width(b, 2) <= room {
            return (vec![a.to_string(), b.to_string()], 2);
        }
    }
    let scale = fitting_scale(name, 2, room);
    (vec![fit_text(name, scale, room)], scale)
}

/// Splits the series names into legend rows that fit in `room` pixels.
fn legend_layout(series: &[&str], room: i64) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut used = 0;
    for (s, name) in series.iter().enumerate() {
        let w = text_width(name, 2) + 26 + 22;
        match rows.last_mut() {
            Some(row) if used + w <= room => {
                row.push(s);
                used += w;
            }
            _ => {
                rows.push(vec![s]);
                used = w;
            }
        }
    }
    rows
}

/// Horizontal grid lines, tick marks and labels of the value axis.
fn draw_y_axis(canvas: &mut Canvas, panel: &Panel) {
    let (ticks, factor) = panel.y.ticks(6);
    let th = text_height(2);
    if let Some(factor) = factor {
        canvas.text(
            panel.left - 9 - text_width(&factor, 2),
            panel.top - th - 12,
            &factor,
            2,
            MUTED,
        );
    }
    for (v, label) in &ticks {
        let y = panel.py(*v).round() as i64;
        if y < panel.top || y > panel.top + panel.height {
            continue;
        }
        canvas.fill_rect(panel.left, y, panel.width, 1, [230, 230, 230], 1.0);
        canvas.fill_rect(panel.left - 5, y, 5, 1, FRAME, 1.0);
        canvas.text(
            panel.left - 9 - text_width(label, 2),
            y - th / 2,
            label,
            2,
            INK,
        );
    }
    canvas.fill_rect(panel.left, panel.top, 1, panel.height + 1, FRAME, 1.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_must_match_the_bars() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let spec = |marked: &'static [bool]| BarSpec {
            title: "t",
            x_label: "sampler",
            y_label: "ESS per second (log scale)",
            marked,
            note: "hatched: not converged",
        };
        let path = dir.join("a.png");
        let labels = ["a", "b *"];
        bar_chart_with(
            &path,
            &spec(&[false, true]),
            &labels,
            &[3.0, 30.0],
            AxisScale::Log,
        )
        .unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 0);
        let err = bar_chart_with(
            dir.join("b.png"),
            &spec(&[true]),
            &labels,
            &[3.0, 30.0],
            AxisScale::Log,
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                PlotError::Input(DataError::MarkCount {
                    labels: 2,
                    values: 2,
                    marks: 1
                })
            ),
            "{err}"
        );
    }
}
