//! Accuracy of the branch-free [`Fast`] `exp` and `ln(1 + x)` against `f64` references and libm,
//! pinning the bounds documented in `core/src/math.rs`, and of the flip odds built from them.
//!
//! The default tests sweep tens of millions of inputs (strided bit patterns plus exhaustive windows
//! around every threshold); the `#[ignore]`d tests sweep every `f32` of the domain:
//! `cargo test -p langevin-tests --test math_accuracy -- --ignored`.

use langevin_core::math::{Fast, FlipMath, FlipOdds, Libm};

/// Documented: `Fast::exp` is within 1 ulp of the exact result (strictly below).
const EXP_MAX_ULP: f64 = 1.0;
/// Documented: `Fast::exp` relative error for normal results.
const EXP_MAX_REL: f64 = 8.4e-8;
/// Documented: `Fast::ln_1p` on `[0, 1]`: at most 2.1 ulp ...
const LN1P_MAX_ULP: f64 = 2.1;
/// ... relative error at most 1.8e-7 ...
const LN1P_MAX_REL: f64 = 1.8e-7;
/// ... absolute error at most 1.25e-7.
const LN1P_MAX_ABS: f64 = 1.25e-7;
/// Unit roundoff of `f32`.
const U: f64 = 1.0 / 16_777_216.0;
/// The smallest positive subnormal `f32`, `2^−149`.
const TINY: f64 = 1.401_298_464_324_817e-45;

