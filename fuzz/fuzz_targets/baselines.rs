//! The baseline samplers on targets with arbitrary (tabled) energies, gradients and errors, the
//! random stream from the input: single-site Gibbs (random and systematic scan) as a kernel on
//! binary, ordinal and categorical chains and on raw binary and label states, Gibbs-with-
//! gradients on binary and categorical chains, random-walk Metropolis at a fixed and a tuned
//! rate. Checks that constructors accept exactly the valid parameters; the chain invariants of
//! the binary and label drivers after every step and reset; that Gibbs and random-walk steps do
//! exactly what an independent replay from a clone of the random stream says (site, uniform,
//! report bit for bit, next state, random words); that an accepted GWG move has the ratio
//! `ΔU + log_pick(back) − log_pick(forward)` bit for bit; that the tuned walk's rate stays in
//! `[2^-32, ½]` and freezes after the burn-in; and that the same input gives the same output.
#![no_main]

use langevin_core::baselines::{Gibbs, Gwg, RandomWalk, Scan, TunedRandomWalk};
use langevin_core::binary::{Rejection, StepError, StepReport};
use langevin_core::math::sigmoid;
use langevin_core::ordinal::{CategoricalDomain, OrdinalDomain};
use langevin_core::random::{index, open_unit_f64, unit_f64};
use langevin_core::{Chain, Kernel};
use langevin_fuzz::drive::{self, BinarySetup, MIN_LOG_U, TabledDomain, draw_softmax, report_bits};
use langevin_fuzz::labels::{self, LabelSetup, LabelTabled};
use langevin_fuzz::{ByteRng, Input, TableError};

/// The site and uniform a Gibbs update draws, replayed.
/// The sites a Gibbs scan visits, replayed: uniformly at random, or in order from the first.
#[derive(Clone, Copy, Debug)]
struct Sites {
    scan: Scan,
    next: usize,
}

impl Sites {
    fn new(scan: Scan) -> Self {
        Self { scan, next: 0 }
    }

    /// The next site of `d` and the uniform that updates it.
    fn draw(&mut self, d: usize, r: &mut ByteRng<'_>) -> (usize, f64) {
        let i = match self.scan {
            Scan::Random => index(r, d),
            Scan::Systematic => {
                let i = if self.next < d { self.next } else { 0 };
                self.next = i + 1;
                i
            }
        };
        (i, unit_f64(r))
    }

    /// The reference for `updates` single-site Gibbs updates of `x`, drawn from a clone of
    /// `rng`: `update(y, i, u)` updates site `i` of `y` with the uniform `u` and says whether it
    /// moved (a recoverable error leaves the site and says no); `Err(())`, a fatal error, ends
    /// the replay. Returns the replayed state, the moves (or the fatal error) and the replayed
    /// stream's word count.
    fn replay<V: Clone>(
        &mut self,
        x: &[V],
        updates: usize,
        rng: &ByteRng<'_>,
        mut update: impl FnMut(&mut [V], usize, f64) -> Result<bool, ()>,
    ) -> (Vec<V>, Result<u32, ()>, u64) {
        let mut r = rng.clone();
        let mut y = x.to_vec();
        let mut want = Ok(0u32);
        for _ in 0..updates {
            let (i, u) = self.draw(x.len(), &mut r);
            match update(&mut y, i, u) {
                Ok(moved) => want = want.map(|n| n + u32::from(moved)),
                Err(()) => {
                    want = Err(());
                    break;
                }
            }
        }
        (y, want, r.words)
    }
}

fn rejected(mut r: StepReport, why: Rejection) -> StepReport {
    r.accepted = false;
    r.log_accept_ratio = f64::NEG_INFINITY;
    r.rejection = Some(why);
    r
}

/// What a kernel that evaluates the target once must report for a proposal whose evaluation is
/// `eval`, from a chain at `log_density`: an unrecoverable target error ends the run, a
/// recoverable one or a non-finite value rejects, and otherwise `accept(ratio)` decides.
fn one_evaluation(
    eval: Result<(f64, Vec<f32>), TableError>,
    log_density: f64,
    base: StepReport,
    accept: impl FnOnce(f64) -> bool,
) -> Result<StepReport, ()> {
    match eval {
        Err(e) if !e.recoverable => Err(()),
        Err(_) => Ok(rejected(base, Rejection::TargetError)),
        Ok((v, g)) if !v.is_finite() || g.iter().any(|x| !x.is_finite()) => {
            Ok(rejected(base, Rejection::NonFinite))
        }
        Ok((v, _)) => {
            let ratio = v - log_density;
            Ok(StepReport {
                accepted: accept(ratio),
                log_accept_ratio: ratio,
                ..base
            })
        }
    }
}

