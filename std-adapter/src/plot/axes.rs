//! Axis scales, tick placement and labels, colours.

use super::raster::{Canvas, Rgb, text_height, text_width};

pub(crate) const WHITE: Rgb = [255, 255, 255];
pub(crate) const INK: Rgb = [34, 34, 34];
pub(crate) const MUTED: Rgb = [110, 110, 110];
pub(crate) const GRID: Rgb = [228, 228, 228];
pub(crate) const FRAME: Rgb = [90, 90, 90];

/// Ten well-separated colours for series (the "tab10" palette).
pub(crate) const PALETTE: [Rgb; 10] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

/// Colour of series `k`.
pub(crate) fn series_color(k: usize) -> Rgb {
    PALETTE[k % PALETTE.len()]
}

/// The viridis colour map at `t ∈ [0, 1]` (piecewise linear through nine of its colours):
/// perceptually ordered and readable in grey scale and by colour-blind readers.
pub(crate) fn viridis(t: f64) -> Rgb {
    const STOPS: [Rgb; 9] = [
        [68, 1, 84],
        [71, 45, 123],
        [59, 82, 139],
        [44, 114, 142],
        [33, 145, 140],
        [40, 174, 128],
        [94, 201, 98],
        [173, 220, 48],
        [253, 231, 37],
    ];
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let mut out = [0u8; 3];
    for ((o, &a), &b) in out.iter_mut().zip(&STOPS[i]).zip(&STOPS[i + 1]) {
        *o = (f64::from(a) + f * (f64::from(b) - f64::from(a))).round() as u8;
    }
    out
}

/// A linear or base-10 logarithmic mapping of a data interval.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    /// Ticks only at whole numbers (iterations, lags, cell indices).
    pub integer: bool,
}

impl Scale {
    /// Position of `v` in `[0, 1]` along the interval (outside for values beyond it).
    pub(crate) fn fraction(&self, v: f64) -> f64 {
        if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    /// Tick positions and labels, and a common factor the labels are given in (`x1e-3`).
    pub(crate) fn ticks(&self, target: usize) -> (Vec<(f64, String)>, Option<String>) {
        if self.log {
            (log_ticks(self.lo, self.hi), None)
        } else {
            let (ticks, step) = nice_ticks(self.lo, self.hi, target, self.integer);
            let (labels, factor) = format_ticks(&ticks, step);
            (ticks.into_iter().zip(labels).collect(), factor)
        }
    }
}

/// A "nice" step (1, 2 or 5 times a power of ten) near `raw`.
fn nice_step(raw: f64) -> f64 {
    let power = 10f64.powf(raw.log10().floor());
    let m = raw / power;
    let nice = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// About `target` ticks at multiples of a nice step inside `[lo, hi]`, and the step; with
/// `integer` the step is at least 1.
pub(crate) fn nice_ticks(lo: f64, hi: f64, target: usize, integer: bool) -> (Vec<f64>, f64) {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || span.is_infinite() {
        return (vec![lo], 1.0);
    }
    let mut step = nice_step(span / target.max(1) as f64);
    if integer {
        step = step.max(1.0);
    }
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    let ticks = (first..=last)
        .map(|k| {
            let v = k as f64 * step;
            // Avoid printing -0.
            if v == 0.0 { 0.0 } else { v }
        })
        .collect();
    (ticks, step)
}

/// Labels for the ticks of one axis, in one style: thousands and millions get a `k` or `M`
/// suffix when the largest tick reaches 10^4 (so 80000 and 1e5 never share an axis), and ticks
/// all below 10^-2 are written as multiples of a common factor, returned as `x1e-3` for the
/// axis title.
pub(crate) fn format_ticks(ticks: &[f64], step: f64) -> (Vec<String>, Option<String>) {
    let largest = ticks.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if largest > 0.0 && largest < 1e-2 {
        let exponent = largest.log10().floor() as i32;
        let unit = 10f64.powi(exponent);
        let labels = ticks
            .iter()
            .map(|&v| format_tick(v / unit, step / unit))
            .collect();
        return (labels, Some(format!("x1e{exponent}")));
    }
    let (divisor, suffix) = if !(1e4..1e10).contains(&largest) {
        (1.0, "")
    } else if largest >= 1e7 {
        (1e6, "M")
    } else {
        (1e3, "k")
    };
    let labels = ticks
        .iter()
        .map(|&v| {
            if divisor == 1.0 {
                format_tick(v, step)
            } else if v == 0.0 {
                "0".to_string()
            } else {
                format!("{}{suffix}", format_tick(v / divisor, step / divisor))
            }
        })
        .collect();
    (labels, None)
}

/// Label for a tick at `v` on a grid of spacing `step`: as few decimals as the step needs,
/// scientific notation for very large or very small magnitudes.
pub(crate) fn format_tick(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let magnitude = v.abs().max(step.abs());
    if magnitude >= 1e5 || step.abs() < 1e-3 {
        return format_scientific(v, step);
    }
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{v:.decimals$}")
}

fn format_scientific(v: f64, step: f64) -> String {
    let exponent = v.abs().log10().floor() as i32;
    let mantissa = v / 10f64.powi(exponent);
    // Digits the step resolves at this exponent.
    let digits = ((exponent as f64 - step.abs().log10().floor()).max(0.0) as usize).min(3);
    let m = format!("{mantissa:.digits$}");
    let m = if m.contains('.') {
        m.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        m
    };
    format!("{m}e{exponent}")
}

/// Compact label for a value shown on its own (bar labels, headings): whole numbers from 1000
/// up, three significant digits below without trailing zeros, scientific notation outside
/// `[1e-3, 1e6)`.
pub(crate) fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".to_string();
    }
    if !(1e-3..1e6).contains(&a) {
        return format_scientific(v, a / 100.0);
    }
    if a >= 1000.0 {
        return format!("{v:.0}");
    }
    let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Ticks at powers of ten within `[lo, hi]` (positive); with fewer than two powers inside,
/// also 2× and 5× multiples.
fn log_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let e0 = lo.log10().floor() as i32;
    let e1 = hi.log10().ceil() as i32;
    let inside = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
    let powers: Vec<f64> = (e0..=e1)
        .map(|e| 10f64.powi(e))
        .filter(|&v| inside(v))
        .collect();
    let mut values = powers.clone();
    if powers.len() < 3 {
        values = (e0..=e1)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .filter(|&v| inside(v))
            .collect();
    }
    let step = (e1 - e0).max(1);
    // Thin out crowded decades.
    let keep = (values.len() / 8).max(1) * if step > 12 { 2 } else { 1 };
    values
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % keep == 0)
        .map(|(_, v)| (v, format_power(v)))
        .collect()
}