/// The ulp of the `f32` binade holding `|y|` (subnormal spacing below `2^−126`).
fn ulp_f32(y: f64) -> f64 {
    let a = y.abs();
    if a < f64::from(f32::MIN_POSITIVE) {
        return TINY;
    }
    let e = ((a.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    f64::from_bits(((e - 23 + 1023) as u64) << 52)
}

/// Worst errors seen and where.
#[derive(Debug, Default, Clone, Copy)]
struct Worst {
    ulp: f64,
    ulp_at: f32,
    rel: f64,
    rel_at: f32,
    abs: f64,
    abs_at: f32,
    count: u64,
}

impl Worst {
    /// Records `got` for input `x` against the exact value `exact`.
    fn add(&mut self, x: f32, got: f32, exact: f64) {
        self.count += 1;
        let g = f64::from(got);
        // A result equal to the correctly rounded one (including an overflow to +∞) has no error.
        let d = if got == exact as f32 {
            0.0
        } else {
            (g - exact).abs()
        };
        let ulp = d / ulp_f32(exact);
        if ulp > self.ulp || ulp.is_nan() {
            self.ulp = ulp;
            self.ulp_at = x;
        }
        if exact.abs() >= f64::from(f32::MIN_POSITIVE) {
            let rel = d / exact.abs();
            if rel > self.rel || rel.is_nan() {
                self.rel = rel;
                self.rel_at = x;
            }
        }
        if d > self.abs || d.is_nan() {
            self.abs = d;
            self.abs_at = x;
        }
    }

    fn merge(mut self, o: Self) -> Self {
        if o.ulp > self.ulp || o.ulp.is_nan() {
            (self.ulp, self.ulp_at) = (o.ulp, o.ulp_at);
        }
        if o.rel > self.rel || o.rel.is_nan() {
            (self.rel, self.rel_at) = (o.rel, o.rel_at);
        }
        if o.abs > self.abs || o.abs.is_nan() {
            (self.abs, self.abs_at) = (o.abs, o.abs_at);
        }
        self.count += o.count;
        self
    }
}

/// Every `f32` whose bit pattern is `first, first + stride, …` up to `last` (inclusive).
fn bits(first: u32, last: u32, stride: u32) -> impl Iterator<Item = f32> {
    (first..=last).step_by(stride as usize).map(f32::from_bits)
}

/// The `2 · half` bit patterns around `x` (same sign).
fn window(x: f32, half: u32) -> impl Iterator<Item = f32> {
    let b = x.to_bits();
    let sign = b & 0x8000_0000;
    let mag = b & 0x7fff_ffff;
    (mag.saturating_sub(half)..mag.saturating_add(half)).map(move |m| f32::from_bits(sign | m))
}

/// Distance in representable steps between two finite or infinite `f32` of the same sign.
fn steps(a: f32, b: f32) -> u32 {
    a.to_bits().abs_diff(b.to_bits())
}

/// Runs `f` over the bit patterns `[first, last]` split across the available threads.
fn par_range(first: u32, last: u32, f: impl Fn(u32, u32) -> Worst + Sync) -> Worst {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let span = (last - first) / n + 1;
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..n)
            .map(|i| {
                let f = &f;
                let lo = first.saturating_add(i * span);
                let hi = lo.saturating_add(span - 1).min(last);
                s.spawn(move || {
                    if lo <= last {
                        f(lo, hi)
                    } else {
                        Worst::default()
                    }
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .fold(Worst::default(), Worst::merge)
    })
}

/// Checks `Fast::exp` at `x`, accumulating into `w`; also checks it is at most one step from
/// libm (both are within 1 ulp of the exact value, so they are its two neighbours at worst).
fn check_exp(w: &mut Worst, x: f32) {
    let got = Fast::exp(x);
    w.add(x, got, f64::from(x).exp());
    let lib = Libm::exp(x);
    assert!(
        steps(got, lib) <= 1,
        "exp({x:e}): Fast {got:e} vs libm {lib:e}"
    );
}

fn assert_exp_bounds(w: &Worst) {
    println!("exp: {w:?}");
    assert!(
        w.ulp < EXP_MAX_ULP,
        "exp error {} ulp at {:e}",
        w.ulp,
        w.ulp_at
    );
    assert!(
        w.rel < EXP_MAX_REL,
        "exp relative error {:e} at {:e}",
        w.rel,
        w.rel_at
    );
}

fn check_ln1p(w: &mut Worst, x: f32) {
    let got = Fast::ln_1p(x);
    w.add(x, got, f64::from(x).ln_1p());
    let lib = Libm::ln_1p(x);
    // Fast within 2.1 ulp, libm within 1 ulp of the exact value: at most 3 steps apart.
    assert!(
        steps(got, lib) <= 3,
        "ln_1p({x:e}): Fast {got:e} vs libm {lib:e}"
    );
}

fn assert_ln1p_bounds(w: &Worst) {
    println!("ln_1p: {w:?}");
    assert!(
        w.ulp <= LN1P_MAX_ULP,
        "ln_1p error {} ulp at {:e}",
        w.ulp,
        w.ulp_at
    );
    assert!(
        w.rel <= LN1P_MAX_REL,
        "ln_1p relative error {:e} at {:e}",
        w.rel,
        w.rel_at
    );
    assert!(
        w.abs <= LN1P_MAX_ABS,
        "ln_1p absolute error {:e} at {:e}",
        w.abs,
        w.abs_at
    );
}

/// Positive and negative halves of the finite `exp` domain, as inclusive bit ranges.
fn exp_domain() -> [(u32, u32); 2] {
    [
        (0, 89.0f32.to_bits()),
        ((-0.0f32).to_bits(), (-104.0f32).to_bits()),
    ]
}

#[test]
fn exp_strided_sweep_and_threshold_windows() {
    let mut w = Worst::default();
    // Stride 61 is odd, so every residue of the low mantissa bits is visited.
    for (lo, hi) in exp_domain() {
        bits(lo, hi, 61).for_each(|x| check_exp(&mut w, x));
    }
    // Exhaustive windows of 2^17 patterns around the points where something changes: zero and
    // the subnormal inputs, the reduction boundaries ±ln2/2, results crossing into the
    // subnormals, the last nonzero result, the clamps, and overflow.
    let ln2 = core::f32::consts::LN_2;
    let centres = [
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1e-30,
        -1e-30,
        ln2 / 2.0,
        -ln2 / 2.0,
        1.0,
        -1.0,
        -87.336_54,
        -103.278_93,
        -103.972_08,
        -104.0,
        88.722_84,
        89.0,
    ];
    for c in centres {
        window(c, 1 << 16).for_each(|x| check_exp(&mut w, x));
    }
    // All subnormal inputs of either sign (strided) give exactly 1.
    for x in bits(0, 0x007f_ffff, 7).chain(bits(0x8000_0000, 0x807f_ffff, 7)) {
        assert_eq!(Fast::exp(x), 1.0, "exp({x:e})");
    }
    assert!(w.count >= 10_000_000, "only {} inputs", w.count);
    assert_exp_bounds(&w);
}

#[test]
fn exp_special_values() {
    assert_eq!(Fast::exp(0.0).to_bits(), 1.0f32.to_bits());
    assert_eq!(Fast::exp(-0.0).to_bits(), 1.0f32.to_bits());
    assert_eq!(Fast::exp(f32::INFINITY), f32::INFINITY);
    assert_eq!(Fast::exp(f32::MAX), f32::INFINITY);
    assert_eq!(Fast::exp(1e30), f32::INFINITY);
    assert_eq!(Fast::exp(700.0), f32::INFINITY);
    for x in [f32::NEG_INFINITY, f32::MIN, -1e30, -700.0, -104.0, -103.98] {
        assert_eq!(Fast::exp(x).to_bits(), 0, "exp({x:e}) is not +0");
    }
    // Quiet and signalling NaNs of both signs, with payloads.
    for b in [
        0x7fc0_0000u32,
        0xffc0_0000,
        0x7f80_0001,
        0xff80_0001,
        0x7fff_ffff,
        0xffff_ffff,
    ] {
        assert!(Fast::exp(f32::from_bits(b)).is_nan(), "exp of {b:#x}");
    }
    // The documented overflow and underflow thresholds agree with libm.
    let over = 88.722_84f32;
    let last_finite = f32::from_bits(over.to_bits() - 1);
    assert_eq!(Fast::exp(over), f32::INFINITY);
    assert_eq!(Libm::exp(over), f32::INFINITY);
    assert!(Fast::exp(last_finite).is_finite());
    let zero = -103.972_084f32;
    let last_nonzero = f32::from_bits(zero.to_bits() - 1);
    assert_eq!(Fast::exp(zero), 0.0);
    assert_eq!(Libm::exp(zero), 0.0);
    assert!(Fast::exp(last_nonzero) > 0.0);
}

#[test]
fn ln1p_strided_sweep_and_windows() {
    let mut w = Worst::default();
    bits(0, 1.0f32.to_bits(), 41).for_each(|x| check_ln1p(&mut w, x));
    // Exhaustive windows: the top of [0, 1], the result crossing 0.5 and 0.25, small x where
    // x² stops mattering, and the smallest subnormals.
    let centres = [1.0, 0.648_721_3, 0.284_025_4, 1e-3, 1e-8, 2e-38, 1e-40];
    for c in centres {
        window(c, 1 << 16)
            .filter(|x| *x <= 1.0)
            .for_each(|x| check_ln1p(&mut w, x));
    }
    assert!(w.count >= 10_000_000, "only {} inputs", w.count);
    assert_ln1p_bounds(&w);
}

#[test]
fn ln1p_special_values() {
    assert_eq!(Fast::ln_1p(0.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(Fast::ln_1p(-0.0).to_bits(), (-0.0f32).to_bits());
    let tiny = f32::from_bits(1);
    assert_eq!(Fast::ln_1p(tiny), tiny);
    assert_eq!(Fast::ln_1p(f32::MIN_POSITIVE), f32::MIN_POSITIVE);
    for b in [0x7fc0_0000u32, 0xffc0_0000, 0x7f80_0001, 0xff80_0001] {
        assert!(Fast::ln_1p(f32::from_bits(b)).is_nan(), "ln_1p of {b:#x}");
    }
}

/// Error bounds of the flip odds against `f64`, derived from the bounds of the two functions:
/// `exp` within `de` relative (plus `2^−149` absolute when subnormal), `ln_1p` within `rl`
/// relative, and `u` per rounding of `1 + e`, `1 / ·`, `e · ·` and `a + ln(1 + e)`.
struct OddsBounds {
    de: f64,
    rl: f64,
}

/// Largest errors of one implementation against `f64`, as multiples of the derived bound.
#[derive(Debug, Default)]
struct OddsWorst {
    p: f64,
    ln_flip: f64,
    ln_stay: f64,
}

fn check_odds<M: FlipMath>(b: &OddsBounds, l: f32, worst: &mut OddsWorst) -> FlipOdds {
    let o = FlipOdds::new::<M>(l);
    let (lf, ls) = FlipOdds::logs::<M>(l);
    assert_eq!(
        (lf.to_bits(), ls.to_bits()),
        (o.ln_flip.to_bits(), o.ln_stay.to_bits())
    );
    let x = f64::from(l);
    let e = (-x.abs()).exp();
    let lp = e.ln_1p();
    let p = if x >= 0.0 {
        1.0 / (1.0 + e)
    } else {
        e / (1.0 + e)
    };
    let slack = 1.0 + 1e-3; // second-order terms
    let bp = slack * p * (b.de + 3.0 * U) + 2.0 * TINY;
    let blog = |r: f64| slack * (b.rl * lp * (1.0 + b.de) + b.de * e + U * r.abs()) + TINY;
    let ln_flip = -((-x).max(0.0) + lp);
    let ln_stay = -(x.max(0.0) + lp);
    let r = [
        (f64::from(o.p_flip) - p).abs() / bp,
        (f64::from(o.ln_flip) - ln_flip).abs() / blog(ln_flip),
        (f64::from(o.ln_stay) - ln_stay).abs() / blog(ln_stay),
    ];
    worst.p = worst.p.max(r[0]);
    worst.ln_flip = worst.ln_flip.max(r[1]);
    worst.ln_stay = worst.ln_stay.max(r[2]);
    assert!(
        r.iter().all(|r| *r <= 1.0),
        "odds of {l:e}: {o:?}, bound ratios {r:?}"
    );
    o
}

#[test]
fn flip_odds_fast_vs_libm_and_f64() {
    // Both exps within 1 ulp (2u relative); Fast ln_1p within its documented relative bound,
    // libm's log1pf within 1 ulp.
    let fast = OddsBounds {
        de: 2.0 * U,
        rl: LN1P_MAX_REL,
    };
    let libm = OddsBounds {
        de: 2.0 * U,
        rl: 2.0 * U,
    };
    let (mut wf, mut wl) = (OddsWorst::default(), OddsWorst::default());
    let (mut dp, mut dflip, mut dstay, mut dflip_small, mut dflip_unit) =
        (0f64, 0f64, 0f64, 0f64, 0f64);
    let mut n = 0u64;
    let logits = bits(0, u32::MAX, 401)
        .filter(|l| l.is_finite())
        .chain(window(0.0, 1 << 16))
        .chain(window(-0.0, 1 << 16));
    for l in logits {
        let a = check_odds::<Fast>(&fast, l, &mut wf);
        let b = check_odds::<Libm>(&libm, l, &mut wl);
        dp = dp.max((a.p_flip - b.p_flip).abs().into());
        let df = f64::from((a.ln_flip - b.ln_flip).abs());
        dflip = dflip.max(df);
        dstay = dstay.max((a.ln_stay - b.ln_stay).abs().into());
        if l.abs() <= 20.0 {
            dflip_small = dflip_small.max(df);
        }
        if l.abs() <= 1.0 {
            dflip_unit = dflip_unit.max(df);
        }
        n += 1;
    }
    println!("logits checked: {n}");
    println!("Fast error / bound: {wf:?}");
    println!("Libm error / bound: {wl:?}");
    println!(
        "max |Δp_flip| = {dp:e}, max |Δln_flip| = {dflip:e} (|l| ≤ 20: {dflip_small:e}, \
         |l| ≤ 1: {dflip_unit:e}), \
         max |Δln_stay| = {dstay:e}"
    );
    assert!(n >= 10_000_000);
    // Triangle inequality on the two bounds above, with p ≤ 1, e ≤ 1, ln(1 + e) ≤ ln 2 and, for
    // |l| ≤ 20, |ln_flip| ≤ 20.7.
    let slack = 1.0 + 1e-3;
    let bp = slack * 2.0 * (2.0 * U + 3.0 * U) + 4.0 * TINY;
    let bflip = slack * ((LN1P_MAX_REL + 2.0 * U) * 0.7 + 4.0 * U + 2.0 * U * 20.7) + 2.0 * TINY;
    assert!(dp <= bp, "Δp_flip {dp:e} > {bp:e}");
    assert!(dflip_small <= bflip, "Δln_flip {dflip_small:e} > {bflip:e}");
}

#[test]
fn flip_odds_extreme_logits() {
    let same = |l: f32| {
        let a = FlipOdds::new::<Fast>(l);
        let b = FlipOdds::new::<Libm>(l);
        for (x, y) in [
            (a.p_flip, b.p_flip),
            (a.ln_flip, b.ln_flip),
            (a.ln_stay, b.ln_stay),
        ] {
            assert!(
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                "logit {l:e}: {a:?} vs {b:?}"
            );
        }
        a
    };
    for l in [700.0f32, 1e30, f32::MAX, f32::INFINITY] {
        let o = same(l);
        assert_eq!((o.p_flip, o.ln_flip), (1.0, 0.0), "logit {l:e}");
        assert_eq!(o.ln_stay, -l, "logit {l:e}");
        let o = same(-l);
        assert_eq!((o.p_flip, o.ln_stay), (0.0, 0.0), "logit {:e}", -l);
        assert_eq!(o.ln_flip, -l, "logit {:e}", -l);
    }
    for l in [0.0f32, -0.0] {
        let o = FlipOdds::new::<Fast>(l);
        assert_eq!(o.p_flip, 0.5);
        assert_eq!(o.ln_flip, o.ln_stay);
        assert!((f64::from(o.ln_flip) + core::f64::consts::LN_2).abs() <= LN1P_MAX_ABS);
    }
    for b in [0x7fc0_0000u32, 0xffc0_0000, 0x7f80_0001] {
        let o = same(f32::from_bits(b));
        assert!(
            o.p_flip.is_nan() && o.ln_flip.is_nan() && o.ln_stay.is_nan(),
            "{o:?}"
        );
    }
}

/// Every `f32` of `[−104, 89]` (about 2.2·10^9 inputs) and every input beyond the clamps:
/// about a minute of CPU time in release.
#[test]
#[ignore = "exhaustive; run with --ignored"]
fn exp_exhaustive() {
    let mut w = Worst::default();
    for (lo, hi) in exp_domain() {
        w = w.merge(par_range(lo, hi, |a, b| {
            let mut w = Worst::default();
            bits(a, b, 1).for_each(|x| check_exp(&mut w, x));
            w
        }));
    }
    assert_exp_bounds(&w);
    // Beyond the clamps: +∞ above, +0 below, exactly.
    let rest = [
        (89.0f32.to_bits() + 1, 0x7f80_0000),
        ((-104.0f32).to_bits() + 1, 0xff80_0000),
    ];
    for (lo, hi) in rest {
        par_range(lo, hi, |a, b| {
            bits(a, b, 1)
                .for_each(|x| assert!(Fast::exp(x) == if x > 0.0 { f32::INFINITY } else { 0.0 }));
            Worst::default()
        });
    }
}

/// Every `f32` of `[0, 1]` (about 1.07·10^9 inputs): about half a minute of CPU time.
#[test]
#[ignore = "exhaustive; run with --ignored"]
fn ln1p_exhaustive() {
    let w = par_range(0, 1.0f32.to_bits(), |a, b| {
        let mut w = Worst::default();
        bits(a, b, 1).for_each(|x| check_ln1p(&mut w, x));
        w
    });
    assert_ln1p_bounds(&w);
}
