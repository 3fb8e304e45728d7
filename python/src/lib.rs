//! The compiled half of the `langevin` Python package: model files and user targets sampled by
//! the samplers of the registry, through the library's runners (the same code, and for a model
//! file the same draws, as `langevin sample`).
//!
//! The Python half (`langevin/__init__.py`) wraps these functions: it checks and converts what a
//! user's function returns, and wraps the draws and summary in a result object.

mod arrays;
mod checkpoint;
mod compiled;
mod exchange;
mod interrupt;
mod params;
mod shards;
mod summary;

use compiled::{Compiled, CompiledTarget, LogDensityFn};
use exchange::{Exchange, ExchangeTarget};
use langevin_std::binary::{BinaryModel, BinaryRun, Depth, diagnose, run_target_chains};
use langevin_std::labels::{LabelModel, LabelRun};
use langevin_std::models::ModelDoc;
use langevin_std::run::{Fingerprint, Keep, RunConfig, RunError, run_binary_plan, run_label_plan};
use langevin_std::samplers::{Domain, Sampler, SamplerPlan};
use numpy::{IntoPyArray, PyArrayMethods};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use summary::{Measured, Settings};

/// The kinds of model file a Python caller loads.
enum Loaded {
    /// A binary kind.
    Binary(BinaryModel),
    /// An ordinal or categorical kind.
    Labels(LabelModel),
}

/// A model file, read and checked: any kind `langevin model` writes.
#[pyclass(frozen, module = "langevin")]
struct Model {
    /// The file it was read from; `None` for a model built from arrays.
    path: Option<PathBuf>,
    kind: String,
    model: Loaded,
    /// What a checkpoint of a run on a model built from arrays must match (its fields'
    /// hash); a file's bytes are hashed when a checkpoint is opened.
    fields: Option<Fingerprint>,
    /// The files it was read from (the model file and its array files), which a checkpoint
    /// must not overwrite.
    inputs: Vec<(String, PathBuf)>,
}

#[pymethods]
impl Model {
    /// The model's kind (`ising_lattice`, `rbm`, `ordinal_quadratic`, ...).
    #[getter]
    fn kind(&self) -> &str {
        &self.kind
    }

    /// The number of coordinates `d`.
    #[getter]
    fn dim(&self) -> usize {
        match &self.model {
            Loaded::Binary(m) => m.dim(),
            Loaded::Labels(m) => m.dim(),
        }
    }

    /// The number of values per coordinate (2 for binary kinds).
    #[getter]
    fn states(&self) -> usize {
        match &self.model {
            Loaded::Binary(_) => 2,
            Loaded::Labels(m) => m.states(),
        }
    }

    /// The domain: `binary`, `ordinal` or `categorical`.
    #[getter]
    fn domain(&self) -> &'static str {
        self.domain_enum().name()
    }

    /// The file it was read from (`None` for a model built from arrays).
    #[getter]
    fn path(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.display().to_string())
    }

    fn __repr__(&self) -> String {
        format!(
            "Model(path={}, kind={:?}, dim={}, states={})",
            self.path
                .as_ref()
                .map_or("None".into(), |p| format!("{:?}", p.display().to_string())),
            self.kind,
            self.dim(),
            self.states()
        )
    }
}

impl Model {
    /// The model's name in a summary: its file, or `<arrays>`.
    fn source(&self) -> String {
        self.path
            .as_ref()
            .map_or("<arrays>".into(), |p| p.display().to_string())
    }

    /// What a checkpoint of a run on the model must match: its fields' hash, or the hash of
    /// its file's bytes and its array files', read when the checkpoint is opened (as the
    /// command line does), so that a run without checkpoints never reads them twice.
    fn identity(&self) -> PyResult<Fingerprint> {
        match (&self.fields, &self.path) {
            (Some(f), _) => Ok(f.clone()),
            (None, Some(path)) => {
                Fingerprint::of_model_file(path).map_err(|e| PyOSError::new_err(e.to_string()))
            }
            (None, None) => Ok(Fingerprint::new()),
        }
    }

    fn domain_enum(&self) -> Domain {
        match &self.model {
            Loaded::Binary(_) => Domain::Binary,
            Loaded::Labels(m) => Domain::from(m.domain()),
        }
    }
}

