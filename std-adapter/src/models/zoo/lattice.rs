//! Ordinal models on `{0..S−1}^d`: lattice Gaussians and the lattice mixture.

use super::{ModelSpec, ZooError, at_least, finite, single, spacing};
use langevin_core::random::{shuffle, unit_f64};
use nalgebra::{DMatrix, SymmetricEigen};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The shape of a lattice Gaussian's precision matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GaussianStructure {
    /// `A = P Λ Pᵀ` with `P` a uniformly random orthogonal matrix and `Λ` geometrically spaced:
    /// every coordinate is coupled to every other.
    Rotated,
    /// A pairwise Markov random field on a cycle: `A = D^{½}(I + ρ C)D^{½}` with `C` the
    /// cycle's adjacency (random signs, wrapping from the last coordinate to the first) and `D`
    /// geometrically spaced scales in random order, so the coordinates' variances differ.
    SparseCycle {
        /// `ρ ∈ [0, ½)`, which keeps `I + ρC` positive definite.
        coupling: f64,
    },
}

/// A lattice Gaussian (Sun et al. 2023, Sec. 5.2), written as kind `ordinal_quadratic`:
/// `U(x) = −½(x−μ)ᵀA(x−μ)` over `{0..S−1}^d`, with `μ` the middle of the grid in every
/// coordinate and `b = 0`.
///
/// `A` is scaled so that its smallest eigenvalue is `(8/(S−1))²`: the widest direction has
/// standard deviation `(S−1)/8` and the distribution stays well inside the grid. `condition`
/// is the ratio of the largest to the smallest eigenvalue for [`GaussianStructure::Rotated`]
/// and the spread of the scales `D` for [`GaussianStructure::SparseCycle`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatticeGaussianSpec {
    /// Dimension `d` (≥ 1; ≥ 3 for the cycle).
    pub dim: usize,
    /// States per coordinate `S` (≥ 2).
    pub states: usize,
    /// Rotated or sparse cycle.
    pub structure: GaussianStructure,
    /// Condition (≥ 1).
    pub condition: f64,
    /// Seed of the rotation or of the scales' order and signs.
    pub seed: u64,
}

impl Default for LatticeGaussianSpec {
    fn default() -> Self {
        Self {
            dim: 100,
            states: 21,
            structure: GaussianStructure::Rotated,
            condition: 10.0,
            seed: 0,
        }
    }
}

impl LatticeGaussianSpec {
    /// The precision matrix `A`, `d × d` row-major, symmetric, in single precision.
    ///
    /// # Errors
    ///
    /// [`ZooError`] for parameters out of range.
    pub fn precision(&self) -> Result<Vec<f32>, ZooError> {
        let d = self.dim;
        at_least("dim", d, 1)?;
        at_least("states", self.states, 2)?;
        finite("condition", self.condition, true)?;
        if self.condition < 1.0 {
            return Err(ZooError::new(
                "condition",
                format!("must be at least 1, found {}", self.condition),
            ));
        }
        let lambda_min = (8.0 / (self.states - 1) as f64).powi(2);
        let spread: Vec<f64> = (0..d)
            .map(|k| {
                let t = spacing(k, d);
                self.condition.powf(t)
            })
            .collect();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let a = match self.structure {
            GaussianStructure::Rotated => {
                let p = random_orthogonal(d, &mut rng);
                let scaled = DMatrix::from_diagonal(&nalgebra::DVector::from_iterator(
                    d,
                    spread.iter().map(|&s| s * lambda_min),
                ));
                &p * scaled * p.transpose()
            }
            GaussianStructure::SparseCycle { coupling } => {
                at_least("dim", d, 3)?;
                if !(0.0..0.5).contains(&coupling) {
                    return Err(ZooError::new(
                        "coupling",
                        format!("must be in [0, 0.5), found {coupling}"),
                    ));
                }
                let mut scales = spread;
                shuffle(&mut rng, &mut scales);
                let mut b = DMatrix::<f64>::identity(d, d);
                for i in 0..d {
                    let j = (i + 1) % d;
                    let sign = if unit_f64(&mut rng) < 0.5 { -1.0 } else { 1.0 };
                    b[(i, j)] = sign * coupling;
                    b[(j, i)] = sign * coupling;
                }
                for i in 0..d {
                    for j in 0..d {
                        b[(i, j)] *= (scales[i] * scales[j]).sqrt();
                    }
                }
                let smallest = SymmetricEigen::new(b.clone()).eigenvalues.min();
                b * (lambda_min / smallest)
            }
        };
        let mut out = vec![0.0f32; d * d];
        for i in 0..d {
            for j in i..d {
                let v = single("condition", 0.5 * (a[(i, j)] + a[(j, i)]))?;
                out[i * d + j] = v;
                out[j * d + i] = v;
            }
        }
        Ok(out)
    }

