//! A long phase shown while it runs: on a terminal, one status line on stderr that ticks each
//! quarter second (the phase, the time elapsed, the last line of the phase's log), rewritten
//! in place and cleared at the end; off a terminal, each line of the log that names a step
//! (`── base run (pytest) ──`), once, so a CI log says what ran without the runners' chatter.
//! Every line a worker or a runner wrote passes through [`printable`] before a terminal sees it.

use std::io::{IsTerminal, Write as _};
use std::sync::Arc;
use std::time::{Duration, Instant};

use forgeward::sandbox::JobLog;

/// How often the status line is redrawn.
const TICK: Duration = Duration::from_millis(250);

/// The widest status line drawn: a terminal wraps a longer one, and the next redraw would
/// leave the wrapped part behind.
const LINE_MAX_CHARS: usize = 100;

/// A running status line; [`Ticker::stop`] ends it.
pub struct Ticker {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Ticker {
    /// Starts showing `phase` and `log` on stderr (inside a tokio runtime).
    pub fn start(phase: &'static str, log: Arc<JobLog>) -> Ticker {
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let tty = std::io::stderr().is_terminal();
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let mut seen = 0;
            let mut drawn = false;
            let mut tick = tokio::time::interval(TICK);
            let mut last_round = false;
            loop {
                tokio::select! {
                    // The lines written since the last tick are shown before it ends.
                    _ = &mut stopped => last_round = true,
                    _ = tick.tick() => {}
                }
                let total = log.total_lines();
                let new = usize::try_from(total.saturating_sub(seen)).unwrap_or(usize::MAX);
                let lines = log.tail(new.min(200));
                seen = total;
                let mut err = std::io::stderr().lock();
                if tty {
                    if !last_round {
                        let last = log.tail(1).pop().unwrap_or_default();
                        let line = status_line(phase, started.elapsed(), &last);
                        let _ = write!(err, "\r\x1b[2K{line}");
                        drawn = true;
                    }
                } else {
                    for step in lines.iter().filter(|l| l.starts_with("── ")) {
                        let _ = writeln!(err, "{} {step}", stamp(started.elapsed()));
                    }
                }
                let _ = err.flush();
                if last_round {
                    break;
                }
            }
            if drawn {
                let _ = write!(std::io::stderr(), "\r\x1b[2K");
            }
        });
        Ticker { stop, task }
    }

    /// Clears the status line.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// `[m:ss]`, as every progress line starts.
pub fn stamp(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    format!("[{:>2}:{:02}]", secs / 60, secs % 60)
}

/// The status line: `[ 0:12] verifying │ the log's last line`, within [`LINE_MAX_CHARS`],
/// control characters shown as U+FFFD.
fn status_line(phase: &str, elapsed: Duration, last: &str) -> String {
    let last = printable(last.trim());
    let line = if last.is_empty() {
        format!("{} {phase}", stamp(elapsed))
    } else {
        format!("{} {phase} │ {last}", stamp(elapsed))
    };
    let mut cut: String = line.chars().take(LINE_MAX_CHARS).collect();
    if cut.len() < line.len() {
        cut.pop();
        cut.push('…');
    }
    cut
}

/// A line the worker wrote, safe for a terminal: control characters (escape sequences) shown as
/// U+FFFD.
pub fn printable(line: &str) -> String {
    line.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_names_the_phase_the_time_and_the_last_line() {
        assert_eq!(
            status_line(
                "verifying",
                Duration::from_secs(75),
                "  collected 3 items\n"
            ),
            "[ 1:15] verifying │ collected 3 items"
        );
        assert_eq!(
            status_line("verifying", Duration::ZERO, ""),
            "[ 0:00] verifying"
        );
        let long = status_line("verifying", Duration::ZERO, &"x".repeat(500));
        assert_eq!(long.chars().count(), LINE_MAX_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(
            status_line("verifying", Duration::ZERO, "\x1b[31mred"),
            "[ 0:00] verifying │ \u{FFFD}[31mred"
        );
    }
}
