//! Pictures of chains and samples, drawn on a small RGB raster and written as PNG files: trace
//! and autocorrelation plots, grids of sampled images, paired heat maps (sampled frequencies
//! next to the target), and bar charts for comparing samplers.
//!
//! Everything is drawn here (anti-aliased lines, rectangles, a built-in 5×7 bitmap font for
//! labels); the only dependency is the `png` encoder. Every function validates its input and
//! returns [`PlotError::Input`] instead of drawing a misleading picture.
//!
//! # Examples
//!
//! ```no_run
//! use langevin_std::plot::{AxisScale, bar_chart};
//! bar_chart(
//!     "ess_per_second.png",
//!     "ESS per second",
//!     &["Gibbs", "DULA", "DMALA"],
//!     &[120.0, 950.0, 1400.0],
//!     AxisScale::Log,
//! )?;
//! # Ok::<(), langevin_std::plot::PlotError>(())
//! ```

mod axes;
mod bars;
mod font;
mod heatmap;
mod images;
mod line;
mod raster;
mod trace;

pub use bars::{BarSpec, bar_chart, bar_chart_with, grouped_bars};
pub use heatmap::{GridAxis, HeatmapSpec, heatmap_pair, heatmap_pair_with};
pub use images::{image_grid, image_grid_titled};
pub use line::{LineSpec, line_plot};
pub use trace::{TraceSpec, trace_and_acf};

/// How values map to a bar chart's vertical axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AxisScale {
    /// Linear from zero.
    #[default]
    Linear,
    /// Base-10 logarithmic: for values spanning orders of magnitude (ESS per second across
    /// samplers). Values `≤ 0` are shown as missing.
    Log,
}

/// Why a picture could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// The file could not be created or written.
    #[error("cannot write the picture: {0}")]
    Io(#[source] std::io::Error),
    /// The PNG encoder failed.
    #[error("cannot encode the picture as PNG: {0}")]
    Encode(#[source] png::EncodingError),
    /// The data cannot be drawn (empty, mismatched lengths, no finite values, …).
    #[error("cannot draw this data: {0}")]
    Input(String),
}

/// Shorthand for an input error.
fn input(why: impl Into<String>) -> PlotError {
    PlotError::Input(why.into())
}

/// The largest text scale (down to 1) at which `text` fits in `room` pixels.
fn fitting_scale(text: &str, preferred: i64, room: i64) -> i64 {
    let mut scale = preferred;
    while scale > 1 && raster::text_width(text, scale) > room {
        scale -= 1;
    }
    scale
}

/// `text` shortened with a trailing `..` so that it fits in `room` pixels at `scale`.
fn fit_text(text: &str, scale: i64, room: i64) -> String {
    if raster::text_width(text, scale) <= room {
        return text.to_string();
    }
    let mut out: String = text.to_string();
    while !out.is_empty() && raster::text_width(&format!("{out}.."), scale) > room {
        out.pop();
    }
    format!("{out}..")
}

/// Draws `title` centred at the top of the canvas.
fn draw_title(canvas: &mut raster::Canvas, title: &str, y: i64) {
    let room = canvas.width() as i64 - 24;
    let scale = fitting_scale(title, 3, room);
    let text = fit_text(title, scale, room);
    let w = raster::text_width(&text, scale);
    canvas.text((canvas.width() as i64 - w) / 2, y, &text, scale, axes::INK);
}