    /// The model file.
    ///
    /// # Errors
    ///
    /// As [`LatticeGaussianSpec::precision`].
    pub fn generate(&self) -> Result<ModelSpec, ZooError> {
        let a = self.precision()?;
        let d = self.dim;
        let middle = (self.states - 1) as f32 / 2.0;
        Ok(ModelSpec::new("ordinal_quadratic")
            .with("states", self.states)
            .with_array("A", &[d, d], a)
            .with_array("mu", &[d], vec![middle; d])
            .with_array("b", &[d], vec![0.0; d]))
    }
}

/// A Haar-distributed orthogonal matrix: the Q factor of a Gaussian matrix, with the signs of
/// R's diagonal moved into Q.
fn random_orthogonal<R: rand_core::Rng + ?Sized>(d: usize, rng: &mut R) -> DMatrix<f64> {
    let mut z = vec![0.0f64; d * d];
    langevin_core::random::fill_normal(rng, &mut z);
    let qr = DMatrix::from_row_slice(d, d, &z).qr();
    let (mut q, r) = (qr.q(), qr.r());
    for j in 0..d {
        if r[(j, j)] < 0.0 {
            q.column_mut(j).neg_mut();
        }
    }
    q
}

/// How the lattice mixture measures the distance to a mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MixtureDistance {
    /// `|θ − μ|₂` (the reference code's form).
    #[default]
    L2,
    /// `|θ − μ|₂²` (the form printed in Pynadath et al. 2024).
    Squared,
}

impl MixtureDistance {
    /// The name a model file uses: `"l2"` or `"squared"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::L2 => "l2",
            Self::Squared => "squared",
        }
    }
}

/// The lattice mixture of Pynadath et al. (2024), Sec. 4.1, written as kind `lattice_mixture`:
/// `U(θ) = ln Σ_k exp(−dist(θ, μ_k) / scale)` over `{0..S−1}^d`, with modes on the grid
/// [`lattice_modes`]`(S, m)` along every axis (`m^d` modes).
///
/// The default is the paper's: `d = 2`, `S = 450`, modes at 75, 150, 225, 300, 375 on each
/// axis (25 modes), `scale = 3.75`, unsquared distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatticeMixtureSpec {
    /// Dimension `d` (≥ 1).
    pub dim: usize,
    /// States per coordinate `S` (≥ `modes_per_axis + 1`).
    pub states: usize,
    /// Modes along each axis `m` (≥ 1).
    pub modes_per_axis: usize,
    /// Scale (> 0).
    pub scale: f64,
    /// Distance to a mode.
    pub distance: MixtureDistance,
}

impl Default for LatticeMixtureSpec {
    fn default() -> Self {
        Self {
            dim: 2,
            states: 450,
            modes_per_axis: 5,
            scale: 3.75,
            distance: MixtureDistance::L2,
        }
    }
}

/// `m` evenly spaced positions in `{0..S−1}`: `round(S k / (m + 1))` for `k = 1..m`. Distinct
/// and inside the grid when `S ≥ m + 1`.
///
/// # Examples
///
/// ```
/// assert_eq!(langevin_std::models::zoo::lattice_modes(450, 5), vec![75, 150, 225, 300, 375]);
/// ```
pub fn lattice_modes(states: usize, modes_per_axis: usize) -> Vec<usize> {
    let (s, m) = (states as f64, modes_per_axis as f64);
    (1..=modes_per_axis)
        .map(|k| (s * k as f64 / (m + 1.0)).round() as usize)
        .collect()
}

/// The largest number of modes a generated mixture may have.
const MAX_MODES: usize = 1 << 20;