fn same(want: &Result<StepReport, ()>, got: &Result<StepReport, StepError<TableError>>) {
    match (want, got) {
        (Err(()), Err(StepError::Target(e))) => assert!(!e.recoverable),
        (Ok(w), Ok(g)) => assert_eq!(report_bits(w), report_bits(g), "{g:?} vs {w:?}"),
        (w, g) => panic!("step gave {g:?}, expected {w:?}"),
    }
}

fn binary(data: &[u8], mode: u8) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = BinarySetup::read(&mut input, 24, 24);
    let d = setup.d;
    let scan = input.either(Scan::Random, Scan::Systematic);
    let rate = input.f64();
    let burn_in = u64::from(input.u8() % 16);
    let accept = input.f64();
    let rng = ByteRng::new(input.rest());
    let mut gibbs = Gibbs::new(scan);
    assert_eq!(gibbs.scan(), scan);
    let mut sites = Sites::new(scan);
    match mode {
        0 => drive::drive(setup, rng, &mut |_, target, chain, rng| {
            // Gibbs as a kernel: one evaluation at the flipped state, flip w.p. sigmoid(ΔU).
            let mut r = rng.clone();
            let (i, u) = sites.draw(d, &mut r);
            let mut y = chain.state().to_vec();
            y[i] ^= 1;
            let base = StepReport {
                accepted: false,
                proposed_flips: 1,
                log_accept_ratio: 0.0,
                rejection: None,
                evaluations: 1,
            };
            let want = one_evaluation(target.at(&y), chain.log_density(), base, |ratio| {
                u < sigmoid(ratio)
            });
            let words = rng.words;
            let got = Kernel::step(&mut gibbs, target, chain, rng);
            assert_eq!(rng.words - words, r.words - words, "random words");
            same(&want, &got);
            if got.as_ref().is_ok_and(|g| g.accepted) {
                assert_eq!(chain.state(), &y[..]);
            }
            got
        }),
        1 => drive::drive(setup, rng, &mut |_, target, chain, rng| {
            gwg_step(target, chain, rng, |x, g, i, chain| {
                let fwd = Gwg::log_pick(x, g, i).unwrap();
                let back = Gwg::log_pick(chain.state(), chain.grad(), i).unwrap();
                (fwd, back)
            })
        }),
        _ => {
            let tuned = mode == 3;
            let walk = RandomWalk::new(rate);
            let valid = rate > 0.0 && rate < 1.0 && rate * 4_294_967_296.0 >= 1.0;
            assert_eq!(walk.is_ok(), valid, "rate {rate}");
            let mut tuner = if tuned {
                let t = TunedRandomWalk::new(rate, burn_in, accept);
                let start = rate.min(0.5);
                let valid = !rate.is_nan()
                    && start > 0.0
                    && start * 4_294_967_296.0 >= 1.0
                    && accept > 0.0
                    && accept < 1.0;
                assert_eq!(t.is_ok(), valid, "initial {rate}, acceptance {accept}");
                match t {
                    Ok(t) => Some(t),
                    Err(_) => return Vec::new(),
                }
            } else {
                None
            };
            let Ok(walk) = walk.or_else(|e| if tuned { RandomWalk::new(0.5) } else { Err(e) })
            else {
                return Vec::new();
            };
            let mut taken = 0u64;
            drive::drive(setup, rng, &mut |_, target, chain, rng| {
                let kernel = tuner.map_or(walk, |t| t.kernel());
                let p = kernel.flip_probability();
                assert!(
                    p > 0.0 && p <= 0.5 || !tuned && p < 1.0,
                    "flip probability {p}"
                );
                let threshold = (p * 4_294_967_296.0) as u32;
                // Replay: 32 bits per coordinate, low half of a word first, then the uniform.
                let mut r = rng.clone();
                let mut y = chain.state().to_vec();
                let mut word = 0u64;
                for (j, v) in y.iter_mut().enumerate() {
                    if j % 2 == 0 {
                        word = rand_core::Rng::next_u64(&mut r);
                    }
                    let bits = if j % 2 == 0 {
                        word as u32
                    } else {
                        (word >> 32) as u32
                    };
                    *v ^= u8::from(bits < threshold);
                }
                let log_u = libm::log(open_unit_f64(&mut r));
                let flips = y.iter().zip(chain.state()).filter(|(a, b)| a != b).count() as u32;
                let base = StepReport {
                    accepted: true,
                    proposed_flips: flips,
                    log_accept_ratio: 0.0,
                    rejection: None,
                    evaluations: u32::from(flips > 0),
                };
                let want = if flips == 0 {
                    Ok(base)
                } else {
                    one_evaluation(target.at(&y), chain.log_density(), base, |ratio| {
                        log_u < ratio
                    })
                };
                let words = rng.words;
                let got = match &mut tuner {
                    Some(t) => Kernel::step(t, target, chain, rng),
                    None => Kernel::step(&mut kernel.clone(), target, chain, rng),
                };
                assert_eq!(rng.words - words, r.words - words, "random words");
                assert_eq!(rng.words - words, d.div_ceil(2) as u64 + 1);
                same(&want, &got);
                if got.as_ref().is_ok_and(|g| g.accepted) {
                    assert_eq!(chain.state(), &y[..]);
                }
                if let Some(t) = &tuner {
                    if got.is_ok() {
                        taken += 1;
                    }
                    let rate = t.rate();
                    assert!(rate.is_finite() && rate <= 0.5 && rate * 4_294_967_296.0 >= 1.0);
                    assert_eq!(t.is_frozen(), taken >= burn_in, "frozen after {taken}");
                    if t.is_frozen() && got.is_ok() && taken > burn_in {
                        assert_eq!(rate.to_bits(), kernel.rate().to_bits(), "rate moved");
                    }
                }
                got
            })
        }
    }
}

