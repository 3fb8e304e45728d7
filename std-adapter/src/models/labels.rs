//! Label models read from model files.

use super::file::{Expected, ModelDoc, ModelError, Problem};
use super::{LatticeMixture, MixtureForm, OrdinalQuadratic, Potts, QuarticMixture};
use langevin_core::ordinal::{LabelMove, OrdinalConditional, OrdinalTarget};
use std::convert::Infallible;

/// Whether integer distance between values matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelDomain {
    /// Ordinal values `0..S` (the gradient is per coordinate).
    Ordinal,
    /// Unordered labels (the gradient is per one-hot entry).
    Categorical,
}

impl LabelDomain {
    /// `"ordinal"` or `"categorical"`.
    pub fn name(self) -> &'static str {
        match self {
            LabelDomain::Ordinal => "ordinal",
            LabelDomain::Categorical => "categorical",
        }
    }
}

/// An ordinal model of any kind the model files know.
#[derive(Clone, Debug)]
pub enum OrdinalModel {
    /// Kind `ordinal_quadratic`.
    Quadratic(OrdinalQuadratic),
    /// Kind `lattice_mixture`.
    Mixture(LatticeMixture),
    /// Kind `quartic_mixture`.
    Quartic(QuarticMixture),
}

/// A label model: ordinal or categorical.
#[derive(Clone, Debug)]
pub enum LabelModel {
    /// An ordinal model.
    Ordinal(OrdinalModel),
    /// A Potts model (kind `potts`).
    Categorical(Potts),
}

/// The label kinds [`LabelModel::from_doc`] reads.
pub const LABEL_KINDS: [&str; 4] = [
    "ordinal_quadratic",
    "potts",
    "lattice_mixture",
    "quartic_mixture",
];

impl LabelModel {
    /// Builds the model a document describes, for kinds
    ///
    /// * `ordinal_quadratic`: `states` (`S`), `A` (`d × d`), `mu` (`d`), `b` (`d`, optional);
    ///   `U(x) = −½(x−μ)ᵀA(x−μ) + bᵀx`;
    /// * `potts`: `states`, `n`, `edges` (`[[i, j, J_ij], ..]`, optional), `field` (`n × S`,
    ///   optional); `U(x) = Σ_edges J_ij [x_i = x_j] + Σ_i h_{i,x_i}`;
    /// * `lattice_mixture`: `states`, `modes` (`K × d`, inside the lattice), `scale` (`τ > 0`),
    ///   `distance` (`"l2"`, the default, or `"squared"`);
    ///   `U(x) = ln Σ_k exp(−dist(x, μ_k) / τ)`;
    /// * `quartic_mixture`: `dim`, `states`, `components`, `sigma`, `seed` (see
    ///   [`QuarticMixture`]);
    ///
    /// arrays inline or as `.npy` files. `Ok(None)` for other kinds.
    ///
    /// # Errors
    ///
    /// A [`ModelError`] naming the field and the problem (`S` outside `2..=65535`, mismatched
    /// shapes, edges naming missing nodes, modes outside the lattice, …).
    pub fn from_doc(doc: &ModelDoc) -> Result<Option<Self>, ModelError> {
        let parse = match doc.kind.as_str() {
            "ordinal_quadratic" => Self::ordinal_quadratic,
            "potts" => Self::potts,
            "lattice_mixture" => Self::lattice_mixture,
            "quartic_mixture" => Self::quartic_mixture,
            _ => return Ok(None),
        };
        parse(doc).map(Some)
    }

    /// An `ordinal_quadratic` model file.
    fn ordinal_quadratic(doc: &ModelDoc) -> Result<Self, ModelError> {
        let s = states(doc, "states")?;
        let mu = doc.vector("mu")?;
        let d = mu.len();
        if d == 0 {
            return Err(doc.err("mu", Problem::DimensionZero));
        }
        let (r, c, a) = doc.matrix("A")?;
        if (r, c) != (d, d) {
            return Err(doc.err(
                "A",
                Problem::NotDByD {
                    rows: r,
                    cols: c,
                    d,
                },
            ));
        }
        let b = if doc.fields.contains_key("b") {
            doc.vector("b")?
        } else {
            vec![0.0; d]
        };
        if b.len() != d {
            let expected = Expected::Entries { field: "mu", n: d };
            let found = b.len();
            return Err(doc.err("b", Problem::Entries { found, expected }));
        }
        let m = doc.own(OrdinalQuadratic::new(s, a, mu, b))?;
        Ok(LabelModel::Ordinal(OrdinalModel::Quadratic(m)))
    }

