"""The built-in model kinds, built from NumPy arrays.

Each function returns a ``Model``, the same object ``load_model`` returns: the arrays are the
fields of the model file of that kind (``langevin model --schema`` lists them), read by the
same parser, so a model built here samples to the draws of the model file with the same
values, bit for bit, and so to those of ``langevin sample``. Arrays are converted to
``float64``; a wrong shape or a value that is not finite is a ``ValueError`` naming the
argument.

Binary kinds (over ``x in {0, 1}^d``): ``BinaryQuadratic``, ``Ising``, ``IsingLattice``,
``Rbm``, ``BinaryLogistic``. Ordinal (over ``{0..S-1}^d``): ``OrdinalQuadratic``,
``LatticeMixture``, ``QuarticMixture``. Categorical: ``Potts``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _langevin
from ._langevin import Model

__all__ = [
    "BinaryLogistic",
    "BinaryQuadratic",
    "Ising",
    "IsingLattice",
    "LatticeMixture",
    "OrdinalQuadratic",
    "Potts",
    "QuarticMixture",
    "Rbm",
]


def _array(name: str, value: Any, ndim: int) -> np.ndarray:
    """``value`` as a C-contiguous float64 array of ``ndim`` dimensions, every entry finite."""
    try:
        a = np.ascontiguousarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name}: cannot be read as an array of numbers ({e})") from None
    if a.ndim != ndim:
        what = "a vector (1-D)" if ndim == 1 else "a matrix (2-D)"
        raise ValueError(f"{name}: expected {what}, found shape {a.shape}")
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        index = tuple(int(i) for i in bad[0])
        index = index[0] if ndim == 1 else index
        raise ValueError(f"{name}: entry {index} is not finite ({a[tuple(bad[0])]})")
    return a


def _shape(name: str, a: np.ndarray, expected: tuple[int, ...], why: str) -> None:
    if a.shape != expected:
        raise ValueError(f"{name}: expected shape {expected} ({why}), found {a.shape}")


def _count(name: str, value: Any, least: int = 0) -> int:
    if isinstance(value, bool) or int(value) != value:
        raise ValueError(f"{name}: expected an integer, found {value!r}")
    n = int(value)
    if n < least:
        raise ValueError(f"{name}: must be at least {least}, found {n}")
    return n


def _nodes(n: Any, field: np.ndarray | None, missing: str) -> int:
    """The number of nodes: ``n`` when given, else the rows of the field; ``missing`` is the
    error without either."""
    if n is not None:
        return _count("n", n, 1)
    if field is not None:
        return field.shape[0]
    raise ValueError(missing)


def _number(name: str, value: Any) -> float:
    x = float(value)
    if not np.isfinite(x):
        raise ValueError(f"{name}: must be finite, found {x}")
    return x


def _build(kind: str, **fields: Any) -> Model:
    return _langevin.model_from_fields(kind, fields)


def _edges_of(name: str, J: Any, n_name: str) -> tuple[int, np.ndarray]:
    """The edge list ``[[i, j, J_ij], ..]`` of a symmetric coupling matrix with a zero
    diagonal: every pair ``i < j`` with ``J_ij != 0``, in row-major order."""
    J = _array(name, J, 2)
    n = J.shape[0]
    if J.shape != (n, n):
        raise ValueError(f"{name}: must be square, found shape {J.shape}")
    if n == 0:
        raise ValueError(f"{name}: the model has no {n_name}")
    if np.any(np.diag(J) != 0):
        i = int(np.flatnonzero(np.diag(J))[0])
        raise ValueError(f"{name}: the diagonal must be zero, entry ({i}, {i}) is {J[i, i]}")
    if not np.array_equal(J, J.T):
        i, j = (int(v) for v in np.argwhere(J != J.T)[0])
        raise ValueError(
            f"{name}: must be symmetric, entry ({i}, {j}) is {J[i, j]} and ({j}, {i}) is {J[j, i]}"
        )
    i, j = np.nonzero(np.triu(J, 1))
    edges = np.column_stack([i, j, J[i, j]]).astype(np.float64).reshape(-1, 3)
    return n, np.ascontiguousarray(edges)


def _edge_list(name: str, edges: Any) -> np.ndarray:
    e = _array(name, edges, 2) if np.size(edges) else np.zeros((0, 3))
    if e.shape[1:] != (3,):
        raise ValueError(f"{name}: expected rows [i, j, J_ij], found shape {e.shape}")
    return e


def BinaryQuadratic(W: Any, b: Any) -> Model:
    """``U(x) = xᵀWx + bᵀx`` over ``x in {0, 1}^d`` (kind ``binary_quadratic``): ``W`` of shape
    ``(d, d)``, ``b`` of shape ``(d,)``."""
    W = _array("W", W, 2)
    b = _array("b", b, 1)
    d = b.shape[0]
    _shape("W", W, (d, d), f"b has {d} entries")
    return _build("binary_quadratic", W=W, b=b)


def Ising(
    J: Any = None, h: Any = None, *, edges: Any = None, n: int | None = None
) -> Model:
    """An Ising model on a graph (kind ``ising``):
    ``U(x) = Σ_{i<j} J_ij s_i s_j + Σ_i h_i s_i`` with spins ``s = 2x − 1``.

    The couplings are either ``J``, a symmetric ``(n, n)`` matrix with a zero diagonal (each
    non-zero ``J_ij``, ``i < j``, is an edge, in row-major order), or ``edges``, rows
    ``[i, j, J_ij]`` listing each edge once, in the order of a model file's ``edges`` (the
    order in which a node's neighbours are summed). ``h`` is the ``(n,)`` field (default
    zeros); with ``edges`` and no ``h`` give ``n``.
    """
    if (J is None) == (edges is None):
        raise ValueError("give the couplings as J (a matrix) or as edges (rows [i, j, J_ij]), not both")
    field = None if h is None else _array("h", h, 1)
    if J is not None:
        nodes, edge_rows = _edges_of("J", J, "nodes")
    else:
        edge_rows = _edge_list("edges", edges)
        nodes = _nodes(n, field, "with edges, give the number of nodes n or the field h")
    fields: dict[str, Any] = {"n": int(nodes), "edges": edge_rows}
    if field is not None:
        _shape("h", field, (nodes,), f"{nodes} nodes")
        fields["field"] = field
    return _build("ising", **fields)


def IsingLattice(
    rows: int, cols: int, coupling: float, field: float = 0.0, periodic: bool = True
) -> Model:
    """The Ising model on a ``rows × cols`` nearest-neighbour lattice (kind
    ``ising_lattice``), coupling ``J`` on every bond and field ``h`` at every site, with
    wrap-around edges when ``periodic``."""
    return _build(
        "ising_lattice",
        rows=_count("rows", rows, 1),
        cols=_count("cols", cols, 1),
        coupling=_number("coupling", coupling),
        field=_number("field", field),
        periodic=bool(periodic),
    )


def Rbm(W: Any, b: Any, c: Any) -> Model:
    """A restricted Boltzmann machine over its visible units, hidden units summed out (kind
    ``rbm``): weights ``W`` of shape ``(hidden, visible)``, visible biases ``b`` of shape
    ``(visible,)``, hidden biases ``c`` of shape ``(hidden,)``."""
    W = _array("W", W, 2)
    b = _array("b", b, 1)
    c = _array("c", c, 1)
    hidden, visible = W.shape
    _shape("b", b, (visible,), f"W is hidden × visible = {hidden} × {visible}")
    _shape("c", c, (hidden,), f"W is hidden × visible = {hidden} × {visible}")
    if visible == 0:
        raise ValueError("W: has no visible units")
    return _build("rbm", W=W, b=b, c=c)


def BinaryLogistic(X: Any, y: Any) -> Model:
    """Bayesian logistic regression over binary coefficients ``β in {0, 1}^d`` (kind
    ``binary_logistic``): covariates ``X`` of shape ``(m, d)``, responses ``y`` of shape
    ``(m,)``, each 0 or 1."""
    X = _array("X", X, 2)
    y = _array("y", y, 1)
    m, d = X.shape
    _shape("y", y, (m,), f"X has {m} rows")
    if m == 0 or d == 0:
        raise ValueError(f"X: needs at least one row and one column, found shape {X.shape}")
    wrong = np.flatnonzero((y != 0) & (y != 1))
    if wrong.size:
        raise ValueError(f"y: entry {int(wrong[0])} is {y[wrong[0]]}, expected 0 or 1")
    return _build("binary_logistic", X=X, y=y)


def OrdinalQuadratic(states: int, mu: Any, A: Any, b: Any = None) -> Model:
    """``U(x) = −½ (x−μ)ᵀ A (x−μ) + bᵀx`` over ``{0..S−1}^d`` (kind ``ordinal_quadratic``,
    the lattice Gaussians of ``langevin model lattice-gaussian``): ``states`` ``S``, centres
    ``mu`` of shape ``(d,)``, precision ``A`` of shape ``(d, d)``, linear terms ``b`` (default
    zeros)."""
    mu = _array("mu", mu, 1)
    A = _array("A", A, 2)
    d = mu.shape[0]
    if d == 0:
        raise ValueError("mu: the model has dimension 0")
    _shape("A", A, (d, d), f"mu has {d} entries")
    fields: dict[str, Any] = {"states": _count("states", states, 2), "mu": mu, "A": A}
    if b is not None:
        b = _array("b", b, 1)
        _shape("b", b, (d,), f"mu has {d} entries")
        fields["b"] = b
    return _build("ordinal_quadratic", **fields)


def Potts(
    J: Any = None,
    h: Any = None,
    *,
    states: int | None = None,
    edges: Any = None,
    n: int | None = None,
) -> Model:
    """A Potts model on a graph (kind ``potts``, categorical):
    ``U(x) = Σ_{i<j} J_ij [x_i = x_j] + Σ_i h_{i, x_i}``.

    The couplings are ``J``, a symmetric ``(n, n)`` matrix with a zero diagonal, or ``edges``
    (rows ``[i, j, J_ij]``, each edge once), as for ``Ising``; ``h`` is the ``(n, S)`` field
    (default zeros). ``states`` ``S`` defaults to ``h``'s columns; ``n`` to ``J``'s or ``h``'s
    rows.
    """
    if J is not None and edges is not None:
        raise ValueError("give the couplings as J (a matrix) or as edges (rows [i, j, J_ij]), not both")
    field = None if h is None else _array("h", h, 2)
    if states is None:
        if field is None:
            raise ValueError("give the number of labels states, or the field h (n × states)")
        states = field.shape[1]
    states = _count("states", states, 2)
    if J is not None:
        nodes, edge_rows = _edges_of("J", J, "nodes")
    else:
        edge_rows = None if edges is None else _edge_list("edges", edges)
        nodes = _nodes(n, field, "give the number of nodes n, the matrix J or the field h")
    fields: dict[str, Any] = {"states": states, "n": int(nodes)}
    if edge_rows is not None:
        fields["edges"] = edge_rows
    if field is not None:
        _shape("h", field, (nodes, states), f"n × states = {nodes} × {states}")
        fields["field"] = field
    return _build("potts", **fields)


def LatticeMixture(states: int, modes: Any, scale: float, distance: str = "l2") -> Model:
    """``U(x) = ln Σ_k exp(−dist(x, μ_k) / τ)`` over ``{0..S−1}^d`` (kind
    ``lattice_mixture``): ``modes`` of shape ``(K, d)`` inside the lattice, ``scale`` ``τ > 0``,
    ``distance`` ``"l2"`` or ``"squared"``."""
    states = _count("states", states, 2)
    modes = _array("modes", modes, 2)
    if modes.shape[0] == 0 or modes.shape[1] == 0:
        raise ValueError(f"modes: needs at least one mode of dimension ≥ 1, found shape {modes.shape}")
    scale = _number("scale", scale)
    if scale <= 0:
        raise ValueError(f"scale: must be positive, found {scale}")
    if distance not in ("l2", "squared"):
        raise ValueError(f'distance: expected "l2" or "squared", found {distance!r}')
    return _build("lattice_mixture", states=states, modes=modes, scale=scale, distance=distance)


def QuarticMixture(dim: int, states: int, components: int, sigma: float, seed: int) -> Model:
    """A seeded mixture of ``components`` quartic wells of width ``sigma`` over
    ``{0..S−1}^dim`` (kind ``quartic_mixture``)."""
    sigma = _number("sigma", sigma)
    if sigma <= 0:
        raise ValueError(f"sigma: must be positive, found {sigma}")
    return _build(
        "quartic_mixture",
        dim=_count("dim", dim, 1),
        states=_count("states", states, 2),
        components=_count("components", components, 1),
        sigma=sigma,
        seed=_count("seed", seed),
    )
