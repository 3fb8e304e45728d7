//! Progress on stderr with rate and time left, never with `--quiet`. On a terminal: an
//! `indicatif` bar, once a run has taken a second, erased when the run ends. Piped or redirected
//! (a log file, CI): one plain line every ten seconds once a run has taken ten, so that a long
//! run is never silent and a short one writes nothing.

use indicatif::{HumanCount, HumanDuration, HumanFloatCount, ProgressBar, ProgressDrawTarget};
use indicatif::{ProgressStyle, style::TemplateError};
use langevin_std::run::Progress;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Runs shorter than this never show a bar.
const DELAY: Duration = Duration::from_secs(1);
/// How often the bar reads the counter (and at most how often it is redrawn).
const REFRESH: Duration = Duration::from_millis(100);
/// Runs shorter than this write no progress line when stderr is not a terminal; then one line
/// every this long.
const LINE_EVERY: Duration = Duration::from_secs(10);

/// Whether progress may be shown: the user did not ask for quiet (a bar on a terminal, plain
/// lines otherwise).
pub fn wanted(quiet: bool) -> bool {
    !quiet
}

/// Runs `work`, handing it a [`Progress`] when `show`; a monitor thread reads its counter and
/// draws a bar for `total` steps on stderr until `work` returns.
pub fn with_progress<T>(
    label: &str,
    total: u64,
    show: bool,
    work: impl FnOnce(Option<&Progress>) -> T,
) -> T {
    with_progress_in(label, "steps", total, show, work)
}

/// [`with_progress`] counting `unit` (`"steps"`, `"coordinates"`) instead of steps.
pub fn with_progress_in<T>(
    label: &str,
    unit: &str,
    total: u64,
    show: bool,
    work: impl FnOnce(Option<&Progress>) -> T,
) -> T {
    if !show || total == 0 {
        return work(None);
    }
    let progress = Progress::new();
    let (done, finished) = mpsc::channel::<()>();
    let counter_ref = progress.counter();
    std::thread::scope(|s| {
        let monitor = s.spawn(move || {
            let run = Run {
                label,
                unit,
                total,
                counter: counter_ref,
            };
            if std::io::stderr().is_terminal() {
                let stderr = || ProgressDrawTarget::stderr_with_hz(10);
                watch(&run, &finished, DELAY, stderr);
            } else {
                watch_lines(&run, &finished, LINE_EVERY, &mut std::io::stderr());
            }
        });
        let out = work(Some(&progress));
        // Dropping the sender wakes the monitor, which erases the bar and stops.
        drop(done);
        let _ = monitor.join();
        out
    })
}

/// What the monitor watches: a counter of `unit`s that goes up to `total`.
struct Run<'a> {
    label: &'a str,
    unit: &'a str,
    total: u64,
    counter: &'a AtomicU64,
}

impl Run<'_> {
    fn done(&self) -> u64 {
        self.counter.load(Ordering::Relaxed).min(self.total)
    }
}

/// The bar's look: `label [#####.....]  42%  4,200,000/10,000,000 steps  1,300,000/s  ETA 4s`.
fn style(unit: &str) -> Result<ProgressStyle, TemplateError> {
    let template = format!(
        "{{prefix}} [{{bar:24}}] {{percent:>3}}%  {{human_pos}}/{{human_len}} {unit}  \
         {{per_sec:0}}  ETA {{eta}}"
    );
    Ok(ProgressStyle::with_template(&template)?.progress_chars("#."))
}

/// Once `delay` has passed, shows a bar on the target that `draw` makes and moves it to the
/// counter every [`REFRESH`], until the channel closes; then erases it. Returns the last count
/// shown, if a bar was.
fn watch(
    run: &Run<'_>,
    finished: &mpsc::Receiver<()>,
    delay: Duration,
    draw: impl Fn() -> ProgressDrawTarget,
) -> Option<u64> {
    let start = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    // Any message or the sender's drop ends the run.
    while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(REFRESH) {
        if start.elapsed() < delay {
            continue;
        }
        let bar = bar.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(Some(run.total), draw())
                .with_prefix(run.label.to_owned())
                .with_elapsed(start.elapsed());
            if let Ok(style) = style(run.unit) {
                bar.set_style(style);
            }
            bar
        });
        bar.set_position(run.done());
    }
    let shown = bar.as_ref().map(ProgressBar::position);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    shown
}