    /// A `potts` model file.
    fn potts(doc: &ModelDoc) -> Result<Self, ModelError> {
        let s = states(doc, "states")?;
        let n = dimension(doc, "n")?;
        let edges = if doc.fields.contains_key("edges") {
            match doc.matrix("edges") {
                Ok((rows, cols, e)) => {
                    if rows > 0 && cols != 3 {
                        return Err(doc.err("edges", Problem::EdgeShape));
                    }
                    e
                }
                Err(_) if doc.get("edges")?.as_array().is_some_and(Vec::is_empty) => Vec::new(),
                Err(e) => return Err(e),
            }
        } else {
            Vec::new()
        };
        let mut triples = Vec::with_capacity(edges.len() / 3);
        let mut seen = std::collections::HashMap::with_capacity(edges.len() / 3);
        for (k, e) in edges.chunks_exact(3).enumerate() {
            let node = |v: f64| {
                if v.fract() == 0.0 && v >= 0.0 && v < n as f64 {
                    Ok(v as usize)
                } else {
                    Err(doc.err(
                        "edges",
                        Problem::EdgeNode {
                            edge: k,
                            node: v,
                            n,
                        },
                    ))
                }
            };
            let (i, j) = (node(e[0])?, node(e[1])?);
            if i == j {
                return Err(doc.err("edges", Problem::SelfLoop { edge: k, node: i }));
            }
            if let Some(first) = seen.insert((i.min(j), i.max(j)), k) {
                let problem = Problem::DuplicateEdge {
                    edge: k,
                    first,
                    i,
                    j,
                };
                return Err(doc.err("edges", problem));
            }
            triples.push((i, j, e[2]));
        }
        let field = if doc.fields.contains_key("field") {
            let (r, c, f) = doc.matrix("field")?;
            if (r, c) != (n, s) {
                let problem = Problem::NotNByStates {
                    rows: r,
                    cols: c,
                    n,
                    states: s,
                };
                return Err(doc.err("field", problem));
            }
            f
        } else {
            vec![0.0; n * s]
        };
        let m = doc.own(Potts::new(s, n, &triples, field))?;
        Ok(LabelModel::Categorical(m))
    }

    /// A `lattice_mixture` model file.
    fn lattice_mixture(doc: &ModelDoc) -> Result<Self, ModelError> {
        let s = states(doc, "states")?;
        let (k, d, modes) = doc.matrix("modes")?;
        if k == 0 || d == 0 {
            return Err(doc.err("modes", Problem::NoModes));
        }
        if let Some(i) = modes
            .iter()
            .position(|&v| !(0.0..=(s - 1) as f64).contains(&v))
        {
            let problem = Problem::ModeOutside {
                mode: i / d,
                value: modes[i],
                max: s - 1,
            };
            return Err(doc.err("modes", problem));
        }
        let scale = doc.number("scale")?;
        if scale <= 0.0 {
            return Err(doc.err("scale", Problem::NotPositive { value: scale }));
        }
        let form = match doc.fields.get("distance") {
            None => MixtureForm::Distance { scale },
            Some(v) => match v.as_str() {
                Some("l2") => MixtureForm::Distance { scale },
                // exp(−r²/τ) = exp(−r²/(2v)) with v = τ/2.
                Some("squared") => MixtureForm::Squared {
                    variance: scale / 2.0,
                },
                _ => {
                    let found = v.to_string();
                    return Err(doc.err("distance", Problem::NotADistance { found }));
                }
            },
        };
        let rows = modes.chunks_exact(d).map(<[f64]>::to_vec).collect();
        let m = doc.own(LatticeMixture::new(s, rows, form))?;
        Ok(LabelModel::Ordinal(OrdinalModel::Mixture(m)))
    }

    /// A `quartic_mixture` model file.
    fn quartic_mixture(doc: &ModelDoc) -> Result<Self, ModelError> {
        let s = states(doc, "states")?;
        let d = dimension(doc, "dim")?;
        let k = doc.count("components")?;
        if k == 0 {
            return Err(doc.err("components", Problem::Zero));
        }
        let sigma = doc.number("sigma")?;
        if sigma <= 0.0 {
            return Err(doc.err("sigma", Problem::NotPositive { value: sigma }));
        }
        let seed = doc.count("seed")? as u64;
        let m = doc.own(QuarticMixture::new(d, s, k, sigma, seed))?;
        Ok(LabelModel::Ordinal(OrdinalModel::Quartic(m)))
    }