/// Reads a model file (JSON, as `langevin model` writes it).
#[pyfunction]
fn load_model(path: PathBuf) -> PyResult<Model> {
    let doc = ModelDoc::read(&path).map_err(value_error)?;
    let kind = doc.kind.clone();
    let model = if let Some(model) = BinaryModel::from_doc(&doc).map_err(value_error)? {
        Loaded::Binary(model)
    } else if let Some(model) = LabelModel::from_doc(&doc).map_err(value_error)? {
        Loaded::Labels(model)
    } else {
        return Err(PyValueError::new_err(format!(
            "{}: unknown model kind `{kind}`",
            path.display()
        )));
    };
    let mut inputs = vec![("model".to_string(), path.clone())];
    inputs.extend(doc.array_files());
    Ok(Model {
        path: Some(path),
        kind,
        model,
        fields: None,
        inputs,
    })
}

/// A [`std::fmt::Display`] error as a Python `ValueError`.
fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A run's failure as a Python exception: parameters, and a sampler that does not apply, are
/// `ValueError`s, the rest `RuntimeError`s.
fn run_error(e: RunError) -> PyErr {
    match e {
        RunError::Param(_) | RunError::Sampler(_) | RunError::NoBatchedPath { .. } => {
            value_error(e)
        }
        RunError::Checkpoint(e) => checkpoint::error(e),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

/// Chains, steps, seed and threads, checked as `langevin sample` checks them.
fn run_config(
    steps: u64,
    burn_in: u64,
    chains: usize,
    seed: u64,
    thin: u64,
    threads: usize,
) -> PyResult<RunConfig> {
    if chains == 0 {
        return Err(PyValueError::new_err("chains must be at least 1"));
    }
    if thin == 0 {
        return Err(PyValueError::new_err("thin must be at least 1"));
    }
    if steps / thin == 0 {
        return Err(PyValueError::new_err(format!(
            "steps={steps} with thin={thin} keeps no draws (keep at least one draw per chain)"
        )));
    }
    Ok(RunConfig {
        steps,
        burn_in,
        thin,
        chains,
        seed,
        threads,
        first_chain: 0,
    })
}

/// The draws of every chain, `(chains, kept, d)`, as a NumPy array.
fn draws_array<'py, T: numpy::Element + Copy>(
    py: Python<'py>,
    chains: &[&[T]],
    kept: usize,
    d: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let flat: Vec<T> = chains.iter().flat_map(|c| c.iter().copied()).collect();
    let array = flat.into_pyarray(py).reshape([chains.len(), kept, d])?;
    Ok(array.into_any())
}

/// `U` at every kept draw, `(chains, kept)` (NaN where a sampler does not track it).
fn log_density_array<'py>(
    py: Python<'py>,
    chains: &[&[f64]],
    kept: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let flat: Vec<f64> = chains
        .iter()
        .flat_map(|c| {
            let nan = std::iter::repeat_n(f64::NAN, kept.saturating_sub(c.len()));
            c.iter().copied().take(kept).chain(nan)
        })
        .collect();
    Ok(flat
        .into_pyarray(py)
        .reshape([chains.len(), kept])?
        .into_any())
}

