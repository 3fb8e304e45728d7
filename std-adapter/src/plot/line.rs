//! One curve against its own horizontal axis: a learning curve (the tracked objective against
//! the update), without the chain legend and autocorrelation panel of a trace.

use std::path::Path;

use super::axes::{FRAME, Panel, Scale, WHITE, padded, series_color};
use super::raster::Canvas;
use super::{DataError, PlotError, draw_title};

const WIDTH: usize = 1000;
const HEIGHT: usize = 560;

/// The title and the axes of a [`line_plot`].
#[derive(Debug, Clone, PartialEq)]
pub struct LineSpec {
    /// The title at the top.
    pub title: String,
    /// What the horizontal axis counts (`update`).
    pub x_label: String,
    /// What the curve's values are (`held-out mean log-likelihood`).
    pub y_label: String,
}

/// Writes a PNG of the points `(x, y)` joined in order, one dot per point, with labelled axes.
/// Points with a non-finite coordinate are left out.
///
/// # Errors
///
/// [`PlotError::Input`] when no point is finite; [`PlotError::Io`] and [`PlotError::Encode`]
/// from writing the file.
pub fn line_plot(
    path: impl AsRef<Path>,
    spec: &LineSpec,
    points: &[(f64, f64)],
) -> Result<(), PlotError> {
    let shown: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if shown.is_empty() {
        return Err(PlotError::Input(DataError::NoFinitePoint));
    }
    let range = |f: fn(&(f64, f64)) -> f64| {
        shown
            .iter()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let (x_lo, x_hi) = range(|p| p.0);
    let (y_lo, y_hi) = range(|p| p.1);
    let (x_lo, x_hi) = if x_hi > x_lo {
        (x_lo, x_hi)
    } else {
        padded(x_lo, x_hi)
    };
    let (y_lo, y_hi) = padded(y_lo, y_hi);
    let mut canvas = Canvas::new(WIDTH, HEIGHT, WHITE);
    draw_title(&mut canvas, &spec.title, 18);
    let panel = Panel {
        left: 130,
        top: 70,
        width: WIDTH as i64 - 130 - 36,
        height: HEIGHT as i64 - 70 - 90,
        x: Scale {
            lo: x_lo,
            hi: x_hi,
            log: false,
            integer: false,
        },
        y: Scale {
            lo: y_lo,
            hi: y_hi,
            log: false,
            integer: false,
        },
    };
    panel.draw_axes(&mut canvas, &spec.x_label, &spec.y_label, 2);
    let color = series_color(0);
    let pixels: Vec<(f64, f64)> = shown
        .iter()
        .map(|&(x, y)| (panel.px(x), panel.py(y)))
        .collect();
    for pair in pixels.windows(2) {
        canvas.line(pair[0], pair[1], 2.0, color, 1.0);
    }
    for &(x, y) in &pixels {
        canvas.disc(x, y, 3.0, color);
    }
    canvas.stroke_rect(panel.left, panel.top, panel.width, panel.height + 1, FRAME);
    canvas.save(path.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_finite_points_and_refuses_none() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let spec = LineSpec {
            title: "t".into(),
            x_label: "update".into(),
            y_label: "objective".into(),
        };
        let path = dir.join("a.png");
        line_plot(&path, &spec, &[(0.0, 1.0), (10.0, f64::NAN), (20.0, 3.0)]).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 0);
        let err = line_plot(dir.join("b.png"), &spec, &[(0.0, f64::NAN)]).unwrap_err();
        assert!(
            matches!(err, PlotError::Input(DataError::NoFinitePoint)),
            "{err}"
        );
        assert!(!dir.join("b.png").exists());
        // One point: a flat range is padded, not a division by zero.
        line_plot(dir.join("c.png"), &spec, &[(5.0, 2.0)]).unwrap();
    }
}
