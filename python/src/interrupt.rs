//! Ctrl-C for the library's runners: a run works on a thread of its own while the calling
//! thread, the GIL released, checks Python's signals every 100 ms and cancels the run through
//! its [`Progress`] when a handler raises (a `KeyboardInterrupt` among them).

use langevin_std::run::{Progress, RunError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::time::Duration;

/// How often the signals are checked while a run works.
const CHECK_EVERY: Duration = Duration::from_millis(100);

/// Runs `work` with a fresh [`Progress`] on a scoped thread and waits for it, checking
/// Python's signals every [`CHECK_EVERY`]. When a signal handler raises, the run is cancelled,
/// its thread joined (every chain stops at its next step) and the handler's exception
/// returned; otherwise the run's own result.
///
/// # Errors
///
/// The signal handler's exception, or a `RuntimeError` if the run's thread panicked.
pub(crate) fn run_interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&Progress) -> Result<T, RunError> + Send,
) -> PyResult<Result<T, RunError>> {
    let progress = Progress::new();
    let (outcome, interrupt) = py.detach(|| {
        std::thread::scope(|scope| {
            let main = std::thread::current();
            let progress = &progress;
            let run = scope.spawn(move || {
                let out = work(progress);
                main.unpark();
                out
            });
            let mut interrupt = None;
            while !run.is_finished() {
                std::thread::park_timeout(CHECK_EVERY);
                if interrupt.is_none()
                    && let Err(e) = Python::attach(|py| py.check_signals())
                {
                    progress.cancel();
                    interrupt = Some(e);
                }
            }
            (run.join(), interrupt)
        })
    });
    if let Some(e) = interrupt {
        return Err(e);
    }
    outcome.map_err(|_| PyRuntimeError::new_err("the run's thread panicked"))
}
