//! The pictures decode as PNG with the documented sizes, are not blank, and show the data where
//! it should be.

use std::collections::HashSet;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use langevin_std::plot::{
    AxisScale, DataError, PlotError, bar_chart, grouped_bars, heatmap_pair, image_grid,
    trace_and_acf,
};

/// A decoded RGB picture.
struct Picture {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Picture {
    fn load(path: &PathBuf) -> Self {
        let decoder = png::Decoder::new(BufReader::new(File::open(path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        buf.truncate(info.buffer_size());
        Self {
            width: info.width as usize,
            height: info.height as usize,
            rgb: buf,
        }
    }

    fn pixel(&self, x: usize, y: usize) -> [u8; 3] {
        let i = (y * self.width + x) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    fn distinct_colours(&self) -> usize {
        self.rgb
            .chunks_exact(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect::<HashSet<_>>()
            .len()
    }

    fn count(&self, predicate: impl Fn([u8; 3]) -> bool) -> usize {
        self.rgb
            .chunks_exact(3)
            .filter(|p| predicate([p[0], p[1], p[2]]))
            .count()
    }
}

/// A per-test folder under the system temporary directory, removed when the test ends unless
/// `LANGEVIN_KEEP_PLOTS` is set (to look at the pictures).
struct OutDir(tempfile::TempDir);

impl OutDir {
    fn new(test: &str) -> Self {
        let keep = std::env::var_os("LANGEVIN_KEEP_PLOTS").is_some();
        let dir = tempfile::Builder::new()
            .prefix(&format!("langevin-plot-tests-{test}-"))
            .disable_cleanup(keep)
            .tempdir()
            .unwrap();
        if keep {
            println!("pictures kept in {}", dir.path().display());
        }
        Self(dir)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

/// A deterministic AR(1)-like series without a random number generator: a sum of sines.
fn wiggle(n: usize, phase: f64) -> Vec<f64> {
    (0..n)
        .map(|t| {
            let t = t as f64;
            (t / 37.0 + phase).sin() + 0.5 * (t / 5.3 + 2.0 * phase).sin() + 0.2 * (t * 1.7).sin()
        })
        .collect()
}

#[test]
fn trace_and_acf_draws_every_chain() {
    let dir = OutDir::new("trace_and_acf_draws_every_chain");
    let path = dir.file("trace.png");
    let chains = vec![wiggle(3000, 0.0), wiggle(3000, 1.0)];
    trace_and_acf(&path, "Two chains", &chains, 50).unwrap();
    let pic = Picture::load(&path);
    assert_eq!((pic.width, pic.height), (1000, 800));
    assert!(
        pic.distinct_colours() > 100,
        "{} colours",
        pic.distinct_colours()
    );
    // Chain 1 is blue, chain 2 orange: both leave many clearly coloured pixels.
    let blue = pic.count(|[r, _, b]| i32::from(b) - i32::from(r) > 60);
    let orange = pic.count(|[r, _, b]| i32::from(r) - i32::from(b) > 100);
    assert!(blue > 2000 && orange > 2000, "blue {blue}, orange {orange}");

    // A long chain (per-column ranges), a constant one and one with NaNs still draw.
    let mut broken = wiggle(500_000, 2.0);
    broken[1000] = f64::NAN;
    let path = dir.file("trace_long.png");
    trace_and_acf(&path, "Long", &[broken, vec![0.25; 500_000]], 200).unwrap();
    assert_eq!(Picture::load(&path).width, 1000);

    assert!(matches!(
        trace_and_acf(dir.file("none.png"), "x", &[], 10),
        Err(PlotError::Input(DataError::NoDraws))
    ));
    assert!(matches!(
        trace_and_acf(dir.file("nan.png"), "x", &[vec![f64::NAN; 4]], 10),
        Err(PlotError::Input(DataError::NoFiniteDraws))
    ));
}

#[test]
fn image_grid_shows_each_pixel_as_a_square() {
    let dir = OutDir::new("image_grid_shows_each_pixel_as_a_square");
    // Three 8×8 binary images: a checkerboard, all white, all black.
    let checker: Vec<u8> = (0..64)
        .map(|p| u8::from((p / 8 + p % 8) % 2 == 0))
        .collect();
    let white = vec![1u8; 64];
    let black = vec![0u8; 64];
    let path = dir.file("grid.png");
    image_grid(&path, &[&checker, &white, &black], 8, 8, 2).unwrap();
    let pic = Picture::load(&path);
    // s = ⌈96/8⌉ = 12, 2 columns, 2 rows: 2·(96 + 8) + 8 = 216 both ways.
    assert_eq!((pic.width, pic.height), (216, 216));
    // Image k's pixel (row, col) is the 12×12 square at (8 + 104·(k % 2) + 12·col, …).
    for row in 0..8 {
        for col in 0..8 {
            let (x, y) = (8 + 12 * col + 6, 8 + 12 * row + 6);
            let want = if (row + col) % 2 == 0 { 255 } else { 0 };
            assert_eq!(pic.pixel(x, y), [want; 3], "checker ({row}, {col})");
            assert_eq!(pic.pixel(x + 104, y), [255; 3]);
            assert_eq!(pic.pixel(x, y + 104), [0; 3]);
        }
    }
    // Grey levels in f32, 28×28: s = 4, one row of 3.
    let grey: Vec<f32> = (0..784).map(|p| p as f32 / 783.0).collect();
    let path = dir.file("grid_grey.png");
    image_grid(&path, &[&grey[..], &grey[..], &grey[..]], 28, 28, 5).unwrap();
    let pic = Picture::load(&path);
    assert_eq!((pic.width, pic.height), (3 * (112 + 8) + 8, 112 + 16));
    assert!(pic.distinct_colours() > 200);

    assert!(matches!(
        image_grid(dir.file("bad.png"), &[&checker[..60]], 8, 8, 1),
        Err(PlotError::Input(DataError::ImageLength {
            index: 0,
            len: 60,
            width: 8,
            height: 8
        }))
    ));
}

#[test]
fn heatmap_pair_puts_mass_where_the_target_has_it() {
    let dir = OutDir::new("heatmap_pair_puts_mass_where_the_target_has_it");
    // A single bump at row 5, column 15 of a 20 × 30 grid.
    let (n, m) = (20, 30);
    let target: Vec<f64> = (0..n * m)
        .map(|k| {
            let (i, j) = ((k / m) as f64, (k % m) as f64);
            (-((i - 5.0).powi(2) + (j - 15.0).powi(2)) / 8.0).exp()
        })
        .collect();
    let counts: Vec<f64> = target.iter().map(|t| (1000.0 * t).round()).collect();
    let path = dir.file("heat.png");
    heatmap_pair(&path, "One bump", &counts, &target, n, m).unwrap();
    let pic = Picture::load(&path);
    // z = ⌊420/30⌋ = 14: panels 420 × 280; width 2·420 + 360, height 280 + 212.
    assert_eq!((pic.width, pic.height), (1200, 492));
    assert!(pic.distinct_colours() > 50);
    // Panels start at x = 84 and x = 84 + 420 + 90, y = 112; cell (i, j) centre at
    // (x0 + 14 j + 7, 112 + 14 i + 7). The bump is bright (viridis yellow-green), a far corner
    // is dark purple.
    for x0 in [84, 594] {
        let peak = pic.pixel(x0 + 14 * 15 + 7, 112 + 14 * 5 + 7);
        let corner = pic.pixel(x0 + 7, 112 + 14 * 19 + 7);
        assert!(peak[1] > 180 && peak[2] < 120, "peak {peak:?}");
        assert!(corner[1] < 20 && corner[2] > 60, "corner {corner:?}");
    }

    // A 450 × 450 grid is shrunk to 420-pixel panels.
    let big = vec![1.0; 450 * 450];
    let path = dir.file("heat_big.png");
    heatmap_pair(&path, "Flat", &big, &big, 450, 450).unwrap();
    let pic = Picture::load(&path);
    assert_eq!((pic.width, pic.height), (2 * 420 + 360, 420 + 212));

    assert!(matches!(
        heatmap_pair(dir.file("bad.png"), "x", &counts[1..], &target, n, m),
        Err(PlotError::Input(DataError::CellCount {
            name: "visited_counts",
            ..
        }))
    ));
    assert!(matches!(
        heatmap_pair(dir.file("zero.png"), "x", &vec![0.0; n * m], &target, n, m),
        Err(PlotError::Input(DataError::SumsToZero {
            name: "visited_counts"
        }))
    ));
}

/// Heights of the runs of columns that contain pixels of `colour` at rows `top..`, left to
/// right (rows above `top` hold the title and legend).
fn bar_heights(pic: &Picture, colour: [u8; 3], top: usize) -> Vec<usize> {
    let mut bars = Vec::new();
    let mut current = 0;
    for x in 0..pic.width {
        let h = (top..pic.height)
            .filter(|&y| pic.pixel(x, y) == colour)
            .count();
        if h > 0 {
            current = current.max(h);
        } else if current > 0 {
            bars.push(current);
            current = 0;
        }
    }
    bars
}

#[test]
fn bar_heights_follow_the_values() {
    let dir = OutDir::new("bar_heights_follow_the_values");
    let blue = [31, 119, 180];
    let values = [10.0, 40.0, 20.0];
    let path = dir.file("bars.png");
    bar_chart(
        &path,
        "Linear",
        &["a", "b", "c"],
        &values,
        AxisScale::Linear,
    )
    .unwrap();
    let pic = Picture::load(&path);
    assert_eq!((pic.width, pic.height), (560, 464));
    let h = bar_heights(&pic, blue, 0);
    assert_eq!(h.len(), 3, "{h:?}");
    // Heights are proportional to the values, to a pixel of rounding at each end.
    for (hk, vk) in h.iter().zip(values) {
        let want = h[1] as f64 * vk / 40.0;
        assert!((*hk as f64 - want).abs() <= 2.0, "{h:?}");
    }

    // On a log axis equal ratios give equal height differences: 10, 100, 1000.
    let path = dir.file("bars_log.png");
    bar_chart(
        &path,
        "Log",
        &["a", "b", "c", "missing"],
        &[10.0, 100.0, 1000.0, f64::NAN],
        AxisScale::Log,
    )
    .unwrap();
    let pic = Picture::load(&path);
    let h = bar_heights(&pic, blue, 0);
    assert_eq!(h.len(), 3, "{h:?}");
    let (d1, d2) = (h[1] as i64 - h[0] as i64, h[2] as i64 - h[1] as i64);
    assert!(d1 > 20 && (d1 - d2).abs() <= 2, "{h:?}");

    let path = dir.file("grouped.png");
    grouped_bars(
        &path,
        "ESS per second",
        &["Ising 20x20", "RBM", "Lattice Gaussian"],
        &["Gibbs", "DMALA"],
        &[1.0, 4.0, 2.0, 8.0, 0.5, 3.0],
        AxisScale::Linear,
    )
    .unwrap();
    let pic = Picture::load(&path);
    assert_eq!(pic.width, 140 + 420);
    // Below the title and the legend row (which holds one swatch per series).
    assert_eq!(bar_heights(&pic, blue, 100).len(), 3);
    assert_eq!(bar_heights(&pic, [255, 127, 14], 100).len(), 3);

    assert!(matches!(
        bar_chart(
            dir.file("bad.png"),
            "x",
            &["a"],
            &[1.0, 2.0],
            AxisScale::Linear
        ),
        Err(PlotError::Input(DataError::LabelCount {
            labels: 1,
            values: 2
        }))
    ));
    assert!(matches!(
        bar_chart(
            dir.file("bad_log.png"),
            "x",
            &["a"],
            &[-1.0],
            AxisScale::Log
        ),
        Err(PlotError::Input(DataError::NothingDrawable))
    ));
}