/// Compares raw Gibbs updates with their replay: the same number of moves, the same state
/// (`(got, replayed)`) and the same random words (`(drawn, replayed)`); or the same
/// unrecoverable failure, for which it returns `false` (the run stops).
fn replayed<V: PartialEq + core::fmt::Debug>(
    want: Result<u32, ()>,
    got: Result<u32, StepError<TableError>>,
    states: (&[V], &[V]),
    words: (u64, u64),
) -> bool {
    match (want, got) {
        (Ok(n), Ok(m)) => {
            assert_eq!(n, m, "moves");
            assert_eq!(states.0, states.1, "state");
            assert_eq!(words.0, words.1, "random words");
            true
        }
        (Err(()), Err(StepError::Target(e))) => {
            assert!(!e.recoverable);
            false
        }
        (w, g) => panic!("update gave {g:?}, expected {w:?}"),
    }
}

fn raw_binary(data: &[u8]) -> Vec<u64> {
    // Gibbs on a raw state through FlipDelta: update by update, then whole sweeps.
    let mut input = Input::new(data);
    let setup = BinarySetup::read(&mut input, 24, 8);
    let d = setup.d;
    let mut target = setup.target;
    let mut x: Vec<u8> = setup.x0.iter().map(|&v| v & 1).collect();
    let scan = input.either(Scan::Random, Scan::Systematic);
    let mut rng = ByteRng::new(input.rest());
    let mut gibbs = Gibbs::new(scan);
    let mut sites = Sites::new(scan);
    let mut out = Vec::new();
    for t in 0..setup.resets.len() {
        let updates = if t % 2 == 0 { 1 } else { d };
        let (y, want, r_words) = sites.replay(&x, updates, &rng, |y: &mut [u8], i, u| {
            let delta =
                match langevin_core::baselines::FlipDelta::log_density_delta(&mut target, y, i) {
                    Ok(v) => v,
                    Err(e) if e.recoverable => return Ok(false),
                    Err(_) => return Err(()),
                };
            // A non-finite ΔU keeps the bit.
            let flip = delta.is_finite() && u < sigmoid(delta);
            if flip {
                y[i] ^= 1;
            }
            Ok(flip)
        });
        let words = rng.words;
        let mut z = x.clone();
        let got = if updates == 1 {
            gibbs
                .update_binary(&mut target, &mut z, &mut rng)
                .map(u32::from)
        } else {
            gibbs.sweep_binary(&mut target, &mut z, &mut rng)
        };
        if !replayed(want, got, (&z, &y), (rng.words - words, r_words - words)) {
            return out;
        }
        x = z;
        out.extend(x.iter().map(|&v| u64::from(v)));
    }
    assert!(
        gibbs
            .update_binary(&mut target, &mut x[..d - 1], &mut rng)
            .is_err()
    );
    out
}