    /// The kind as model files spell it.
    pub fn kind(&self) -> &'static str {
        match self {
            LabelModel::Ordinal(OrdinalModel::Quadratic(_)) => "ordinal_quadratic",
            LabelModel::Ordinal(OrdinalModel::Mixture(_)) => "lattice_mixture",
            LabelModel::Ordinal(OrdinalModel::Quartic(_)) => "quartic_mixture",
            LabelModel::Categorical(_) => "potts",
        }
    }

    /// Ordinal or categorical.
    pub fn domain(&self) -> LabelDomain {
        match self {
            LabelModel::Ordinal(_) => LabelDomain::Ordinal,
            LabelModel::Categorical(_) => LabelDomain::Categorical,
        }
    }

    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        use langevin_core::categorical::CategoricalTarget;
        match self {
            LabelModel::Ordinal(m) => m.dim(),
            LabelModel::Categorical(m) => m.dim(),
        }
    }

    /// Values per coordinate `S`.
    pub fn states(&self) -> usize {
        use langevin_core::categorical::CategoricalTarget;
        match self {
            LabelModel::Ordinal(m) => m.states(),
            LabelModel::Categorical(m) => m.states(),
        }
    }

    /// `U(x)`, without touching the model (a scratch copy where the model keeps caches).
    pub fn log_density(&self, x: &[u16]) -> f64 {
        match self {
            LabelModel::Ordinal(OrdinalModel::Quadratic(m)) => m.log_density(x),
            LabelModel::Ordinal(OrdinalModel::Mixture(m)) => m.log_density(x),
            LabelModel::Ordinal(OrdinalModel::Quartic(m)) => m.clone().log_density(x),
            LabelModel::Categorical(m) => m.log_density(x),
        }
    }

    /// A function computing `U(x)` for many states in turn, reusing one scratch copy.
    pub fn log_density_fn(&self) -> impl FnMut(&[u16]) -> f64 + '_ {
        let mut quartic = match self {
            LabelModel::Ordinal(OrdinalModel::Quartic(m)) => Some(m.clone()),
            _ => None,
        };
        move |x| match (&mut quartic, self) {
            (Some(q), _) => q.log_density(x),
            (None, m) => m.log_density(x),
        }
    }
}

/// Reads `S` and checks `2 ≤ S ≤ 65 535`.
/// A dimension field: a count of at least 1.
fn dimension(doc: &ModelDoc, field: &str) -> Result<usize, ModelError> {
    match doc.count(field)? {
        0 => Err(doc.err(field, Problem::DimensionZero)),
        d => Ok(d),
    }
}

fn states(doc: &ModelDoc, field: &str) -> Result<usize, ModelError> {
    let s = doc.count(field)?;
    if !(2..=usize::from(u16::MAX)).contains(&s) {
        return Err(doc.err(field, Problem::States { found: s }));
    }
    Ok(s)
}

macro_rules! dispatch {
    ($self:ident, $m:ident => $e:expr) => {
        match $self {
            OrdinalModel::Quadratic($m) => $e,
            OrdinalModel::Mixture($m) => $e,
            OrdinalModel::Quartic($m) => $e,
        }
    };
}

impl OrdinalTarget for OrdinalModel {
    type Error = Infallible;

    fn dim(&self) -> usize {
        dispatch!(self, m => m.dim())
    }

    fn states(&self) -> usize {
        dispatch!(self, m => m.states())
    }

    forward_evaluations!(dispatch, u16, LabelMove<'_>);
}

impl OrdinalConditional for OrdinalModel {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Infallible> {
        dispatch!(self, m => m.conditional(x, i, out))
    }

    fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
        dispatch!(self, m => m.commit_change(x, i, old))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> LabelModel {
        let doc = ModelDoc::parse(text, std::path::PathBuf::new()).unwrap();
        LabelModel::from_doc(&doc).unwrap().unwrap()
    }

    #[test]
    fn mixture_distances_follow_the_model_file_definition() {
        // U(x) = ln Σ_k exp(−dist(x, μ_k) / τ), dist = |x − μ|₂ or its square.
        let x = [3u16, 7];
        let modes = [[2.0, 2.0], [8.0, 5.0]];
        let tau = 2.5;
        for (distance, square) in [("l2", false), ("squared", true)] {
            let m = load(&format!(
                r#"{{"kind": "lattice_mixture", "states": 10, "modes": [[2, 2], [8, 5]],
                    "scale": {tau}, "distance": "{distance}"}}"#
            ));
            let expected = modes
                .iter()
                .map(|mu| {
                    let r2 = (3.0 - mu[0]) * (3.0 - mu[0]) + (7.0 - mu[1]) * (7.0 - mu[1]);
                    let dist = if square { r2 } else { f64::sqrt(r2) };
                    (-dist / tau).exp()
                })
                .sum::<f64>()
                .ln();
            assert!((m.log_density(&x) - expected).abs() < 1e-12, "{distance}");
            assert_eq!((m.dim(), m.states(), m.kind()), (2, 10, "lattice_mixture"));
        }
    }

    #[test]
    fn kinds_and_domains() {
        let q = load(r#"{"kind": "ordinal_quadratic", "states": 4, "A": [[1]], "mu": [1]}"#);
        assert_eq!(q.domain(), LabelDomain::Ordinal);
        // −½(2 − 1)² with b = 0.
        assert_eq!(q.log_density(&[2]), -0.5);
        let p = load(r#"{"kind": "potts", "states": 3, "n": 2, "edges": [[0, 1, 0.75]]}"#);
        assert_eq!(p.domain(), LabelDomain::Categorical);
        assert_eq!(
            (p.log_density(&[1, 1]), p.log_density(&[0, 2])),
            (0.75, 0.0)
        );
        let doc = ModelDoc::parse(r#"{"kind": "rbm"}"#, std::path::PathBuf::new()).unwrap();
        assert!(LabelModel::from_doc(&doc).unwrap().is_none());
    }
}
