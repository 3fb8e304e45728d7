//! Progress on stderr with rate and time left, never with `--quiet`. On a terminal: a bar,
//! once a run has taken a second, erased when the run ends. Piped or redirected (a log file,
//! CI): one plain line every ten seconds once a run has taken ten, so that a long run is never
//! silent and a short one writes nothing.

use langevin_std::run::Progress;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Runs shorter than this never show a bar.
const DELAY: Duration = Duration::from_secs(1);
/// How often the bar is redrawn.
const REFRESH: Duration = Duration::from_millis(100);
/// Runs shorter than this write no progress line when stderr is not a terminal; then one line
/// every this long.
const LINE_EVERY: Duration = Duration::from_secs(10);
const BAR_WIDTH: usize = 24;

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
            let mut err = std::io::stderr();
            if err.is_terminal() {
                watch(label, unit, total, counter_ref, &finished, DELAY, &mut err);
            } else {
                watch_lines(
                    label,
                    unit,
                    total,
                    counter_ref,
                    &finished,
                    LINE_EVERY,
                    &mut err,
                );
            }
        });
        let out = work(Some(&progress));
        // Dropping the sender wakes the monitor, which erases the bar and stops.
        drop(done);
        let _ = monitor.join();
        out
    })
}

/// Redraws the bar every [`REFRESH`] once `delay` has passed, until the channel closes.
fn watch(
    label: &str,
    unit: &str,
    total: u64,
    counter: &AtomicU64,
    finished: &mpsc::Receiver<()>,
    delay: Duration,
    out: &mut dyn Write,
) {
    let start = Instant::now();
    let mut drawn = false;
    // Any message or the sender's drop ends the run.
    while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(REFRESH) {
        let elapsed = start.elapsed();
        if elapsed < delay {
            continue;
        }
        let done = counter.load(Ordering::Relaxed).min(total);
        let _ = write!(out, "\r{}\x1b[K", render(label, unit, done, total, elapsed));
        let _ = out.flush();
        drawn = true;
    }
    if drawn {
        let _ = write!(out, "\r\x1b[K");
        let _ = out.flush();
    }
}

/// Writes one progress line every `every` (the first after `every`), until the channel closes.
fn watch_lines(
    label: &str,
    unit: &str,
    total: u64,
    counter: &AtomicU64,
    finished: &mpsc::Receiver<()>,
    every: Duration,
    out: &mut dyn Write,
) {
    let start = Instant::now();
    while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(every) {
        let done = counter.load(Ordering::Relaxed).min(total);
        let _ = writeln!(out, "{}", render(label, unit, done, total, start.elapsed()));
        let _ = out.flush();
    }
}

/// One line: `label [#####.....]  42%  4.2M/10.0M steps  1.3M steps/s  ETA 4s`.
fn render(label: &str, unit: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let fraction = if total == 0 {
        1.0
    } else {
        done as f64 / total as f64
    };
    let filled = ((fraction * BAR_WIDTH as f64) as usize).min(BAR_WIDTH);
    let bar = format!("{}{}", "#".repeat(filled), ".".repeat(BAR_WIDTH - filled));
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 {
        done as f64 / seconds
    } else {
        0.0
    };
    let eta = if rate > 0.0 {
        duration((total - done) as f64 / rate)
    } else {
        "?".to_string()
    };
    format!(
        "{label} [{bar}] {:>3}%  {}/{} {unit}  {} {unit}/s  ETA {eta}",
        (fraction * 100.0).floor() as u64,
        count(done as f64),
        count(total as f64),
        count(rate),
    )
}

/// A count with a metric suffix: `950`, `12.3k`, `4.0M`, `1.2G`.
fn count(x: f64) -> String {
    match x {
        x if x < 1e3 => format!("{x:.0}"),
        x if x < 1e6 => format!("{:.1}k", x / 1e3),
        x if x < 1e9 => format!("{:.1}M", x / 1e6),
        x => format!("{:.1}G", x / 1e9),
    }
}

/// A duration rounded up to whole seconds: `7s`, `3m05s`, `2h07m`.
fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).ceil() as u64;
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_fraction_rate_and_time_left() {
        let line = render("dmala", "steps", 250, 1000, Duration::from_secs(2));
        assert_eq!(
            line,
            "dmala [######..................]  25%  250/1.0k steps  125 steps/s  ETA 6s"
        );
        let line = render("x", "steps", 0, 10, Duration::from_secs(1));
        assert!(line.ends_with("ETA ?"), "{line}");
        assert!(render("x", "steps", 10, 10, Duration::from_secs(1)).contains("100%"));
    }

    #[test]
    fn units() {
        let counts = [
            (999.0, "999"),
            (12_345.0, "12.3k"),
            (4.0e6, "4.0M"),
            (1.25e9, "1.2G"),
        ];
        for (n, text) in counts {
            assert_eq!(count(n), text);
        }
        for (s, text) in [(0.2, "1s"), (185.0, "3m05s"), (7620.0, "2h07m")] {
            assert_eq!(duration(s), text);
        }
    }

    #[test]
    fn monitor_draws_after_the_delay_and_erases_at_the_end() {
        let counter = AtomicU64::new(0);
        let (done, finished) = mpsc::channel::<()>();
        let mut out = Vec::new();
        std::thread::scope(|s| {
            let (counter, out) = (&counter, &mut out);
            let monitor =
                s.spawn(move || watch("t", "steps", 100, counter, &finished, Duration::ZERO, out));
            counter.store(50, Ordering::Relaxed);
            std::thread::sleep(3 * REFRESH);
            drop(done);
            monitor.join().unwrap();
        });
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(" 50%"), "{text:?}");
        assert!(text.ends_with("\r\x1b[K"), "{text:?}");
    }

    #[test]
    fn piped_progress_is_plain_lines() {
        let counter = AtomicU64::new(40);
        let (done, finished) = mpsc::channel::<()>();
        let mut out = Vec::new();
        std::thread::scope(|s| {
            let (counter, out) = (&counter, &mut out);
            let monitor =
                s.spawn(move || watch_lines("t", "steps", 100, counter, &finished, REFRESH, out));
            std::thread::sleep(5 * REFRESH / 2);
            drop(done);
            monitor.join().unwrap();
        });
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().count() >= 2, "{text:?}");
        assert!(
            text.lines()
                .all(|l| l.starts_with("t [") && l.contains(" 40%")),
            "{text:?}"
        );
        assert!(!text.contains('\r') && !text.contains('\x1b'), "{text:?}");
    }

    #[test]
    fn short_runs_draw_nothing() {
        let counter = AtomicU64::new(0);
        let (done, finished) = mpsc::channel::<()>();
        drop(done);
        let mut out = Vec::new();
        watch("t", "steps", 100, &counter, &finished, DELAY, &mut out);
        assert!(out.is_empty());
        let value = with_progress("t", 10, false, |c| c.is_none());
        assert!(value);
    }
}