/// Gibbs on a label chain, replayed: `S − 1` evaluations price the alternatives, one more
/// refreshes the gradient of the value drawn.
fn gibbs_labels<K: labels::LabelDomain>(
    data: &[u8],
    step: impl Fn(
        &mut Gibbs,
        &mut LabelTabled,
        &mut langevin_core::ordinal::LabelChain<'_, K>,
        &mut ByteRng<'_>,
    ) -> Result<StepReport, StepError<TableError>>,
) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = LabelSetup::read(&mut input, K::CATEGORICAL, 8, 8, 12);
    let d = setup.d;
    let s = setup.s;
    let scan = input.either(Scan::Random, Scan::Systematic);
    let rng = ByteRng::new(input.rest());
    let mut gibbs = Gibbs::new(scan);
    let mut sites = Sites::new(scan);
    labels::drive::<K>(setup, rng, &mut |_, target, chain, rng| {
        let mut r = rng.clone();
        let (i, u) = sites.draw(d, &mut r);
        let x = chain.state().to_vec();
        let old = usize::from(x[i]);
        let mut evals = 0u32;
        let mut w = vec![0.0f64; s];
        let mut failed = false;
        for (k, wk) in w.iter_mut().enumerate() {
            if k == old {
                continue;
            }
            let mut y = x.clone();
            y[i] = k as u16;
            evals += 1;
            *wk = match target.at(&y) {
                Err(e) if !e.recoverable => {
                    failed = true;
                    break;
                }
                Ok((v, g)) if v.is_finite() && g.iter().all(|x| x.is_finite()) => {
                    v - chain.log_density()
                }
                _ => f64::NEG_INFINITY,
            };
        }
        let k = draw_softmax(&w, u, old);
        let want = if failed {
            Err(())
        } else if k == old {
            Ok(StepReport {
                accepted: true,
                proposed_flips: 0,
                log_accept_ratio: 0.0,
                rejection: None,
                evaluations: evals,
            })
        } else {
            let mut y = x.clone();
            y[i] = k as u16;
            let (v, _) = target.at(&y).expect("priced without error");
            Ok(StepReport {
                accepted: true,
                proposed_flips: 1,
                log_accept_ratio: v - chain.log_density(),
                rejection: None,
                evaluations: evals + 1,
            })
        };
        let words = rng.words;
        let got = step(&mut gibbs, target, chain, rng);
        assert_eq!(rng.words - words, r.words - words, "random words");
        same(&want, &got);
        if let Ok(g) = &got {
            assert!(g.proposed_flips > 0 || chain.state() == &x[..]);
            if g.proposed_flips > 0 {
                assert_eq!(usize::from(chain.state()[i]), k);
            }
        }
        got
    })
}

