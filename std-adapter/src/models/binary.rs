//! Binary models owned by the std side, loaded from model files.

use super::file::{Expected, ModelDoc, ModelError, Problem};
use langevin_core::models::{
    Bf16, BinaryLogistic, BinaryQuadratic, Dims, IsingGraph, IsingLattice, Rbm,
};
use langevin_core::{BinaryTarget, FlipMove, ParamError};
use std::convert::Infallible;

/// A binary model `U(x)` over `x ∈ {0,1}^d`, owning its parameters. Chains borrow it read-only
/// through [`BinaryModel::target`], each with its own small cache.
#[derive(Clone, Debug)]
pub enum BinaryModel {
    /// `U(x) = xᵀWx + bᵀx`.
    Quadratic {
        /// `W`, `d × d` row-major.
        w: Vec<f32>,
        /// `b`.
        b: Vec<f32>,
    },
    /// Ising on a graph, in compressed adjacency form (see [`IsingGraph`]).
    IsingGraph {
        /// Row offsets, `d + 1` entries.
        offsets: Vec<u32>,
        /// Neighbour lists.
        neighbours: Vec<u32>,
        /// Couplings, aligned with `neighbours`.
        couplings: Vec<f32>,
        /// Fields `h`.
        field: Vec<f32>,
    },
    /// Ising on a 2-D lattice.
    Lattice(IsingLattice<Dims>),
    /// RBM with hidden units summed out.
    Rbm {
        /// `W`, hidden × visible, row-major.
        w: Vec<f32>,
        /// Visible biases.
        b: Vec<f32>,
        /// Hidden biases.
        c: Vec<f32>,
        /// `W` and `Wᵀ` stored as `bf16`, for a model file with `"weights": "bf16"` (`w` then
        /// holds the same values in `f32`): the model is the RBM with these weights.
        bf16: Option<Box<Bf16Weights>>,
    },
    /// Logistic regression over binary coefficients (see [`BinaryLogistic`]).
    Logistic {
        /// Data, `m × d` row-major.
        x: Vec<f32>,
        /// Responses, 0 or 1.
        y: Vec<f32>,
    },
}

/// An RBM's weights rounded to `bf16`: `W` (hidden × visible) and `Wᵀ` (visible × hidden),
/// both row-major. The chains of the samplers that read `Wᵀ` evaluate the model from these,
/// reading half the bytes of the `f32` copies (the values are those of the `f32` RBM with the
/// same weights, bit for bit); the other samplers read the `f32` copy of the rounded `W`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bf16Weights {
    /// `W`, hidden × visible, row-major.
    pub w: Vec<Bf16>,
    /// `Wᵀ`, visible × hidden, row-major.
    pub wt: Vec<Bf16>,
}