/// Samples a model file: the runner `langevin sample` calls, so the draws are those its `--out`
/// file holds for the same model, sampler, parameters and seed. The run works with the GIL
/// released; Ctrl-C (any signal handler that raises) cancels it within about 100 ms and its
/// exception is raised here. Returns `(draws, log_density, summary JSON)`.
#[pyfunction]
#[pyo3(signature = (model, sampler, steps, burn_in, chains, seed, thin, threads, batch, diagnostics, params, first_chain = 0, checkpoint = None, checkpoint_every = 60.0, resume = None))]
#[allow(
    clippy::too_many_arguments,
    reason = "the keywords of `langevin.sample`"
)]
fn sample_model<'py>(
    py: Python<'py>,
    model: &Model,
    sampler: &str,
    steps: u64,
    burn_in: u64,
    chains: usize,
    seed: u64,
    thin: u64,
    threads: usize,
    batch: Option<usize>,
    diagnostics: &str,
    params: &Bound<'py, PyDict>,
    first_chain: usize,
    checkpoint: Option<PathBuf>,
    checkpoint_every: f64,
    resume: Option<PathBuf>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, String)> {
    let sampler = params::sampler(sampler, params, batch.is_none())?;
    let config = shards::with_first_chain(
        run_config(steps, burn_in, chains, seed, thin, threads)?,
        first_chain,
        batch,
    )?;
    let depth = summary::depth(diagnostics)?;
    if batch == Some(0) {
        return Err(PyValueError::new_err("batch must be at least 1"));
    }
    let domain = model.domain_enum();
    let d = model.dim();
    let plan = sampler
        .plan_for(domain, &config.shape(d))
        .map_err(value_error)?;
    let name = sampler.name();
    let opened = checkpoint::Request {
        path: checkpoint,
        every: checkpoint_every,
        resume,
    }
    .open(model.identity()?, &model.inputs, &sampler, &config, batch)?;
    let saves = checkpoint::of(&opened);
    let settings = Settings {
        sampler: &sampler,
        plan: &plan,
        model: model.source(),
        kind: model.kind.clone(),
        domain,
        states: model.states(),
        dim: d,
        config: &config,
        diagnostics: depth,
    };
    match &model.model {
        Loaded::Binary(m) => {
            let run = interrupt::run_interruptible(py, |p| {
                let keep = Keep {
                    checkpoint: saves,
                    ..Keep::all()
                };
                run_binary_plan(m, name, &plan, &config, batch, Some(p), keep)
            })?
            .map_err(run_error)?;
            binary_outputs(py, &settings, &run)
        }
        Loaded::Labels(m) => {
            let run = interrupt::run_interruptible(py, |p| {
                let keep = Keep {
                    checkpoint: saves,
                    ..Keep::all()
                };
                run_label_plan(m, name, &plan, &config, batch, Some(p), keep)
            })?
            .map_err(run_error)?;
            label_outputs(py, &settings, &run)
        }
    }
}

/// The log-densities of every chain of a finished run (a `BinaryRun` or a `LabelRun`: their
/// chains and totals have the same names) and its summary JSON; `diagnose(seed, depth)` gives
/// the R-hat and ESS, computed with the GIL released when they are asked for.
macro_rules! log_densities_and_summary {
    ($py:expr, $settings:expr, $run:expr, $diagnose:expr) => {{
        let (settings, run) = ($settings, $run);
        let lds: Vec<&[f64]> = run
            .chains
            .iter()
            .map(|c| c.log_density.as_slice())
            .collect();
        let depth = settings.diagnostics;
        let seed = settings.config.seed;
        let diagnose = $diagnose;
        let diagnostics = $py.detach(|| depth.map(|depth| diagnose(seed, depth).ok()));
        let json = summary::json(
            settings,
            Measured {
                burn_in_taken: run
                    .chains
                    .iter()
                    .map(|c| c.burn_in_stats.steps)
                    .max()
                    .unwrap_or(0),
                stats: run.stats(),
                mean_jump: run.mean_jump(),
                jump: run.chains.iter().map(|c| c.jump).sum(),
                evals: run.evaluations(),
                wall_time: run.wall_time,
                steps_taken: run.steps_taken(),
                diagnostics: diagnostics.flatten(),
                tuned: run.tuned(),
                mean: run.means(),
            },
        )?;
        (lds, json)
    }};
}

/// The draws, log-densities and summary of a binary run.
fn binary_outputs<'py>(
    py: Python<'py>,
    settings: &Settings<'_>,
    run: &BinaryRun,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, String)> {
    let kept = settings.config.kept();
    let chains: Vec<&[u8]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    let (lds, json) = log_densities_and_summary!(py, settings, run, |seed, depth| {
        diagnose(run, seed, depth)
    });
    Ok((
        draws_array(py, &chains, kept, settings.dim)?,
        log_density_array(py, &lds, kept)?,
        json,
    ))
}

