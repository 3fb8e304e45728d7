//! An RGB raster with the few drawing operations the charts need, written out as PNG.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use super::PlotError;
use super::font;

/// An sRGB colour.
pub(crate) type Rgb = [u8; 3];

/// An 8-bit RGB image, row-major, origin top left.
#[derive(Debug, Clone)]
pub(crate) struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

impl Canvas {
    /// A canvas filled with `background`.
    pub(crate) fn new(width: usize, height: usize, background: Rgb) -> Self {
        let mut pixels = Vec::with_capacity(width * height * 3);
        for _ in 0..width * height {
            pixels.extend_from_slice(&background);
        }
        Self {
            width,
            height,
            pixels,
        }
    }

    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Mixes `color` into pixel `(x, y)` with weight `alpha ∈ [0, 1]`; ignores pixels outside.
    pub(crate) fn blend(&mut self, x: i64, y: i64, color: Rgb, alpha: f64) {
        if x < 0 || y < 0 || x as usize >= self.width || y as usize >= self.height || alpha <= 0.0 {
            return;
        }
        let a = alpha.min(1.0);
        let i = (y as usize * self.width + x as usize) * 3;
        for (p, &c) in self.pixels[i..i + 3].iter_mut().zip(&color) {
            *p = (f64::from(*p) * (1.0 - a) + f64::from(c) * a).round() as u8;
        }
    }

    /// Fills the rectangle with top-left corner `(x, y)`, clipped to the canvas.
    pub(crate) fn fill_rect(&mut self, x: i64, y: i64, w: i64, h: i64, color: Rgb, alpha: f64) {
        let x0 = x.max(0);
        let y0 = y.max(0);
        let x1 = (x + w).min(self.width as i64);
        let y1 = (y + h).min(self.height as i64);
        for py in y0..y1 {
            for px in x0..x1 {
                self.blend(px, py, color, alpha);
            }
        }
    }

    /// A one-pixel rectangle outline.
    pub(crate) fn stroke_rect(&mut self, x: i64, y: i64, w: i64, h: i64, color: Rgb) {
        self.fill_rect(x, y, w, 1, color, 1.0);
        self.fill_rect(x, y + h - 1, w, 1, color, 1.0);
        self.fill_rect(x, y, 1, h, color, 1.0);
        self.fill_rect(x + w - 1, y, 1, h, color, 1.0);
    }