/// A chain's view of a [`BinaryModel`]: the shared parameters plus the chain's own cache.
#[derive(Debug)]
pub enum ModelTarget<'a> {
    /// See [`BinaryQuadratic`].
    Quadratic(BinaryQuadratic<'a>),
    /// See [`IsingGraph`].
    IsingGraph(IsingGraph<'a>),
    /// See [`IsingLattice`].
    Lattice(IsingLattice<Dims>),
    /// See [`Rbm`]; `softplus` and `sigmoid` through [`FlipMathImpl`](crate::FlipMathImpl).
    Rbm(Rbm<'a, crate::FlipMathImpl>),
    /// An RBM over `bf16` weights (see [`Bf16Weights`]), with its `Wᵀ`.
    RbmBf16(Rbm<'a, crate::FlipMathImpl, Bf16>),
    /// See [`BinaryLogistic`].
    Logistic(BinaryLogistic<'a>),
}

/// `Wᵀ` of an RBM's `W` (`hidden × visible`, row-major): `visible × hidden`, row-major, so that
/// `wt[i·hidden + j] = w[j·visible + i]`. Entries of `w` beyond `hidden · visible` are ignored;
/// a short `w` gives a short result (which [`Rbm::with_transpose`] refuses).
pub fn rbm_transpose(w: &[f32], visible: usize, hidden: usize) -> Vec<f32> {
    let mut wt = Vec::with_capacity(w.len().min(visible.saturating_mul(hidden)));
    for i in 0..visible {
        for j in 0..hidden {
            match w.get(j * visible + i) {
                Some(&x) => wt.push(x),
                None => return wt,
            }
        }
    }
    wt
}

impl BinaryModel {
    /// The RBM with weights `w` (`hidden × visible`, row-major), visible biases `b` and hidden
    /// biases `c`. Its `Wᵀ` is not part of the model: the runners build it
    /// ([`rbm_transpose`](Self::rbm_transpose)) for the samplers that read it
    /// ([`Sampler::reads_rbm_transpose`](crate::samplers::Sampler::reads_rbm_transpose)):
    /// a move then reads the flipped units' contiguous rows (the same sums, bit for bit, as
    /// picking them out of `W`'s rows).
    pub fn rbm(w: Vec<f32>, b: Vec<f32>, c: Vec<f32>) -> Self {
        Self::Rbm {
            w,
            b,
            c,
            bf16: None,
        }
    }

    /// The RBM whose weights are `w` rounded to `bf16` (to nearest, ties to even), stored both
    /// ways ([`Bf16Weights`]). `None` if a rounded weight is not finite (beyond about
    /// `3.39e38`).
    pub fn rbm_bf16(w: &[f32], b: Vec<f32>, c: Vec<f32>) -> Option<Self> {
        let w16: Vec<Bf16> = w.iter().map(|&x| Bf16::from_f32(x)).collect();
        let rounded: Vec<f32> = w16.iter().map(|x| x.to_f32()).collect();
        if !rounded.iter().all(|x| x.is_finite()) {
            return None;
        }
        let (v, h) = (b.len(), c.len());
        let wt = rbm_transpose(&rounded, v, h)
            .into_iter()
            .map(Bf16::from_f32)
            .collect();
        Some(Self::Rbm {
            w: rounded,
            b,
            c,
            bf16: Some(Box::new(Bf16Weights { w: w16, wt })),
        })
    }

    /// `Wᵀ` of an RBM (visible × hidden, row-major), built here; empty for other models and
    /// for an RBM with [`Bf16Weights`], whose chains read the `bf16` `Wᵀ` the model holds.
    pub fn rbm_transpose(&self) -> Vec<f32> {
        match self {
            Self::Rbm {
                w,
                b,
                c,
                bf16: None,
            } => rbm_transpose(w, b.len(), c.len()),
            _ => Vec::new(),
        }
    }

    /// Bytes [`rbm_transpose`](Self::rbm_transpose) allocates: `4·H·V` for an RBM with `f32`
    /// weights, 0 otherwise.
    pub fn rbm_transpose_bytes(&self) -> u64 {
        match self {
            Self::Rbm { w, bf16: None, .. } => 4 * w.len() as u64,
            _ => 0,
        }
    }

    /// Bytes of the `f32` `Wᵀ` a lockstep group (`--batch`) of an RBM builds, whatever its
    /// weights' format: `4·H·V` for an RBM, 0 otherwise.
    pub fn rbm_batch_transpose_bytes(&self) -> u64 {
        match self {
            Self::Rbm { w, .. } => 4 * w.len() as u64,
            _ => 0,
        }
    }

    /// Bytes the model's parameters occupy (its vectors' entries).
    pub fn parameter_bytes(&self) -> u64 {
        let n = match self {
            Self::Quadratic { w, b } => 4 * (w.len() + b.len()),
            Self::IsingGraph {
                offsets,
                neighbours,
                couplings,
                field,
            } => 4 * (offsets.len() + neighbours.len() + couplings.len() + field.len()),
            Self::Lattice(_) => 0,
            Self::Rbm { w, b, c, bf16 } => {
                4 * (w.len() + b.len() + c.len()) + bf16.as_ref().map_or(0, |h| 2 * 2 * h.w.len())
            }
            Self::Logistic { x, y } => 4 * (x.len() + y.len()),
        };
        n as u64
    }

    /// Builds the model a document describes, for kinds `binary_quadratic`, `ising`,
    /// `ising_lattice` and `rbm`; `Ok(None)` for other kinds.
    ///
    /// # Errors
    ///
    /// A [`ModelError`] naming the field and the problem.
    pub fn from_doc(doc: &ModelDoc) -> Result<Option<Self>, ModelError> {
        let model = match doc.kind.as_str() {
            "binary_quadratic" => {
                let (r, c, w) = doc.matrix("W")?;
                let b = doc.vector("b")?;
                if r != c {
                    return Err(doc.err("W", Problem::NotSquare { rows: r, cols: c }));
                }
                if b.len() != r {
                    let expected = Expected::Square { field: "W", n: r };
                    return Err(doc.err("b", entries(b.len(), expected)));
                }
                Self::Quadratic {
                    w: to_f32(doc, "W", &w, c)?,
                    b: to_f32(doc, "b", &b, 0)?,
                }
            }
            "ising" => {
                let n = doc.count("n")?;
                let field = if doc.fields.contains_key("field") {
                    doc.vector("field")?
                } else {
                    vec![0.0; n]
                };
                if field.len() != n {
                    let expected = Expected::Count { field: "n", n };
                    return Err(doc.err("field", entries(field.len(), expected)));
                }
                let (rows, cols, edges) = if doc.fields.contains_key("edges") {
                    match doc.matrix("edges") {
                        Ok(m) => m,
                        // An empty list has no shape to speak of.
                        Err(_) if doc.get("edges")?.as_array().is_some_and(Vec::is_empty) => {
                            (0, 3, Vec::new())
                        }
                        Err(e) => return Err(e),
                    }
                } else {
                    (0, 3, Vec::new())
                };
                if rows > 0 && cols != 3 {
                    return Err(doc.err("edges", Problem::EdgeShape));
                }
                let triples: Vec<(f64, f64, f64)> =
                    edges.chunks_exact(3).map(|e| (e[0], e[1], e[2])).collect();
                let field = to_f32(doc, "field", &field, 0)?;
                Self::ising_graph(n, &triples, field).map_err(|p| doc.err("edges", p))?
            }
            "ising_lattice" => {
                let rows = doc.count("rows")?;
                let cols = doc.count("cols")?;
                let coupling = single(doc, "coupling", doc.number("coupling")?)?;
                let field = single(doc, "field", doc.number_or("field", 0.0)?)?;
                let periodic = doc.flag_or("periodic", true)?;
                let lattice =
                    IsingLattice::with_dims(Dims { rows, cols }, coupling, field, periodic)
                        .map_err(|e| doc.err("rows", Problem::Param(e)))?;
                Self::Lattice(lattice)
            }
            "rbm" => {
                let (h, v, w) = doc.matrix("W")?;
                let b = doc.vector("b")?;
                let c = doc.vector("c")?;
                if b.len() != v {
                    let expected = Expected::Columns { field: "W", n: v };
                    return Err(doc.err("b", entries(b.len(), expected)));
                }
                if c.len() != h {
                    let expected = Expected::Rows { field: "W", n: h };
                    return Err(doc.err("c", entries(c.len(), expected)));
                }
                if v == 0 {
                    return Err(doc.err("W", Problem::NoVisibleUnits));
                }
                let (w, b, c) = (
                    to_f32(doc, "W", &w, v)?,
                    to_f32(doc, "b", &b, 0)?,
                    to_f32(doc, "c", &c, 0)?,
                );
                match doc.fields.get("weights").map(|s| (s, s.as_str())) {
                    None | Some((_, Some("f32"))) => Self::rbm(w, b, c),
                    Some((_, Some("bf16"))) => Self::rbm_bf16(&w, b, c)
                        .ok_or_else(|| doc.err("W", Problem::Bf16Overflow))?,
                    Some((s, _)) => {
                        return Err(doc.err(
                            "weights",
                            Problem::WeightFormat {
                                found: s.to_string(),
                            },
                        ));
                    }
                }
            }
            "binary_logistic" => {
                let (m, d, x) = doc.matrix("X")?;
                let y = doc.vector("y")?;
                if y.len() != m {
                    let expected = Expected::Rows { field: "X", n: m };
                    return Err(doc.err("y", entries(y.len(), expected)));
                }
                if let Some(i) = y.iter().position(|&v| v != 0.0 && v != 1.0) {
                    let value = y[i];
                    return Err(doc.err("y", Problem::NotBinary { entry: i, value }));
                }
                if m == 0 || d == 0 {
                    return Err(doc.err("X", Problem::NoData));
                }
                Self::Logistic {
                    x: to_f32(doc, "X", &x, d)?,
                    y: to_f32(doc, "y", &y, 0)?,
                }
            }
            _ => return Ok(None),
        };
        if model.dim() == 0 {
            return Err(doc.err("", Problem::DimensionZero));
        }
        Ok(Some(model))
    }

    /// An Ising model on `n` nodes from `(i, j, J_ij)` triples (each edge once) and fields.
    ///
    /// # Errors
    ///
    /// A [`Problem`] for out-of-range or non-integer node indices, self-loops, a pair of nodes
    /// joined twice (in either order: duplicate edges are refused, not summed), and couplings
    /// that are not finite in single precision.
    pub fn ising_graph(
        n: usize,
        edges: &[(f64, f64, f64)],
        field: Vec<f32>,
    ) -> Result<Self, Problem> {
        let mut adjacency: Vec<Vec<(u32, f32)>> = vec![Vec::new(); n];
        let mut seen = std::collections::HashMap::with_capacity(edges.len());
        for (k, &(i, j, c)) in edges.iter().enumerate() {
            let node = |v: f64| -> Result<usize, Problem> {
                if v.fract() == 0.0 && v >= 0.0 && (v as usize) < n {
                    Ok(v as usize)
                } else {
                    Err(Problem::EdgeNode {
                        edge: k,
                        node: v,
                        n,
                    })
                }
            };
            let (i, j) = (node(i)?, node(j)?);
            if i == j {
                return Err(Problem::SelfLoop { edge: k, node: i });
            }
            if let Some(first) = seen.insert((i.min(j), i.max(j)), k) {
                return Err(Problem::DuplicateEdge {
                    edge: k,
                    first,
                    i,
                    j,
                });
            }
            let c = narrow(c).ok_or(Problem::EdgeCoupling { edge: k })?;
            adjacency[i].push((j as u32, c));
            adjacency[j].push((i as u32, c));
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut neighbours = Vec::new();
        let mut couplings = Vec::new();
        offsets.push(0u32);
        for list in &adjacency {
            for &(j, c) in list {
                neighbours.push(j);
                couplings.push(c);
            }
            offsets.push(neighbours.len() as u32);
        }
        Ok(Self::IsingGraph {
            offsets,
            neighbours,
            couplings,
            field,
        })
    }

    /// The model's kind as a model file names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Quadratic { .. } => "binary_quadratic",
            Self::IsingGraph { .. } => "ising",
            Self::Lattice(_) => "ising_lattice",
            Self::Rbm { .. } => "rbm",
            Self::Logistic { .. } => "binary_logistic",
        }
    }

    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        match self {
            Self::Quadratic { b, .. } | Self::Rbm { b, .. } => b.len(),
            Self::IsingGraph { field, .. } => field.len(),
            Self::Lattice(l) => l.dim(),
            Self::Logistic { x, y } => x.len() / y.len().max(1),
        }
    }

    /// Doubles of per-chain cache the model needs.
    pub fn cache_len(&self) -> usize {
        match self {
            Self::Quadratic { b, .. } => 2 * b.len(),
            Self::Rbm { c, .. } => 2 * c.len(),
            Self::Logistic { y, .. } => 2 * y.len(),
            Self::IsingGraph { .. } | Self::Lattice(_) => 0,
        }
    }

    /// A chain's target over this model, using `cache` (of [`cache_len`](Self::cache_len)
    /// doubles).
    ///
    /// # Errors
    ///
    /// [`ParamError`] if the parameters are inconsistent (they are checked when loading, so
    /// this only fails for hand-built models) or `cache` is too short.
    pub fn target<'a>(&'a self, cache: &'a mut [f64]) -> Result<ModelTarget<'a>, ParamError> {
        self.target_reading(cache, &[], false)
    }

    /// Like [`target`](Self::target), an RBM's with `wt` as its `Wᵀ` (checked; empty to go
    /// without), for the samplers that read a transpose. Other models ignore `wt`. An RBM with
    /// [`Bf16Weights`] ignores it too: it is evaluated from its own `bf16` `W` and `Wᵀ`
    /// ([`ModelTarget::RbmBf16`]), and no `f32` `Wᵀ` is built for it
    /// ([`rbm_transpose`](Self::rbm_transpose) is empty).
    ///
    /// # Errors
    ///
    /// As for [`target`](Self::target), and if `wt` is not empty and not the shape of `Wᵀ`.
    pub fn target_with_transpose<'a>(
        &'a self,
        cache: &'a mut [f64],
        wt: &'a [f32],
    ) -> Result<ModelTarget<'a>, ParamError> {
        self.target_reading(cache, wt, true)
    }

    /// [`target_with_transpose`](Self::target_with_transpose) if `reads_transpose`, else
    /// [`target`](Self::target) (an RBM with [`Bf16Weights`] then serves the `f32` copy of its
    /// rounded weights).
    fn target_reading<'a>(
        &'a self,
        cache: &'a mut [f64],
        wt: &'a [f32],
        reads_transpose: bool,
    ) -> Result<ModelTarget<'a>, ParamError> {
        Ok(match self {
            Self::Quadratic { w, b } => ModelTarget::Quadratic(BinaryQuadratic::new(w, b, cache)?),
            Self::IsingGraph {
                offsets,
                neighbours,
                couplings,
                field,
            } => ModelTarget::IsingGraph(IsingGraph::new(offsets, neighbours, couplings, field)?),
            Self::Lattice(l) => ModelTarget::Lattice(*l),
            Self::Rbm {
                b,
                c,
                bf16: Some(half),
                ..
            } if reads_transpose => ModelTarget::RbmBf16(
                Rbm::from_weights(&half.w, b, c, cache).and_then(|r| r.with_transpose(&half.wt))?,
            ),
            Self::Rbm { w, b, c, .. } => {
                let rbm = Rbm::with_math(w, b, c, cache)?;
                ModelTarget::Rbm(if wt.is_empty() {
                    rbm
                } else {
                    rbm.with_transpose(wt)?
                })
            }
            Self::Logistic { x, y } => ModelTarget::Logistic(BinaryLogistic::new(x, y, cache)?),
        })
    }
}

