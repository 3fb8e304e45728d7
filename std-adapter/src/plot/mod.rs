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
    Input(#[source] DataError),
}

/// Why data cannot be drawn ([`PlotError::Input`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// A bar chart given a number of labels other than its values.
    #[error("{labels} labels for {values} values")]
    LabelCount {
        /// The labels.
        labels: usize,
        /// The values.
        values: usize,
    },
    /// A bar chart whose labels, values and marks differ in number.
    #[error("{labels} labels, {values} values and {marks} marks")]
    MarkCount {
        /// The labels.
        labels: usize,
        /// The values.
        values: usize,
        /// The marks.
        marks: usize,
    },
    /// Grouped bars without series.
    #[error("no series")]
    NoSeries,
    /// Grouped bars given a number of values other than groups × series.
    #[error("{values} values for {groups} groups × {series} series")]
    GroupValues {
        /// The values.
        values: usize,
        /// The groups.
        groups: usize,
        /// The series.
        series: usize,
    },
    /// A bar chart without bars.
    #[error("no bars to draw")]
    NoBars,
    /// A bar chart none of whose values can be drawn on its scale.
    #[error("no value can be drawn")]
    NothingDrawable,
    /// A heat map grid without rows or columns.
    #[error("the grid must have at least one row and one column")]
    EmptyGrid,
    /// A heat map grid whose cells overflow `usize`.
    #[error("grid too large")]
    GridTooLarge,
    /// A heat map's values whose number is not the grid's cells.
    #[error("{name} has {len} values, expected {expected}")]
    CellCount {
        /// The argument.
        name: &'static str,
        /// Its values.
        len: usize,
        /// The grid's cells.
        expected: usize,
    },
    /// A heat map's value that is negative or not finite.
    #[error("{name} has a negative or non-finite value")]
    NegativeOrNotFinite {
        /// The argument.
        name: &'static str,
    },
    /// A heat map's values that sum to zero.
    #[error("{name} sums to zero")]
    SumsToZero {
        /// The argument.
        name: &'static str,
    },
    /// An image grid without images.
    #[error("no images to draw")]
    NoImages,
    /// An image width, height or grid columns of zero.
    #[error("image width, height and columns must be positive")]
    ZeroImageSize,
    /// An image whose values are not `width × height`.
    #[error("image {index} has {len} values, expected {width} × {height}")]
    ImageLength {
        /// The image, from 0.
        index: usize,
        /// Its values.
        len: usize,
        /// The images' width.
        width: usize,
        /// The images' height.
        height: usize,
    },
    /// An image grid larger than 2^28 pixels.
    #[error("the grid would exceed 2^28 pixels")]
    TooManyPixels,
    /// A line plot without a finite point.
    #[error("no finite point to plot")]
    NoFinitePoint,
    /// A trace plot without draws.
    #[error("no draws to plot")]
    NoDraws,
    /// A trace plot without a finite draw.
    #[error("no finite draws to plot")]
    NoFiniteDraws,
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