fn format_power(v: f64) -> String {
    let e = v.log10().round() as i32;
    let exact = 10f64.powi(e);
    if (v / exact - 1.0).abs() < 1e-9 && !(-3..=5).contains(&e) {
        return format!("1e{e}");
    }
    if (1e-3..1e6).contains(&v) {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format_scientific(v, v / 10.0)
    }
}

/// A plotting panel: a pixel rectangle with an x and a y scale.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Panel {
    pub left: i64,
    pub top: i64,
    pub width: i64,
    pub height: i64,
    pub x: Scale,
    pub y: Scale,
}

impl Panel {
    /// Pixel x of data value `v`.
    pub(crate) fn px(&self, v: f64) -> f64 {
        self.left as f64 + self.x.fraction(v) * self.width as f64
    }

    /// Pixel y of data value `v` (upwards).
    pub(crate) fn py(&self, v: f64) -> f64 {
        (self.top + self.height) as f64 - self.y.fraction(v) * self.height as f64
    }

    /// Grid lines, frame, tick labels and axis labels.
    pub(crate) fn draw_axes(&self, canvas: &mut Canvas, x_label: &str, y_label: &str, scale: i64) {
        let bottom = self.top + self.height;
        let (x_ticks, x_factor) = self.x.ticks((self.width / 110).clamp(2, 10) as usize);
        let (y_ticks, y_factor) = self.y.ticks((self.height / 60).clamp(2, 8) as usize);
        let with_factor = |label: &str, factor: Option<String>| match factor {
            Some(f) if !label.is_empty() => format!("{label} ({f})"),
            Some(f) => f,
            None => label.to_string(),
        };
        let x_label = with_factor(x_label, x_factor);
        let y_label = with_factor(y_label, y_factor);
        for (v, _) in &y_ticks {
            let y = self.py(*v).round() as i64;
            canvas.fill_rect(self.left, y, self.width, 1, GRID, 1.0);
        }
        for (v, _) in &x_ticks {
            let x = self.px(*v).round() as i64;
            canvas.fill_rect(x, self.top, 1, self.height, GRID, 1.0);
        }
        canvas.stroke_rect(self.left, self.top, self.width, self.height + 1, FRAME);
        let th = text_height(scale);
        for (v, label) in &x_ticks {
            let x = self.px(*v).round() as i64;
            canvas.fill_rect(x, bottom, 1, 5, FRAME, 1.0);
            canvas.text(
                x - text_width(label, scale) / 2,
                bottom + 9,
                label,
                scale,
                INK,
            );
        }
        let mut widest = 0;
        for (v, label) in &y_ticks {
            let y = self.py(*v).round() as i64;
            canvas.fill_rect(self.left - 5, y, 5, 1, FRAME, 1.0);
            let w = text_width(label, scale);
            widest = widest.max(w);
            canvas.text(self.left - 9 - w, y - th / 2, label, scale, INK);
        }
        if !x_label.is_empty() {
            let w = text_width(&x_label, scale);
            canvas.text(
                self.left + (self.width - w) / 2,
                bottom + 9 + th + 8,
                &x_label,
                scale,
                MUTED,
            );
        }
        if !y_label.is_empty() {
            let h = text_width(&y_label, scale);
            let x = self.left - 9 - widest - 10 - th;
            canvas.text_up(x, self.top + (self.height - h) / 2, &y_label, scale, MUTED);
        }
    }
}

