//! The worker pool every runner shares: a local rayon pool of a fixed size, items collected in
//! their own order, a panicking item turned into an error.

use rayon::prelude::*;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, PoisonError};

/// Why the pool could not run every item.
#[derive(Debug)]
pub enum PoolError {
    /// The worker threads could not be started.
    Build(rayon::ThreadPoolBuildError),
    /// The item `chain` panicked; no result of the run is returned.
    WorkerPanicked {
        /// The item (chain, or block of coordinates) that panicked.
        chain: usize,
        /// The panic's message, where it carried text.
        message: String,
    },
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Build(e) => write!(f, "could not start the worker threads: {e}"),
            Self::WorkerPanicked { chain, message } => {
                write!(f, "the worker running chain {chain} panicked: {message}")
            }
        }
    }
}

impl std::error::Error for PoolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Build(e) => Some(e),
            Self::WorkerPanicked { .. } => None,
        }
    }
}

/// A fixed number of worker threads (a local [`rayon::ThreadPool`], never the global one).
///
/// [`map`](Self::map) runs one closure per item and returns the results in item order, so a
/// run whose items are independent (each chain with its own stream, see [`crate::seeding`])
/// gives the same output for every thread count. An item that panics becomes
/// [`PoolError::WorkerPanicked`]: never a missing result.
///
/// # Examples
///
/// ```
/// use langevin_std::run::{Pool, PoolError};
/// let pool = Pool::new(2).unwrap();
/// let squares = pool.map(vec![1u64, 2, 3], |_, x| Ok::<_, PoolError>(x * x)).unwrap();
/// assert_eq!(squares, [1, 4, 9]);
/// ```
#[derive(Debug)]
pub struct Pool {
    pool: rayon::ThreadPool,
}

impl Pool {
    /// A pool of `threads` workers; `0` means one per available core.
    ///
    /// # Errors
    ///
    /// [`PoolError::Build`] if the threads cannot be started.
    pub fn new(threads: usize) -> Result<Self, PoolError> {
        let threads = if threads == 0 {
            available_threads()
        } else {
            threads
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("langevin-worker-{i}"))
            .build()
            .map_err(PoolError::Build)?;
        Ok(Self { pool })
    }

    /// A pool of `threads` workers (`0`: one per core), but no more than `items` (at least one).
    ///
    /// # Errors
    ///
    /// As for [`new`](Self::new).
    pub fn for_items(threads: usize, items: usize) -> Result<Self, PoolError> {
        let threads = if threads == 0 {
            available_threads()
        } else {
            threads
        };
        Self::new(threads.clamp(1, items.max(1)))
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Runs `one(i, input_i)` for every input on the pool's workers and returns the results
    /// in input order.
    ///
    /// # Errors
    ///
    /// The first error in input order: an item's own error, or
    /// [`PoolError::WorkerPanicked`] (converted into `E`) for an item that panicked.
    pub fn map<T, R, E, F>(&self, inputs: Vec<T>, one: F) -> Result<Vec<R>, E>
    where
        T: Send,
        R: Send,
        E: Send + From<PoolError>,
        F: Fn(usize, T) -> Result<R, E> + Sync,
    {
        // Each input and outcome in its own slot, so that the parallel loop is one function
        // over indices: rayon's machinery is compiled once, not once per caller's closure.
        let inputs: Vec<Mutex<Option<T>>> =
            inputs.into_iter().map(|t| Mutex::new(Some(t))).collect();
        let outcomes: Vec<Mutex<Option<Result<R, E>>>> =
            inputs.iter().map(|_| Mutex::new(None)).collect();
        self.for_each_index(inputs.len(), &|i| {
            let outcome = lock(&inputs[i]).take().map(|input| {
                catch_unwind(AssertUnwindSafe(|| one(i, input))).unwrap_or_else(|payload| {
                    Err(E::from(PoolError::WorkerPanicked {
                        chain: i,
                        message: panic_message(payload.as_ref()),
                    }))
                })
            });
            *lock(&outcomes[i]) = outcome;
        });
        outcomes
            .into_iter()
            .enumerate()
            .map(|(i, slot)| {
                // rayon visits every index once; were one skipped, its item is an error.
                slot.into_inner()
                    .unwrap_or_else(PoisonError::into_inner)
                    .unwrap_or_else(|| {
                        Err(E::from(PoolError::WorkerPanicked {
                            chain: i,
                            message: "the pool did not run this item".to_owned(),
                        }))
                    })
            })
            .collect()
    }

    /// Calls `body(i)` for every `i < n` on the pool's workers.
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        self.pool.install(|| (0..n).into_par_iter().for_each(body));
    }
}

/// Locks a slot (only the worker of its index touches it). No code panics while holding one, but
/// a poisoned slot would still hold its value.
fn lock<T>(slot: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One worker per available core (one if that cannot be told).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_input_order_for_every_thread_count() {
        let expected: Vec<usize> = (0..17).map(|i| i * 3).collect();
        for threads in 1..=3 {
            let pool = Pool::new(threads).unwrap();
            assert_eq!(pool.threads(), threads);
            let out = pool
                .map((0..17).collect(), |i, x: usize| {
                    assert_eq!(i, x);
                    Ok::<_, PoolError>(x * 3)
                })
                .unwrap();
            assert_eq!(out, expected);
        }
    }

    #[test]
    fn a_panicking_item_is_an_error_not_a_missing_result() {
        for threads in 1..=3 {
            let pool = Pool::new(threads).unwrap();
            let out = pool.map((0..6).collect(), |_, x: usize| {
                if x == 4 {
                    panic!("chain {x} broke");
                }
                Ok::<_, PoolError>(x)
            });
            match out {
                Err(PoolError::WorkerPanicked { chain, message }) => {
                    assert_eq!((chain, message.as_str()), (4, "chain 4 broke"));
                }
                other => panic!("expected a panic error, got {other:?}"),
            }
        }
    }

    #[test]
    fn the_first_error_in_input_order_wins() {
        let pool = Pool::new(3).unwrap();
        let out = pool.map((0..8).collect(), |_, x: usize| {
            if x == 2 {
                panic!("two");
            }
            if x >= 5 {
                return Err(PoolError::WorkerPanicked {
                    chain: x,
                    message: "late".into(),
                });
            }
            Ok(x)
        });
        assert!(matches!(
            out,
            Err(PoolError::WorkerPanicked { chain: 2, .. })
        ));
    }

    #[test]
    fn pools_never_have_more_threads_than_items() {
        assert_eq!(Pool::for_items(8, 3).unwrap().threads(), 3);
        assert_eq!(Pool::for_items(2, 0).unwrap().threads(), 1);
    }
}
