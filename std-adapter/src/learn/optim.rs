//! Gradient ascent steps: plain SGD and Adam, with optional ℓ1 and ℓ2 penalties.

/// Which update rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OptimizerKind {
    /// `θ ← θ + η g`.
    Sgd,
    /// Adam (Kingma and Ba, 2015) with `β₁ = 0.9`, `β₂ = 0.999`, `ε = 10⁻⁸`.
    #[default]
    Adam,
}

/// An optimiser's settings and state for a parameter vector of fixed length.
#[derive(Clone, Debug)]
pub struct Optimizer {
    kind: OptimizerKind,
    lr: f64,
    l1: f64,
    l2: f64,
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

impl Optimizer {
    /// A fresh optimiser for `len` parameters with learning rate `lr`, ℓ1 weight `l1` and ℓ2
    /// weight `l2` (the penalty `l1·|θ| + l2·θ²/2` is subtracted from the objective).
    pub fn new(kind: OptimizerKind, len: usize, lr: f64, l1: f64, l2: f64) -> Self {
        Self {
            kind,
            lr,
            l1,
            l2,
            m: vec![0.0; len],
            v: vec![0.0; len],
            t: 0,
        }
    }

    /// One ascent step on `theta` along `grad` (the objective's gradient, before penalties),
    /// the penalties applied where `penalised(k)`.
    pub fn step(&mut self, theta: &mut [f64], grad: &[f64], penalised: impl Fn(usize) -> bool) {
        self.t = self.t.saturating_add(1);
        let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8);
        let (c1, c2) = (1.0 - b1.powi(self.t), 1.0 - b2.powi(self.t));
        for (k, (th, &g)) in theta.iter_mut().zip(grad).enumerate() {
            let mut g = g;
            if penalised(k) {
                g -= self.l1 * sign(*th) + self.l2 * *th;
            }
            match self.kind {
                OptimizerKind::Sgd => *th += self.lr * g,
                OptimizerKind::Adam => {
                    self.m[k] = b1 * self.m[k] + (1.0 - b1) * g;
                    self.v[k] = b2 * self.v[k] + (1.0 - b2) * g * g;
                    *th += self.lr * (self.m[k] / c1) / ((self.v[k] / c2).sqrt() + eps);
                }
            }
        }
    }
}

/// `sign(x)`, 0 at 0 (the subgradient of `|x|` that leaves a zero parameter at zero).
fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_rules_climb_a_concave_quadratic_to_its_top() {
        // Maximise −(θ − 3)²: gradient −2(θ − 3).
        for kind in [OptimizerKind::Sgd, OptimizerKind::Adam] {
            let mut opt = Optimizer::new(kind, 1, 0.05, 0.0, 0.0);
            let mut theta = [0.0];
            for _ in 0..2_000 {
                let g = [-2.0 * (theta[0] - 3.0)];
                opt.step(&mut theta, &g, |_| true);
            }
            assert!((theta[0] - 3.0).abs() < 1e-3, "{kind:?}: {}", theta[0]);
        }
    }

    #[test]
    fn the_l1_penalty_shrinks_toward_zero() {
        // Maximise −(θ − 1)² − 0.5|θ|: the top is at θ = 0.75.
        let mut opt = Optimizer::new(OptimizerKind::Sgd, 1, 0.01, 0.5, 0.0);
        let mut theta = [0.0];
        for _ in 0..5_000 {
            let g = [-2.0 * (theta[0] - 1.0)];
            opt.step(&mut theta, &g, |_| true);
        }
        assert!((theta[0] - 0.75).abs() < 1e-3, "{}", theta[0]);
    }
}