/// `v` in single precision; `cols` is the row length of a matrix field (0 for a vector), so
/// that an entry that overflows is named `(row, column)`.
fn to_f32(doc: &ModelDoc, field: &str, v: &[f64], cols: usize) -> Result<Vec<f32>, ModelError> {
    v.iter()
        .enumerate()
        .map(|(i, &x)| {
            narrow(x).ok_or_else(|| {
                let entry = match i.checked_div(cols).zip(i.checked_rem(cols)) {
                    Some((row, col)) => format!("({row}, {col})"),
                    None => i.to_string(),
                };
                doc.err(field, Problem::EntryOverflow { entry, value: x })
            })
        })
        .collect()
}

/// `x` as `{}` prints it while that is short, in scientific notation beyond (`1e300`, not three
/// hundred digits).
pub(crate) fn compact(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `x` in single precision, unless it stops being finite there.
fn narrow(x: f64) -> Option<f32> {
    let y = x as f32;
    y.is_finite().then_some(y)
}

/// A scalar field narrowed to single precision, refused if it stops being finite.
fn single(doc: &ModelDoc, field: &str, x: f64) -> Result<f32, ModelError> {
    narrow(x).ok_or_else(|| doc.err(field, Problem::Overflow { value: x }))
}

macro_rules! dispatch {
    ($self:ident, $t:ident => $e:expr) => {
        match $self {
            ModelTarget::Quadratic($t) => $e,
            ModelTarget::IsingGraph($t) => $e,
            ModelTarget::Lattice($t) => $e,
            ModelTarget::Rbm($t) => $e,
            ModelTarget::RbmBf16($t) => $e,
            ModelTarget::Logistic($t) => $e,
        }
    };
}

impl BinaryTarget for ModelTarget<'_> {
    type Error = Infallible;

    #[inline(always)]
    fn dim(&self) -> usize {
        dispatch!(self, t => t.dim())
    }

    forward_evaluations!(dispatch, u8, FlipMove<'_>);
}

/// A length mismatch.
fn entries(found: usize, expected: Expected) -> Problem {
    Problem::Entries { found, expected }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::transpose_for;
    use crate::samplers::Sampler;

    /// `Wᵀ` is built only for the samplers that read it, and counted where it is built.
    #[test]
    fn rbm_transpose_only_where_read() {
        // W is 2 × 3.
        let w = vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let model = BinaryModel::rbm(w, vec![0.0; 3], vec![0.5; 2]);
        assert_eq!(model.parameter_bytes(), 4 * (6 + 3 + 2));
        assert_eq!(model.rbm_transpose_bytes(), 4 * 6);
        let dmala = Sampler::named("dmala", |_| {}).unwrap();
        assert!(dmala.reads_rbm_transpose());
        for name in ["block-gibbs", "gibbs"] {
            let spec = Sampler::named(name, |_| {}).unwrap();
            assert!(!spec.reads_rbm_transpose());
            assert!(transpose_for(&model, &spec).is_empty());
        }
        let wt = transpose_for(&model, &dmala);
        assert_eq!(&*wt, &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        let mut cache = [0.0; 4];
        let target = model.target_with_transpose(&mut cache, &wt).unwrap();
        assert!(matches!(target, ModelTarget::Rbm(r) if r.transpose().is_some()));
        let mut cache = [0.0; 4];
        let target = model.target(&mut cache).unwrap();
        assert!(matches!(target, ModelTarget::Rbm(r) if r.transpose().is_none()));
        // A wrong transpose is refused.
        let mut cache = [0.0; 4];
        assert!(model.target_with_transpose(&mut cache, &[0.0; 6]).is_err());
    }

    /// `"weights": "bf16"` rounds `W` to nearest (ties to even) and the samplers that read `Wᵀ`
    /// get the `bf16` target, whose values are those of the `f32` RBM with the rounded weights;
    /// another storage name is refused.
    #[test]
    fn rbm_bf16_weights_from_a_model_file() {
        let text = |weights: &str| {
            format!(
                r#"{{"kind":"rbm","W":[[0.1,0.2,-0.3],[1.0,0.7,0.25]],"b":[0.1,0,0],"c":[0,0.5]{weights}}}"#
            )
        };
        let load = |t: &str| {
            BinaryModel::from_doc(&ModelDoc::parse(t, std::path::PathBuf::new()).unwrap())
        };
        let model = load(&text(r#","weights":"bf16""#)).unwrap().unwrap();
        let BinaryModel::Rbm {
            w,
            bf16: Some(half),
            ..
        } = &model
        else {
            panic!("{model:?}")
        };
        assert_eq!(w[0], 205.0 / 2048.0);
        assert_eq!(w[5], 0.25);
        assert_eq!(
            half.wt.iter().map(|x| x.to_f32()).collect::<Vec<_>>(),
            rbm_transpose(w, 3, 2)
        );
        assert_eq!(model.parameter_bytes(), 4 * (6 + 3 + 2) + 2 * 2 * 6);
        let f32_model = BinaryModel::rbm(w.clone(), vec![0.1, 0.0, 0.0], vec![0.0, 0.5]);
        let (mut c16, mut c32) = ([0.0; 4], [0.0; 4]);
        // No f32 Wᵀ is built for it: its chains read the bf16 one.
        let wt = model.rbm_transpose();
        assert!(wt.is_empty() && model.rbm_transpose_bytes() == 0);
        // A lockstep group builds the f32 one all the same: the memory cap counts it.
        assert_eq!(model.rbm_batch_transpose_bytes(), 4 * 6);
        let mut half_target = model.target_with_transpose(&mut c16, &wt).unwrap();
        assert!(matches!(half_target, ModelTarget::RbmBf16(_)));
        let mut full = f32_model.target_with_transpose(&mut c32, &wt).unwrap();
        let (mut g16, mut g32) = ([0.0f32; 3], [0.0f32; 3]);
        let u16 = half_target
            .log_density_and_grad(&[1, 0, 1], &mut g16)
            .unwrap();
        let u32 = full.log_density_and_grad(&[1, 0, 1], &mut g32).unwrap();
        assert_eq!((u16.to_bits(), g16), (u32.to_bits(), g32));
        // Without a transpose (Gibbs, block Gibbs) the f32 copy of the rounded weights serves.
        let mut c = [0.0; 4];
        assert!(matches!(model.target(&mut c).unwrap(), ModelTarget::Rbm(_)));
        // The default and "f32" keep W as given.
        for t in [text(""), text(r#","weights":"f32""#)] {
            let m = load(&t).unwrap().unwrap();
            assert!(matches!(&m, BinaryModel::Rbm { w, bf16: None, .. } if w[0] == 0.1));
        }
        let e = load(&text(r#","weights":"f16""#)).unwrap_err().to_string();
        assert!(e.contains("weights") && e.contains("bf16"), "{e}");
    }
}