    /// An anti-aliased segment of the given width between pixel-space points (pixel `(i, j)`
    /// covers `[i, i+1) × [j, j+1)`). Coverage is the overlap of a pixel with the stroke,
    /// approximated from the distance of the pixel centre to the segment.
    pub(crate) fn line(
        &mut self,
        p0: (f64, f64),
        p1: (f64, f64),
        width: f64,
        color: Rgb,
        alpha: f64,
    ) {
        let (x0, y0) = p0;
        let (x1, y1) = p1;
        if !(x0.is_finite() && y0.is_finite() && x1.is_finite() && y1.is_finite()) {
            return;
        }
        let r = 0.5 * width;
        let (dx, dy) = (x1 - x0, y1 - y0);
        let len2 = dx * dx + dy * dy;
        let distance = |px: f64, py: f64| {
            let t = if len2 > 0.0 {
                (((px - x0) * dx + (py - y0) * dy) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (qx, qy) = (x0 + t * dx - px, y0 + t * dy - py);
            (qx * qx + qy * qy).sqrt()
        };
        let reach = r + 1.0;
        // Walk the major axis; for each column (row) visit the pixels within reach of the line.
        let horizontal = dx.abs() >= dy.abs();
        let (a0, a1) = if horizontal { (x0, x1) } else { (y0, y1) };
        let (lo, hi) = (a0.min(a1), a0.max(a1));
        let slope = if horizontal {
            if dx != 0.0 { dy / dx } else { 0.0 }
        } else if dy != 0.0 {
            dx / dy
        } else {
            0.0
        };
        let span = reach * (1.0 + slope * slope).sqrt();
        let mut major = (lo - reach).floor() as i64;
        while major as f64 <= hi + reach {
            let c = major as f64 + 0.5;
            let along = c.clamp(lo, hi);
            let minor_center = if horizontal {
                y0 + (along - x0) * slope
            } else {
                x0 + (along - y0) * slope
            };
            let m0 = (minor_center - span).floor() as i64;
            let m1 = (minor_center + span).ceil() as i64;
            for minor in m0..=m1 {
                let (px, py) = if horizontal {
                    (major, minor)
                } else {
                    (minor, major)
                };
                let d = distance(px as f64 + 0.5, py as f64 + 0.5);
                let coverage = (r + 0.5 - d).clamp(0.0, 1.0);
                if coverage > 0.0 {
                    self.blend(px, py, color, coverage * alpha);
                }
            }
            major += 1;
        }
    }

    /// A filled anti-aliased disc.
    pub(crate) fn disc(&mut self, cx: f64, cy: f64, radius: f64, color: Rgb) {
        let x0 = (cx - radius - 1.0).floor() as i64;
        let x1 = (cx + radius + 1.0).ceil() as i64;
        let y0 = (cy - radius - 1.0).floor() as i64;
        let y1 = (cy + radius + 1.0).ceil() as i64;
        for py in y0..=y1 {
            for px in x0..=x1 {
                let d = ((px as f64 + 0.5 - cx).powi(2) + (py as f64 + 0.5 - cy).powi(2)).sqrt();
                self.blend(px, py, color, (radius + 0.5 - d).clamp(0.0, 1.0));
            }
        }
    }

    /// Draws `text` with its top-left corner at `(x, y)`, each font pixel a `scale × scale`
    /// square.
    pub(crate) fn text(&mut self, x: i64, y: i64, text: &str, scale: i64, color: Rgb) {
        for (k, c) in text.chars().enumerate() {
            let gx = x + k as i64 * (font::WIDTH as i64 + 1) * scale;
            for (row, bits) in font::glyph(c).iter().enumerate() {
                for col in 0..font::WIDTH {
                    if bits >> (font::WIDTH - 1 - col) & 1 == 1 {
                        self.fill_rect(
                            gx + col as i64 * scale,
                            y + row as i64 * scale,
                            scale,
                            scale,
                            color,
                            1.0,
                        );
                    }
                }
            }
        }
    }

    /// Draws `text` turned a quarter counter-clockwise (reading upwards); `(x, y)` is the
    /// top-left corner of the turned text's bounding box.
    pub(crate) fn text_up(&mut self, x: i64, y: i64, text: &str, scale: i64, color: Rgb) {
        let length = text_width(text, scale);
        for (k, c) in text.chars().enumerate() {
            // Character k starts k advances above the bottom of the box.
            let base = y + length - k as i64 * (font::WIDTH as i64 + 1) * scale;
            for (row, bits) in font::glyph(c).iter().enumerate() {
                for col in 0..font::WIDTH {
                    if bits >> (font::WIDTH - 1 - col) & 1 == 1 {
                        let px = x + row as i64 * scale;
                        let py = base - (col as i64 + 1) * scale;
                        self.fill_rect(px, py, scale, scale, color, 1.0);
                    }
                }
            }
        }
    }

    /// Writes the canvas as an 8-bit RGB PNG.
    pub(crate) fn save(&self, path: &Path) -> Result<(), PlotError> {
        let file = File::create(path).map_err(PlotError::Io)?;
        let mut encoder =
            png::Encoder::new(BufWriter::new(file), self.width as u32, self.height as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(PlotError::Encode)?;
        writer
            .write_image_data(&self.pixels)
            .map_err(PlotError::Encode)?;
        writer.finish().map_err(PlotError::Encode)
    }
}

/// Width in pixels of `text` drawn at `scale` (no trailing gap).
pub(crate) fn text_width(text: &str, scale: i64) -> i64 {
    let n = text.chars().count() as i64;
    if n == 0 {
        0
    } else {
        (n * (font::WIDTH as i64 + 1) - 1) * scale
    }
}

/// Height in pixels of a line of text at `scale`.
pub(crate) fn text_height(scale: i64) -> i64 {
    font::HEIGHT as i64 * scale
}