fn raw_labels(data: &[u8], categorical: bool) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = LabelSetup::read(&mut input, categorical, 8, 8, 8);
    let (d, s) = (setup.d, setup.s);
    if !(2..=300).contains(&s) {
        return Vec::new();
    }
    let mut target = setup.target;
    let mut x: Vec<u16> = setup.x0.iter().map(|&v| v % s as u16).collect();
    let scan = input.either(Scan::Random, Scan::Systematic);
    let mut rng = ByteRng::new(input.rest());
    let mut gibbs = Gibbs::new(scan);
    let mut sites = Sites::new(scan);
    let mut scratch = vec![0.0f64; s];
    let mut out = Vec::new();
    for t in 0..setup.resets.len() {
        let updates = if t % 2 == 0 { 1 } else { d };
        let (y, want, r_words) = sites.replay(&x, updates, &rng, |y: &mut [u16], i, u| {
            let mut w = vec![0.0f64; s];
            match target.conditional_of(y, i, &mut w) {
                Ok(()) => {}
                Err(e) if e.recoverable => return Ok(false),
                Err(_) => return Err(()),
            }
            let old = usize::from(y[i]);
            let k = draw_softmax(&w, u, old);
            y[i] = k as u16;
            Ok(k != old)
        });
        let words = rng.words;
        let mut z = x.clone();
        let got = match (categorical, updates == 1) {
            (false, true) => gibbs
                .update_ordinal(&mut target, &mut z, &mut scratch, &mut rng)
                .map(u32::from),
            (false, false) => gibbs.sweep_ordinal(&mut target, &mut z, &mut scratch, &mut rng),
            (true, true) => gibbs
                .update_categorical(&mut target, &mut z, &mut scratch, &mut rng)
                .map(u32::from),
            (true, false) => gibbs.sweep_categorical(&mut target, &mut z, &mut scratch, &mut rng),
        };
        if !replayed(want, got, (&z, &y), (rng.words - words, r_words - words)) {
            return out;
        }
        assert!(z.iter().all(|&v| usize::from(v) < s));
        x = z;
        out.extend(x.iter().map(|&v| u64::from(v)));
    }
    assert!(
        gibbs
            .update_ordinal(&mut target, &mut x, &mut scratch[..s - 1], &mut rng)
            .is_err()
    );
    out
}

fn gwg_categorical(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = LabelSetup::read(&mut input, true, 8, 8, 12);
    let s = setup.s;
    let rng = ByteRng::new(input.rest());
    labels::drive::<CategoricalDomain>(setup, rng, &mut |_, target, chain, rng| {
        gwg_step(target, chain, rng, |x, g, i, chain| {
            let k = chain.state()[i];
            let fwd = Gwg::log_pick_categorical(x, g, s, i, k).unwrap();
            let back = Gwg::log_pick_categorical(chain.state(), chain.grad(), s, i, x[i]).unwrap();
            (fwd, back)
        })
    })
}

/// One GWG step, checked: two random words, one proposed flip and one evaluation, and an
/// accepted move `i` has the ratio `ΔU + back − fwd` bit for bit, where `picks(x, ∇U(x), i,
/// chain)` gives the forward and backward log-picks from the state `x` before the step.
fn gwg_step<D: TabledDomain>(
    target: &mut D::Target,
    chain: &mut Chain<'_, D>,
    rng: &mut ByteRng<'_>,
    picks: impl Fn(&[D::Value], &[f32], usize, &Chain<'_, D>) -> (f64, f64),
) -> Result<StepReport, StepError<TableError>>
where
    Gwg: Kernel<D>,
{
    let words = rng.words;
    let before = (
        chain.state().to_vec(),
        chain.grad().to_vec(),
        chain.log_density(),
    );
    let got = Kernel::step(&mut Gwg, target, chain, rng);
    assert_eq!(rng.words - words, 2, "random words");
    if let Ok(r) = &got {
        assert_eq!((r.proposed_flips, r.evaluations), (1, 1));
        if r.accepted {
            let i = (0..chain.dim())
                .find(|&j| before.0[j] != chain.state()[j])
                .unwrap();
            let (fwd, back) = picks(&before.0, &before.1, i, chain);
            let ratio = (chain.log_density() - before.2) + (back - fwd);
            assert_eq!(ratio.to_bits(), r.log_accept_ratio.to_bits(), "GWG ratio");
            assert!(fwd <= 0.0 && back <= 0.0 && ratio > MIN_LOG_U);
        }
    }
    got
}

fn run(data: &[u8]) -> Vec<u64> {
    let Some((&mode, rest)) = data.split_first() else {
        return Vec::new();
    };
    match mode % 10 {
        0..=3 => binary(rest, mode % 10),
        4 => raw_binary(rest),
        5 => gibbs_labels::<OrdinalDomain>(rest, |g, t, c, r| Kernel::step(g, t, c, r)),
        6 => gibbs_labels::<CategoricalDomain>(rest, |g, t, c, r| Kernel::step(g, t, c, r)),
        7 => gwg_categorical(rest),
        8 => raw_labels(rest, false),
        _ => raw_labels(rest, true),
    }
}

langevin_fuzz::deterministic_fuzz_target!(run);
