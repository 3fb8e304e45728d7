//! The meeting point of the chains of a run on a Python target and the thread that holds the
//! interpreter: every chain waiting for an evaluation posts its state here, and once every
//! running chain is waiting, one call of the user's function evaluates them all (chains in
//! lockstep, one call per step of every chain for the one-evaluation samplers).
//!
//! Each chain's draws depend only on the values the function returns for its own states, so
//! how the evaluations are grouped into calls never changes a draw.

use langevin_std::core_kernels::{BinaryTarget, TargetError};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often the serving thread checks for signals (Ctrl-C) while the chains run.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// A chain's answer: `U` and `∇U`, or `None` when the run is stopping.
type Answer = Option<(f64, Vec<f32>)>;

/// One chain's state waiting for its evaluation.
struct Request {
    x: Vec<u8>,
    reply: SyncSender<Answer>,
}

/// What the chains and the serving thread share.
#[derive(Default)]
struct State {
    /// Chains that are running (their target built and not yet dropped).
    active: usize,
    /// States waiting for an evaluation.
    pending: Vec<Request>,
    /// The run is stopping: an exception was raised.
    failed: bool,
}

/// The meeting point of a run's chains and the interpreter.
pub struct Exchange {
    dim: usize,
    state: Mutex<State>,
    wake: Condvar,
    calls: AtomicU64,
}

impl Exchange {
    /// A meeting point for chains of `dim` coordinates.
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            calls: AtomicU64::new(0),
        }
    }

    /// Calls of the user's function so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `run` (the chains) on a thread of its own and serves their evaluations with
    /// `call` on this one, which must not hold the GIL: it takes it for each call and every
    /// 100 ms to check for signals. An exception raised by `call` or a signal handler stops
    /// every chain at its next evaluation and is returned once the chains have stopped.
    pub fn serve<R: Send>(&self, call: Py<PyAny>, run: impl FnOnce() -> R + Send) -> PyResult<R> {
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let chains = scope.spawn(|| {
                let r = run();
                let _state = self.lock();
                done.store(true, Ordering::SeqCst);
                self.wake.notify_all();
                r
            });
            let mut error: Option<PyErr> = None;
            let mut checked = Instant::now();
            loop {
                let batch = {
                    let mut state = self.lock();
                    loop {
                        let ready =
                            !state.pending.is_empty() && state.pending.len() >= state.active;
                        if ready || done.load(Ordering::SeqCst) {
                            break;
                        }
                        let wait = SIGNAL_CHECK.saturating_sub(checked.elapsed());
                        if wait.is_zero() {
                            break;
                        }
                        state = self
                            .wake
                            .wait_timeout(state, wait)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    }
                    if done.load(Ordering::SeqCst) && state.pending.is_empty() {
                        break;
                    }
                    if !state.pending.is_empty() && state.pending.len() >= state.active {
                        std::mem::take(&mut state.pending)
                    } else {
                        Vec::new()
                    }
                };
                if !batch.is_empty() {
                    let outcome = Python::attach(|py| self.evaluate(py, &call, &batch));
                    if let Err(e) = outcome {
                        error.get_or_insert(e);
                        self.stop(batch);
                    }
                }
                if checked.elapsed() >= SIGNAL_CHECK {
                    if let Err(e) = Python::attach(|py| py.check_signals()) {
                        error.get_or_insert(e);
                        self.stop(Vec::new());
                    }
                    checked = Instant::now();
                }
            }
            let outcome = chains
                .join()
                .map_err(|_| PyRuntimeError::new_err("the chains' thread panicked"));
            match error {
                Some(e) => Err(e),
                None => outcome,
            }
        })
    }

    /// Stops the run: the chains in `batch`, those waiting and those that come later get no
    /// answer (their evaluation fails).
    fn stop(&self, batch: Vec<Request>) {
        let waiting = {
            let mut state = self.lock();
            state.failed = true;
            std::mem::take(&mut state.pending)
        };
        for r in batch.into_iter().chain(waiting) {
            // A chain that is gone needs no answer.
            let _ = r.reply.send(None);
        }
    }

    /// One call of the user's function on every state of `batch`, and the answers.
    fn evaluate(&self, py: Python<'_>, call: &Py<PyAny>, batch: &[Request]) -> PyResult<()> {
        let (n, d) = (batch.len(), self.dim);
        let flat: Vec<u8> = batch.iter().flat_map(|r| r.x.iter().copied()).collect();
        let x = PyArray1::from_vec(py, flat).reshape([n, d])?;
        self.calls.fetch_add(1, Ordering::Relaxed);
        let out = call.bind(py).call1((x,))?;
        let (u, g): (PyReadonlyArray1<'_, f64>, PyReadonlyArray2<'_, f64>) = out.extract()?;
        if u.shape() != [n] || g.shape() != [n, d] {
            return Err(PyValueError::new_err(format!(
                "logp_grad returned shapes {:?} and {:?} for {n} states of dimension {d} \
                 (expected ({n},) and ({n}, {d}))",
                u.shape(),
                g.shape()
            )));
        }
        let (u, g) = (u.as_slice()?, g.as_slice()?);
        for (i, r) in batch.iter().enumerate() {
            let row = g.get(i * d..(i + 1) * d).unwrap_or(&[]);
            let grad: Vec<f32> = row.iter().map(|&v| v as f32).collect();
            let value = u.get(i).copied().unwrap_or(f64::NAN);
            // A chain that is gone needs no answer.
            let _ = r.reply.send(Some((value, grad)));
        }
        Ok(())
    }
}

/// Why a chain's evaluation failed: the run is stopping (the exception is raised by
/// [`Exchange::serve`]).
#[derive(Debug)]
pub struct Stopped;

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the run was stopped (an exception in the target function, or a signal)")
    }
}

impl TargetError for Stopped {
    fn is_recoverable(&self) -> bool {
        false
    }
}

/// One chain's view of the [`Exchange`]: a binary target whose every evaluation is served by
/// the user's function.
pub struct ExchangeTarget<'e> {
    exchange: &'e Exchange,
    reply: SyncSender<Answer>,
    answers: Receiver<Answer>,
}

impl<'e> ExchangeTarget<'e> {
    /// A running chain's target.
    pub fn new(exchange: &'e Exchange) -> Self {
        let (reply, answers) = sync_channel(1);
        exchange.lock().active += 1;
        Self {
            exchange,
            reply,
            answers,
        }
    }
}

impl Drop for ExchangeTarget<'_> {
    fn drop(&mut self) {
        let mut state = self.exchange.lock();
        state.active = state.active.saturating_sub(1);
        self.exchange.wake.notify_all();
    }
}

impl BinaryTarget for ExchangeTarget<'_> {
    type Error = Stopped;

    fn dim(&self) -> usize {
        self.exchange.dim
    }

    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Stopped> {
        {
            let mut state = self.exchange.lock();
            if state.failed {
                return Err(Stopped);
            }
            state.pending.push(Request {
                x: x.to_vec(),
                reply: self.reply.clone(),
            });
            self.exchange.wake.notify_all();
        }
        match self.answers.recv() {
            Ok(Some((u, g))) if g.len() == grad.len() => {
                grad.copy_from_slice(&g);
                Ok(u)
            }
            _ => Err(Stopped),
        }
    }
}
