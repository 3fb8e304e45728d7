//! Grids of sampled images.

use std::path::Path;

use super::axes::MUTED;
use super::raster::{Canvas, text_height, text_width};
use super::{DataError, PlotError, draw_title, fitting_scale};

/// Gap between images and around the grid, in pixels.
const GAP: usize = 8;

/// Writes a PNG showing `images` (each `width × height` intensities, row-major) in a grid of
/// `columns` columns, every pixel enlarged to a square so that it is clearly visible: at least
/// 96 screen pixels per image side (28×28 images at 4×, 8×8 images at 12×).
///
/// With the enlargement `s = ⌈96 / max(width, height)⌉`, `c = min(columns, images)` columns and
/// `r = ⌈images / c⌉` rows, the picture is `c·(width·s + 8) + 8` by `r·(height·s + 8) + 8`
/// pixels.
///
/// Intensities are read as `[0, 1]` (clamped; NaN shows as 0): `0` is black and `1` white, so
/// binary states (`u8` 0/1, as the samplers store them) and grey levels in `f32` both work as
/// they are.
///
/// # Errors
///
/// [`PlotError::Input`] if there are no images, `width`, `height` or `columns` is zero, or an
/// image does not hold `width × height` values; [`PlotError::Io`] and [`PlotError::Encode`] from
/// writing the file.
///
/// # Examples
///
/// ```no_run
/// // Two 3×2 binary images side by side.
/// let a: [u8; 6] = [1, 0, 1, 0, 1, 0];
/// let b: [u8; 6] = [0, 1, 0, 1, 0, 1];
/// langevin_std::plot::image_grid("samples.png", &[&a, &b], 3, 2, 2)?;
/// # Ok::<(), langevin_std::plot::PlotError>(())
/// ```
pub fn image_grid<T: Copy + Into<f32>>(
    path: impl AsRef<Path>,
    images: &[&[T]],
    width: usize,
    height: usize,
    columns: usize,
) -> Result<(), PlotError> {
    draw_grid(path.as_ref(), None, images, width, height, columns)
}

/// [`image_grid`] under a title, a caption line (what the rows and columns are) and the
/// grey-level key: the grid is moved down by 104 pixels and the picture is at
/// least 640 pixels wide.
///
/// # Errors
///
/// As [`image_grid`].
pub fn image_grid_titled<T: Copy + Into<f32>>(
    path: impl AsRef<Path>,
    title: &str,
    caption: &str,
    images: &[&[T]],
    width: usize,
    height: usize,
    columns: usize,
) -> Result<(), PlotError> {
    draw_grid(
        path.as_ref(),
        Some((title, caption)),
        images,
        width,
        height,
        columns,
    )
}

/// The key to the grey levels printed after a titled grid's caption.
const GREY_KEY: &str = "pixels: black 0, white 1";

/// Rows above a titled grid.
const HEADER: usize = 104;

fn draw_grid<T: Copy + Into<f32>>(
    path: &Path,
    header: Option<(&str, &str)>,
    images: &[&[T]],
    width: usize,
    height: usize,
    columns: usize,
) -> Result<(), PlotError> {
    if images.is_empty() {
        return Err(PlotError::Input(DataError::NoImages));
    }
    if width == 0 || height == 0 || columns == 0 {
        return Err(PlotError::Input(DataError::ZeroImageSize));
    }
    if let Some((k, img)) = images
        .iter()
        .enumerate()
        .find(|(_, i)| i.len() != width * height)
    {
        return Err(PlotError::Input(DataError::ImageLength {
            index: k,
            len: img.len(),
            width,
            height,
        }));
    }
    let scale = 96usize.div_ceil(width.max(height)).max(1);
    let columns = columns.min(images.len());
    let rows = images.len().div_ceil(columns);
    let (cell_w, cell_h) = (width * scale, height * scale);
    let top = if header.is_some() { HEADER } else { 0 };
    let grid_w = columns * (cell_w + GAP) + GAP;
    let canvas_w = if header.is_some() {
        grid_w.max(640)
    } else {
        grid_w
    };
    let canvas_h = rows * (cell_h + GAP) + GAP + top;
    let left = (canvas_w - grid_w) / 2;
    if canvas_w.saturating_mul(canvas_h) > 1 << 28 {
        return Err(PlotError::Input(DataError::TooManyPixels));
    }
    let mut canvas = Canvas::new(canvas_w, canvas_h, [185, 188, 195]);
    if let Some((title, caption)) = header {
        canvas.fill_rect(0, 0, canvas_w as i64, top as i64, [255, 255, 255], 1.0);
        draw_title(&mut canvas, title, 14);
        // The caption, then the grey-level key, each on its own line.
        let room = canvas_w as i64 - 24;
        let mut y = 14 + text_height(3) + 14;
        for line in [caption, GREY_KEY] {
            if line.is_empty() {
                continue;
            }
            let scale = fitting_scale(line, 2, room);
            let w = text_width(line, scale);
            canvas.text((canvas_w as i64 - w) / 2, y, line, scale, MUTED);
            y += text_height(2) + 8;
        }
    }
    for (k, img) in images.iter().enumerate() {
        let x0 = (left + GAP + (k % columns) * (cell_w + GAP)) as i64;
        let y0 = (top + GAP + (k / columns) * (cell_h + GAP)) as i64;
        for (row, values) in img.chunks_exact(width).enumerate() {
            for (col, &v) in values.iter().enumerate() {
                let v: f32 = v.into();
                let level = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
                let grey = (level * 255.0).round() as u8;
                canvas.fill_rect(
                    x0 + (col * scale) as i64,
                    y0 + (row * scale) as i64,
                    scale as i64,
                    scale as i64,
                    [grey; 3],
                    1.0,
                );
            }
        }
    }
    canvas.save(path.as_ref())
}