/// An interval around `[lo, hi]` with 4% margins (a unit interval around a constant).
pub(crate) fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if hi.partial_cmp(&lo) != Some(core::cmp::Ordering::Greater) {
        let m = if lo.abs() > 0.0 { lo.abs() * 0.1 } else { 1.0 };
        return (lo - m, lo + m);
    }
    let m = 0.04 * (hi - lo);
    (lo - m, hi + m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels() {
        let (t, s) = nice_ticks(0.0, 1.0, 5, false);
        assert_eq!(s, 0.2);
        let labels: Vec<String> = t.iter().map(|&v| format_tick(v, s)).collect();
        assert_eq!(labels, ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        let (t, s) = nice_ticks(-3.2, 7.9, 5, false);
        assert_eq!(nice_ticks(0.0, 2.0, 5, true).0, vec![0.0, 1.0, 2.0]);
        assert_eq!(t, vec![-2.0, 0.0, 2.0, 4.0, 6.0]);
        assert_eq!(format_tick(4.0, s), "4");
        assert_eq!(format_tick(200_000.0, 100_000.0), "2e5");
        let (labels, factor) = format_ticks(&[0.0, 50_000.0, 100_000.0, 150_000.0], 50_000.0);
        assert_eq!(labels, ["0", "50k", "100k", "150k"]);
        assert_eq!(factor, None);
        assert_eq!(
            format_ticks(&[0.0, 2.5e7, 5e7], 2.5e7).0,
            ["0", "25M", "50M"]
        );
        let (labels, factor) = format_ticks(&[0.0, 0.0005, 0.001, 0.0015], 0.0005);
        assert_eq!(labels, ["0", "0.5", "1.0", "1.5"]);
        assert_eq!(factor.as_deref(), Some("x1e-3"));
        assert_eq!(format_tick(0.0004, 0.0001), "4e-4");
        assert_eq!(format_value(1234.4), "1234");
        assert_eq!(format_value(0.1234), "0.123");
        assert_eq!(format_value(12.0), "12");
        assert_eq!(format_value(0.5), "0.5");
        assert_eq!(format_value(4.5678), "4.57");
        assert_eq!(format_value(0.00123), "0.00123");
        assert_eq!(format_value(3.0e7), "3e7");
        let l = log_ticks(1.0, 1e4);
        assert_eq!(
            l.iter().map(|p| p.1.as_str()).collect::<Vec<_>>(),
            ["1", "10", "100", "1000", "10000"]
        );
    }

    #[test]
    fn viridis_ends() {
        assert_eq!(viridis(0.0), [68, 1, 84]);
        assert_eq!(viridis(1.0), [253, 231, 37]);
        assert_eq!(viridis(f64::NAN), [68, 1, 84]);
    }
}