/// The draws, log-densities and summary of an ordinal or categorical run (`uint8` draws for up
/// to 256 values per coordinate, `int32` above, as `langevin sample --out` writes them).
fn label_outputs<'py>(
    py: Python<'py>,
    settings: &Settings<'_>,
    run: &LabelRun,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, String)> {
    let kept = settings.config.kept();
    let (lds, json) = log_densities_and_summary!(py, settings, run, |seed, depth| {
        run.diagnose(seed, depth)
    });
    let draws = if settings.states <= 256 {
        let narrowed: Vec<Vec<u8>> = run
            .chains
            .iter()
            .map(|c| c.draws.iter().map(|&v| v as u8).collect())
            .collect();
        let chains: Vec<&[u8]> = narrowed.iter().map(Vec::as_slice).collect();
        draws_array(py, &chains, kept, settings.dim)?
    } else {
        let widened: Vec<Vec<i32>> = run
            .chains
            .iter()
            .map(|c| c.draws.iter().map(|&v| i32::from(v)).collect())
            .collect();
        let chains: Vec<&[i32]> = widened.iter().map(Vec::as_slice).collect();
        draws_array(py, &chains, kept, settings.dim)?
    };
    Ok((draws, log_density_array(py, &lds, kept)?, json))
}

/// Samples a binary target given by a Python function over a batch of states: `call(X)` with
/// `X` an `(n, d)` `uint8` array of the states of the `n` chains waiting for an evaluation
/// returns `(U (n,), ∇U (n, d))` as contiguous `float64` arrays. The GIL is released while the
/// chains step and taken only around `call`; signals are checked every 100 ms, and an exception
/// (a `KeyboardInterrupt` among them) stops every chain and is raised again here. Returns
/// `(draws, log_density, summary JSON, calls)`.
#[pyfunction]
#[pyo3(signature = (dim, call, sampler, steps, burn_in, chains, seed, thin, diagnostics, params, first_chain = 0, checkpoint = None, checkpoint_every = 60.0, resume = None))]
#[allow(
    clippy::too_many_arguments,
    reason = "the keywords of `langevin.sample`"
)]
fn sample_callback<'py>(
    py: Python<'py>,
    dim: usize,
    call: Py<PyAny>,
    sampler: &str,
    steps: u64,
    burn_in: u64,
    chains: usize,
    seed: u64,
    thin: u64,
    diagnostics: &str,
    params: &Bound<'py, PyDict>,
    first_chain: usize,
    checkpoint: Option<PathBuf>,
    checkpoint_every: f64,
    resume: Option<PathBuf>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, String, u64)> {
    // One worker per chain: the chains wait on each other's evaluations.
    let config = shards::with_first_chain(
        run_config(steps, burn_in, chains, seed, thin, chains)?,
        first_chain,
        None,
    )?;
    let request = checkpoint::Request {
        path: checkpoint,
        every: checkpoint_every,
        resume,
    };
    let planned = UserRun::new(
        "python",
        dim,
        sampler,
        params,
        config,
        diagnostics,
        &request,
    )?;
    let exchange = Exchange::new(dim);
    let saves = checkpoint::of(&planned.opened);
    let outcome = py.detach(|| {
        exchange.serve(call, || {
            run_target_chains(dim, &planned.spec, &planned.config, None, saves, |_| {
                Ok(ExchangeTarget::new(&exchange))
            })
        })
    });
    let run = match outcome {
        Ok(Ok(run)) => run,
        Err(e) => return Err(e),
        Ok(Err(e)) => return Err(run_error(e)),
    };
    let (draws, lds, json) = planned.outputs(py, &run)?;
    Ok((draws, lds, json, exchange.calls()))
}

/// A run on a user target (a Python function or a compiled one) of `dim` coordinates, checked
/// and planned as `langevin sample` plans a model file's, its checkpoint opened.
struct UserRun {
    /// `python` or `compiled`: the target's kind in the summary and the checkpoint.
    what: &'static str,
    dim: usize,
    sampler: Sampler,
    plan: SamplerPlan,
    /// The kernel the chains run: a binary kernel other than block Gibbs.
    spec: Sampler,
    config: RunConfig,
    depth: Option<Depth<'static>>,
    opened: Option<checkpoint::Opened>,
}

