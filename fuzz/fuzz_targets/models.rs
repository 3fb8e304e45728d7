//! The models with incremental updates (Ising lattice and graph, dense quadratic, RBM) under
//! DULA or DMALA, parameters and the random stream from the input. Checks that constructors
//! accept exactly the valid parameters, and after every step that the state is binary, the
//! cached log-density and gradient are finite and equal a fresh evaluation at the state (bit
//! for bit where the model's arithmetic is exact, within a bound derived from the parameters'
//! magnitudes otherwise), that the statistics stay finite, and that the same input gives the
//! same output.
#![no_main]

use core::convert::Infallible;
use langevin_core::BinaryTarget;
use langevin_core::binary::{BinaryChain, Dmala, Dula, FlipProposal};
use langevin_core::models::{BinaryQuadratic, Dims, IsingGraph, IsingLattice, Rbm};
use langevin_core::stats::ChainStats;
use langevin_fuzz::{ByteRng, Input, OwnedBuffers};

/// How closely a cached value must match a fresh evaluation, after `t + 1` steps: `None` means
/// bit for bit, `Some(tol)` means `|cached − fresh| ≤ tol` (any bound when `tol` is infinite,
/// i.e. when the parameters' magnitudes overflow the bound).
struct Check<'s> {
    name: &'static str,
    u: &'s dyn Fn(usize) -> Option<f64>,
    g: &'s dyn Fn(usize, usize) -> Option<f64>,
}

fn close(a: f64, b: f64, tol: Option<f64>) -> bool {
    // f32 results at or beyond ±MAX have overflowed; a different summation order may round one
    // to ±MAX and the other to ±∞.
    let max = f64::from(f32::MAX);
    if tol.is_some() && a.abs() >= max && b.abs() >= max {
        return a.signum() == b.signum();
    }
    match tol {
        None => a.to_bits() == b.to_bits(),
        // An allowed error at the scale of the f32 range means the sum cancels terms near ±MAX:
        // either evaluation may overflow, to either sign, so nothing more can be asked.
        Some(tol) if tol >= f64::from(f32::MAX) / 4.0 && (a.is_infinite() || b.is_infinite()) => {
            true
        }
        // One side overflowed: the other may be just inside the range, within `tol` of its edge.
        Some(tol) if a.is_infinite() != b.is_infinite() => {
            let (inf, finite) = if a.is_infinite() { (a, b) } else { (b, a) };
            !tol.is_finite() || (inf.signum() == finite.signum() && finite.abs() + tol >= max)
        }
        Some(tol) => !tol.is_finite() || (a - b).abs() <= tol + f64::from(f32::MIN_POSITIVE),
    }
}

#[allow(clippy::too_many_arguments)]
fn drive<T, F>(
    model: &mut T,
    fresh: &mut F,
    check: Check<'_>,
    x0: Vec<u8>,
    metropolis: bool,
    proposal: FlipProposal<'static>,
    steps: usize,
    rng: &mut ByteRng<'_>,
) -> Vec<u64>
where
    T: BinaryTarget<Error = Infallible>,
    F: BinaryTarget<Error = Infallible>,
{
    let d = x0.len();
    let mut out = Vec::new();
    let mut owned = OwnedBuffers::new(&x0);
    let buffers = owned.buffers();
    let mut g_fresh = vec![0.0f32; d];
    let u0 = fresh
        .log_density_and_grad(&x0, &mut g_fresh)
        .unwrap_or_else(|e| match e {});
    let mut chain = match BinaryChain::new(buffers, model) {
        Ok(c) => c,
        Err(e) => {
            assert!(
                !u0.is_finite() || g_fresh.iter().any(|v| !v.is_finite()),
                "{e:?} at a finite start"
            );
            return out;
        }
    };
    let dula = Dula::new(proposal);
    let dmala = Dmala::new(proposal);
    let mut stats = ChainStats::default();
    for t in 0..steps {
        let r = if metropolis {
            dmala.step(model, &mut chain, rng)
        } else {
            dula.step(model, &mut chain, rng)
        }
        .expect("an infallible model with consistent lengths");
        stats.record(&r);
        assert!(chain.state().iter().all(|&v| v <= 1), "state out of range");
        assert!(chain.log_density().is_finite(), "cached U not finite");
        assert!(
            chain.grad().iter().all(|g| g.is_finite()),
            "cached gradient not finite"
        );
        let u = fresh
            .log_density_and_grad(chain.state(), &mut g_fresh)
            .unwrap_or_else(|e| match e {});
        assert!(
            close(chain.log_density(), u, (check.u)(t)),
            "{} step {t}: cached U {} vs fresh {u} (tolerance {:?})",
            check.name,
            chain.log_density(),
            (check.u)(t)
        );
        for (i, (&c, &f)) in chain.grad().iter().zip(&g_fresh).enumerate() {
            assert!(
                close(f64::from(c), f64::from(f), (check.g)(t, i)),
                "{} step {t}: cached gradient[{i}] {c} vs fresh {f} (tolerance {:?}), state {:?}",
                check.name,
                (check.g)(t, i),
                chain.state()
            );
        }
        out.push(chain.log_density().to_bits());
        out.extend(chain.state().iter().map(|&v| u64::from(v)));
        out.push(u64::from(r.accepted));
    }
    for m in [
        stats.acceptance_rate(),
        stats.mean_proposed_flips(),
        stats.mean_accepted_flips(),
    ] {
        assert!(m.is_finite() && m >= 0.0);
    }
    out
}