impl LatticeMixtureSpec {
    /// The model file.
    ///
    /// # Errors
    ///
    /// [`ZooError`] for parameters out of range or more than 2^20 modes.
    pub fn generate(&self) -> Result<ModelSpec, ZooError> {
        let (d, m) = (self.dim, self.modes_per_axis);
        at_least("dim", d, 1)?;
        at_least("modes_per_axis", m, 1)?;
        at_least("states", self.states, m + 1)?;
        if self.states > 1 << 24 {
            return Err(ZooError::new("states", "must be at most 2^24"));
        }
        finite("scale", self.scale, true)?;
        single("scale", self.scale)?;
        let count = u32::try_from(d)
            .ok()
            .and_then(|d| m.checked_pow(d))
            .filter(|&k| k <= MAX_MODES)
            .ok_or_else(|| {
                ZooError::new(
                    "modes_per_axis",
                    format!("{m}^{d} modes is more than {MAX_MODES}"),
                )
            })?;
        let axis = lattice_modes(self.states, m);
        let mut modes = Vec::with_capacity(count * d);
        for k in 0..count {
            // Mode k's digits in base m, most significant first, pick its position per axis.
            let mut rest = k;
            let mut digits = vec![0usize; d];
            for digit in digits.iter_mut().rev() {
                *digit = rest % m;
                rest /= m;
            }
            modes.extend(digits.iter().map(|&i| axis[i] as f32));
        }
        Ok(ModelSpec::new("lattice_mixture")
            .with("states", self.states)
            .with_array("modes", &[count, d], modes)
            .with("scale", self.scale)
            .with("distance", self.distance.name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::zoo::refused;

    fn matrix(a: &[f32], d: usize) -> DMatrix<f64> {
        DMatrix::from_row_slice(d, d, &a.iter().map(|&x| f64::from(x)).collect::<Vec<_>>())
    }

    #[test]
    fn rotated_precision_has_the_stated_spectrum() {
        let spec = LatticeGaussianSpec {
            dim: 30,
            states: 21,
            structure: GaussianStructure::Rotated,
            condition: 50.0,
            seed: 4,
        };
        let a = spec.precision().unwrap();
        let m = matrix(&a, 30);
        assert_eq!(m, m.transpose());
        let mut eig: Vec<f64> = SymmetricEigen::new(m).eigenvalues.iter().copied().collect();
        eig.sort_by(f64::total_cmp);
        let lambda_min = (8.0f64 / 20.0).powi(2);
        for (k, &e) in eig.iter().enumerate() {
            let want = lambda_min * 50f64.powf(k as f64 / 29.0);
            // Rounding the entries to f32 moves eigenvalues by at most ‖δA‖₂ ≤ d·max|δa|.
            assert!(
                (e - want).abs() < 30.0 * 8.0 * f64::from(f32::EPSILON),
                "{k}: {e} vs {want}"
            );
        }
        // Dense: a rotation couples everything.
        assert!(a.iter().all(|&x| x != 0.0));
    }

    #[test]
    fn sparse_cycle_is_tridiagonal_with_wrap_and_positive_definite() {
        let d = 12;
        let spec = LatticeGaussianSpec {
            dim: d,
            states: 21,
            structure: GaussianStructure::SparseCycle { coupling: 0.4 },
            condition: 20.0,
            seed: 8,
        };
        let a = spec.precision().unwrap();
        for i in 0..d {
            for j in 0..d {
                let near = i == j || (i + 1) % d == j || (j + 1) % d == i;
                assert_eq!(a[i * d + j] != 0.0, near, "entry ({i}, {j})");
                assert_eq!(a[i * d + j], a[j * d + i]);
            }
        }
        let eig = SymmetricEigen::new(matrix(&a, d)).eigenvalues;
        let lambda_min = (8.0f64 / 20.0).powi(2);
        // Rounding the entries to f32 moves eigenvalues by at most d·max|δa|.
        let largest = a.iter().fold(0.0f32, |m, &x| m.max(x.abs()));
        let bound = d as f64 * f64::from(largest) * f64::from(f32::EPSILON);
        assert!((eig.min() - lambda_min).abs() < bound, "{}", eig.min());
        // The diagonal carries the spread of scales.
        let diag: Vec<f32> = (0..d).map(|i| a[i * d + i]).collect();
        let (lo, hi) = diag
            .iter()
            .fold((f32::MAX, 0.0f32), |(l, h), &x| (l.min(x), h.max(x)));
        assert!((f64::from(hi / lo) - 20.0).abs() < 1e-3, "{}", hi / lo);
        assert_eq!(
            refused(
                LatticeGaussianSpec {
                    structure: GaussianStructure::SparseCycle { coupling: 0.5 },
                    ..spec
                }
                .precision()
            ),
            "coupling"
        );
    }

    #[test]
    fn gaussian_file_has_the_ordinal_quadratic_fields() {
        let spec = LatticeGaussianSpec {
            dim: 5,
            ..Default::default()
        }
        .generate()
        .unwrap();
        let doc = spec.to_doc().unwrap();
        assert_eq!(doc.kind, "ordinal_quadratic");
        assert_eq!(doc.count("states").unwrap(), 21);
        assert_eq!(doc.vector("mu").unwrap(), vec![10.0; 5]);
        assert_eq!(doc.vector("b").unwrap(), vec![0.0; 5]);
        assert_eq!(doc.matrix("A").unwrap().0, 5);
    }

    #[test]
    fn mixture_has_the_paper_modes() {
        let spec = LatticeMixtureSpec::default().generate().unwrap();
        let doc = spec.to_doc().unwrap();
        assert_eq!(doc.kind, "lattice_mixture");
        let (k, d, modes) = doc.matrix("modes").unwrap();
        assert_eq!((k, d), (25, 2));
        let axis = [75.0, 150.0, 225.0, 300.0, 375.0];
        for (i, mode) in modes.chunks_exact(2).enumerate() {
            assert_eq!(mode, [axis[i / 5], axis[i % 5]]);
        }
        assert_eq!(doc.number("scale").unwrap(), 3.75);
        assert_eq!(doc.get("distance").unwrap(), "l2");
        for (s, m) in [(2, 1), (6, 5), (7, 3), (100, 99), (1000, 7)] {
            let p = lattice_modes(s, m);
            assert!(
                p.windows(2).all(|w| w[0] < w[1]) && p[m - 1] < s,
                "{s} {m}: {p:?}"
            );
        }
        assert!(
            LatticeMixtureSpec {
                dim: 30,
                ..Default::default()
            }
            .generate()
            .is_err()
        );
    }
}