impl UserRun {
    /// Checks the dimension and the diagnostics' name, plans the sampler and opens the
    /// checkpoint asked for.
    fn new(
        what: &'static str,
        dim: usize,
        sampler: &str,
        params: &Bound<'_, PyDict>,
        config: RunConfig,
        diagnostics: &str,
        request: &checkpoint::Request,
    ) -> PyResult<Self> {
        if dim == 0 {
            return Err(PyValueError::new_err(
                "a target needs at least 1 coordinate",
            ));
        }
        let sampler = params::sampler(sampler, params, true)?;
        let depth = summary::depth(diagnostics)?;
        let plan = sampler
            .plan_for(Domain::Binary, &config.shape(dim))
            .map_err(value_error)?;
        let spec = match plan {
            SamplerPlan::Kernel(spec) if spec.runs_on_any_target() => spec,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "sampler {} does not apply to a user target (it needs a model file)",
                    sampler.name()
                )));
            }
        };
        let opened = request.for_function(what, dim, &sampler, &config)?;
        Ok(UserRun {
            what,
            dim,
            sampler,
            plan,
            spec,
            config,
            depth,
            opened,
        })
    }

    /// The draws, log-densities and summary of the finished run; the summary names the target
    /// `<python>` or `<compiled>` where a model file's run names the file.
    fn outputs<'py>(
        &self,
        py: Python<'py>,
        run: &BinaryRun,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, String)> {
        let settings = Settings {
            sampler: &self.sampler,
            plan: &self.plan,
            model: format!("<{}>", self.what),
            kind: self.what.into(),
            domain: Domain::Binary,
            states: 2,
            dim: self.dim,
            config: &self.config,
            diagnostics: self.depth,
        };
        binary_outputs(py, &settings, run)
    }
}

/// Samples a binary target given as the address of a compiled C function (see
/// [`compiled`]) and its user pointer, on `threads` workers with the GIL released; signals are
/// checked every 100 ms and stop every chain at its next step. Returns `(draws,
/// log_density, summary JSON)`.
#[pyfunction]
#[pyo3(signature = (dim, address, user, sampler, steps, burn_in, chains, seed, thin, threads, diagnostics, params, checkpoint = None, checkpoint_every = 60.0, resume = None))]
#[allow(
    clippy::too_many_arguments,
    reason = "the keywords of `langevin.sample`"
)]
fn sample_compiled<'py>(
    py: Python<'py>,
    dim: usize,
    address: usize,
    user: usize,
    sampler: &str,
    steps: u64,
    burn_in: u64,
    chains: usize,
    seed: u64,
    thin: u64,
    threads: usize,
    diagnostics: &str,
    params: &Bound<'py, PyDict>,
    checkpoint: Option<PathBuf>,
    checkpoint_every: f64,
    resume: Option<PathBuf>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, String)> {
    if address == 0 {
        return Err(PyValueError::new_err("the function's address is NULL"));
    }
    let config = run_config(steps, burn_in, chains, seed, thin, threads)?;
    let request = checkpoint::Request {
        path: checkpoint,
        every: checkpoint_every,
        resume,
    };
    let planned = UserRun::new(
        "compiled",
        dim,
        sampler,
        params,
        config,
        diagnostics,
        &request,
    )?;
    // SAFETY: the Python side documents that `address` must be a function of the C signature
    // of `LogDensityFn`; nothing can check it.
    let f = unsafe { std::mem::transmute::<usize, LogDensityFn>(address) };
    let compiled = Compiled { f, user, dim };
    let saves = checkpoint::of(&planned.opened);
    let run = interrupt::run_interruptible(py, |progress| {
        run_target_chains(
            dim,
            &planned.spec,
            &planned.config,
            Some(progress),
            saves,
            |_| Ok(CompiledTarget(compiled)),
        )
    })?
    .map_err(run_error)?;
    planned.outputs(py, &run)
}

/// The names of the samplers, in the registry's order.
#[pyfunction]
fn samplers() -> Vec<&'static str> {
    langevin_std::samplers::names().collect()
}

/// The compiled module `langevin._langevin`.
#[pymodule]
fn _langevin(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_function(wrap_pyfunction!(load_model, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::model_from_fields, m)?)?;
    m.add_function(wrap_pyfunction!(sample_model, m)?)?;
    m.add_function(wrap_pyfunction!(sample_callback, m)?)?;
    m.add_function(wrap_pyfunction!(sample_compiled, m)?)?;
    m.add_function(wrap_pyfunction!(samplers, m)?)?;
    m.add_function(wrap_pyfunction!(shards::merge_summaries, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