/// Writes one progress line every `every` (the first after `every`), until the channel closes.
fn watch_lines(run: &Run<'_>, finished: &mpsc::Receiver<()>, every: Duration, out: &mut dyn Write) {
    let start = Instant::now();
    while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(every) {
        let _ = writeln!(out, "{}", line(run, run.done(), start.elapsed()));
        let _ = out.flush();
    }
}

/// One plain line: `label  42%  4,200,000/10,000,000 steps  1,300,000 steps/s  ETA 4s`.
fn line(run: &Run<'_>, done: u64, elapsed: Duration) -> String {
    let Run {
        label, unit, total, ..
    } = *run;
    let percent = (done as f64 / total.max(1) as f64 * 100.0).floor() as u64;
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 {
        done as f64 / seconds
    } else {
        0.0
    };
    let eta = if rate > 0.0 {
        let left = Duration::from_secs_f64((total - done) as f64 / rate);
        format!("{:#}", HumanDuration(left))
    } else {
        "?".to_string()
    };
    format!(
        "{label} {percent:>3}%  {}/{} {unit}  {:.0} {unit}/s  ETA {eta}",
        HumanCount(done),
        HumanCount(total),
        HumanFloatCount(rate),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(counter: &AtomicU64) -> Run<'_> {
        Run {
            label: "t",
            unit: "steps",
            total: 100,
            counter,
        }
    }

    #[test]
    fn line_shows_fraction_rate_and_time_left() {
        let counter = AtomicU64::new(0);
        let run = Run {
            label: "dmala",
            total: 1000,
            ..run(&counter)
        };
        let text = line(&run, 250, Duration::from_secs(2));
        assert_eq!(text, "dmala  25%  250/1,000 steps  125 steps/s  ETA 6s");
        let text = line(&run, 0, Duration::from_secs(1));
        assert!(text.ends_with("ETA ?"), "{text}");
        assert!(line(&run, 1000, Duration::from_secs(1)).contains("100%"));
        assert!(style("steps").is_ok());
    }

    #[test]
    fn monitor_shows_the_counter_after_the_delay() {
        let counter = AtomicU64::new(0);
        let (done, finished) = mpsc::channel::<()>();
        let shown = std::thread::scope(|s| {
            let counter = &counter;
            let monitor = s.spawn(move || {
                watch(
                    &run(counter),
                    &finished,
                    Duration::ZERO,
                    ProgressDrawTarget::hidden,
                )
            });
            counter.store(50, Ordering::Relaxed);
            std::thread::sleep(3 * REFRESH);
            drop(done);
            monitor.join().unwrap()
        });
        assert_eq!(shown, Some(50));
    }

    #[test]
    fn piped_progress_is_plain_lines() {
        let counter = AtomicU64::new(40);
        let (done, finished) = mpsc::channel::<()>();
        let mut out = Vec::new();
        std::thread::scope(|s| {
            let (run, out) = (run(&counter), &mut out);
            let monitor = s.spawn(move || watch_lines(&run, &finished, REFRESH, out));
            std::thread::sleep(5 * REFRESH / 2);
            drop(done);
            monitor.join().unwrap();
        });
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().count() >= 2, "{text:?}");
        assert!(
            text.lines().all(|l| l.starts_with("t  40%  40/100 steps")),
            "{text:?}"
        );
        assert!(!text.contains('\r') && !text.contains('\x1b'), "{text:?}");
    }

    #[test]
    fn short_runs_draw_nothing() {
        let counter = AtomicU64::new(0);
        let (done, finished) = mpsc::channel::<()>();
        drop(done);
        let shown = watch(&run(&counter), &finished, DELAY, ProgressDrawTarget::hidden);
        assert_eq!(shown, None);
        let value = with_progress("t", 10, false, |c| c.is_none());
        assert!(value);
    }
}