fn abs(v: f32) -> f64 {
    f64::from(v).abs()
}

fn run(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let which = input.u8() % 4;
    let metropolis = input.bool();
    let step = [1e-30, 0.1, 0.5, 2.0, 1e30][usize::from(input.u8() % 5)];
    let balance = [0.5, 1.0, 1e-3][usize::from(input.u8() % 3)];
    let steps = 1 + usize::from(input.u8() % 32);
    let proposal = FlipProposal::new(step, balance).expect("valid parameters");
    match which {
        0 => {
            let (rows, cols) = (usize::from(input.u8() % 10), usize::from(input.u8() % 10));
            let (j, h, periodic) = (input.f32(), input.f32(), input.bool());
            let x0: Vec<u8> = (0..rows * cols).map(|_| input.u8() & 1).collect();
            let mut rng = ByteRng::new(input.rest());
            let dims = Dims { rows, cols };
            let m = IsingLattice::with_dims(dims, j, h, periodic);
            assert_eq!(m.is_ok(), rows * cols > 0 && j.is_finite() && h.is_finite());
            let Ok(mut m) = m else { return Vec::new() };
            let mut fresh = m;
            let d = rows * cols;
            // Neighbour sums are small integers: gradients are exact; U accumulates f64
            // rounding of terms bounded by |J|·2d + |h|·d per step.
            let scale_u = d as f64 * (2.0 * abs(j) + abs(h));
            let u = |t: usize| Some(1e-12 * (t + 2) as f64 * scale_u);
            let check = Check {
                name: "lattice",
                u: &u,
                g: &|_, _| None,
            };
            drive(
                &mut m, &mut fresh, check, x0, metropolis, proposal, steps, &mut rng,
            )
        }
        1 => {
            let d = 1 + usize::from(input.u8() % 12);
            let mut adj: Vec<Vec<(u32, f32)>> = vec![Vec::new(); d];
            for _ in 0..input.u8() % 17 {
                let (i, k, c) = (
                    usize::from(input.u8()) % d,
                    usize::from(input.u8()) % d,
                    input.f32(),
                );
                if i != k && !adj[i].iter().any(|&(n, _)| n as usize == k) {
                    adj[i].push((k as u32, c));
                    adj[k].push((i as u32, c));
                }
            }
            let corruption = input.u8() % 8;
            let mut corrupted = false;
            match corruption {
                1 => {
                    if let Some(e) = adj.iter_mut().flat_map(|a| a.iter_mut()).next() {
                        e.1 = if e.1 == 0.0 { 1.0 } else { -e.1 };
                        corrupted = true;
                    }
                }
                2 => {
                    adj[0].push((0, 1.0));
                    corrupted = true;
                }
                3 => {
                    adj[d - 1].push((d as u32, 1.0));
                    corrupted = true;
                }
                _ => {}
            }
            let field: Vec<f32> = (0..d).map(|_| input.f32()).collect();
            let x0: Vec<u8> = (0..d).map(|_| input.u8() & 1).collect();
            let mut rng = ByteRng::new(input.rest());
            let mut offsets = vec![0u32];
            let (mut nb, mut cp) = (Vec::new(), Vec::new());
            for a in &adj {
                for &(n, c) in a {
                    nb.push(n);
                    cp.push(c);
                }
                offsets.push(nb.len() as u32);
            }
            let finite = cp.iter().chain(&field).all(|v| v.is_finite());
            let m = IsingGraph::new(&offsets, &nb, &cp, &field);
            // A NaN coupling also breaks the symmetry check, so only finite graphs are judged.
            if finite {
                assert_eq!(m.is_ok(), !corrupted, "graph {adj:?}");
            } else {
                assert!(m.is_err());
            }
            let Ok(mut m) = m else { return Vec::new() };
            let mut fresh = m;
            // Gradients are recomputed from the state with the same sums: exact.
            let scale_u = cp.iter().map(|&c| abs(c)).sum::<f64>()
                + field.iter().map(|&h| abs(h)).sum::<f64>();
            let u = |t: usize| Some(1e-12 * (t + 2) as f64 * scale_u);
            let check = Check {
                name: "graph",
                u: &u,
                g: &|_, _| None,
            };
            drive(
                &mut m, &mut fresh, check, x0, metropolis, proposal, steps, &mut rng,
            )
        }
        2 => {
            let d = 1 + usize::from(input.u8() % 12);
            let w: Vec<f32> = (0..d * d).map(|_| input.f32()).collect();
            let b: Vec<f32> = (0..d).map(|_| input.f32()).collect();
            let short = input.u8().is_multiple_of(16);
            let x0: Vec<u8> = (0..d).map(|_| input.u8() & 1).collect();
            let mut rng = ByteRng::new(input.rest());
            let mut cache = vec![0.0f64; 2 * d];
            let mut cache2 = vec![0.0f64; 2 * d];
            if short {
                assert!(BinaryQuadratic::new(&w[1..], &b, &mut cache).is_err());
                assert!(BinaryQuadratic::new(&w, &b, &mut cache[1..]).is_err());
            }
            let finite = w.iter().chain(&b).all(|v| v.is_finite());
            let m = BinaryQuadratic::new(&w, &b, &mut cache);
            assert_eq!(m.is_ok(), finite);
            let Ok(mut m) = m else { return Vec::new() };
            let mut fresh = BinaryQuadratic::new(&w, &b, &mut cache2).expect("same parameters");
            let scale_g: Vec<f64> = (0..d)
                .map(|i| {
                    (0..d)
                        .map(|k| abs(w[i * d + k]) + abs(w[k * d + i]))
                        .sum::<f64>()
                        + abs(b[i])
                })
                .collect();
            // The f64 gradient cache drifts by f64 rounding of its updates (relative 1e-13 of
            // the row and column magnitudes here); the f32 output adds one rounding.
            let scale_u = w.iter().chain(&b).map(|&v| abs(v)).sum::<f64>();
            let u = |t: usize| Some(1e-9 * (t + 2) as f64 * scale_u);
            let g = |_: usize, i: usize| Some(1e-6 * scale_g[i]);
            let check = Check {
                name: "quadratic",
                u: &u,
                g: &g,
            };
            drive(
                &mut m, &mut fresh, check, x0, metropolis, proposal, steps, &mut rng,
            )
        }
        _ => {
            let v = 1 + usize::from(input.u8() % 12);
            let h = usize::from(input.u8() % 9);
            let w: Vec<f32> = (0..h * v).map(|_| input.f32()).collect();
            let b: Vec<f32> = (0..v).map(|_| input.f32()).collect();
            let c: Vec<f32> = (0..h).map(|_| input.f32()).collect();
            let x0: Vec<u8> = (0..v).map(|_| input.u8() & 1).collect();
            let mut rng = ByteRng::new(input.rest());
            let mut cache = vec![0.0f64; 2 * h];
            let mut cache2 = vec![0.0f64; 2 * h];
            let finite = w.iter().chain(&b).chain(&c).all(|x| x.is_finite());
            let m = Rbm::new(&w, &b, &c, &mut cache);
            assert_eq!(m.is_ok(), finite);
            let Ok(mut m) = m else { return Vec::new() };
            let mut fresh = Rbm::new(&w, &b, &c, &mut cache2).expect("same parameters");
            // The f64 pre-activation cache p_j drifts from a fresh sum by f64 rounding relative
            // to its row's magnitude P_j = |c_j| + Σ_i |W_ji| (cancellation: a fresh sum keeps
            // small terms that the cache lost next to a huge one). softplus is 1-Lipschitz and
            // sigmoid ¼-Lipschitz (and bounded by 1), and both are evaluated in f32.
            let rows: Vec<f64> = (0..h)
                .map(|j| abs(c[j]) + (0..v).map(|i| abs(w[j * v + i])).sum::<f64>())
                .collect();
            let dp = |t: usize, j: usize| 4.0 * f64::EPSILON * ((v + 2) * (t + 2)) as f64 * rows[j];
            let scale_u = w.iter().chain(&b).chain(&c).map(|&x| abs(x)).sum::<f64>() + h as f64;
            let u = |t: usize| Some((0..h).map(|j| dp(t, j)).sum::<f64>() + 1e-6 * scale_u);
            let g = |t: usize, i: usize| {
                let spread: f64 = (0..h)
                    .map(|j| abs(w[j * v + i]) * (dp(t, j) / 4.0 + 1e-6).min(1.0))
                    .sum();
                // f32 rounding of the sum b_i + Σ_j σ_j W_ji itself.
                let rounding = 1e-6 * ((0..h).map(|j| abs(w[j * v + i])).sum::<f64>() + abs(b[i]));
                Some(spread + rounding)
            };
            let check = Check {
                name: "rbm",
                u: &u,
                g: &g,
            };
            drive(
                &mut m, &mut fresh, check, x0, metropolis, proposal, steps, &mut rng,
            )
        }
    }
}

langevin_fuzz::deterministic_fuzz_target!(run);
