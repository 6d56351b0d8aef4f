//! One run of a repository's suite in a sandbox: the runner's command in a fresh sandbox over
//! one checkout, its report read back into [`RunResults`].
//!
//! The sandbox is the worker's (same backend, limits and image, no network, no secret): the
//! tests are the repository's code, as untrusted as the worker's. A run that could not be
//! judged — it timed out, the runner is missing, the report cannot be read — is a
//! [`SuiteError`], never a pass.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::results::{self, MAX_REPORT_BYTES};
use super::runner::Runner;
use super::{ResultsError, RunResults};
use crate::sandbox::{Exit, LogSink, Sandbox, SandboxSpec, Stream};

/// Why a run has no results.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuiteError {
    #[error("{runner} ran out of its {limit:?}")]
    TimedOut { runner: String, limit: Duration },
    #[error("{runner} is not installed where the tests run ({program}: command not found)")]
    RunnerMissing { runner: String, program: String },
    #[error("{0}")]
    Unreadable(ResultsError),
    #[error("{runner} {exit} and wrote no report ({path}){}", last_words(.last))]
    NoReport {
        runner: String,
        exit: String,
        path: String,
        /// The runner's last line of output, which usually says why.
        last: Option<String>,
    },
    #[error("the sandbox could not run {runner}: {message}")]
    Sandbox { runner: String, message: String },
    #[error("{runner} was cancelled")]
    Cancelled { runner: String },
    /// Not run: verification ended before it (cancelled, or the sandbox broke on a run before).
    #[error("{runner} was not run")]
    NotRun { runner: String },
    /// The runner reported, but not a single test: its files did not load, or it found none.
    /// Nothing ran, so nothing passed.
    #[error("{runner} collected no test{}", last_words(.why))]
    NothingCollected {
        runner: String,
        /// The first file that did not load, else the runner's own error line.
        why: Option<String>,
    },
}

fn last_words(last: &Option<String>) -> String {
    last.as_deref()
        .map(|l| format!(": {l}"))
        .unwrap_or_default()
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct SuiteRun {
    pub results: Result<RunResults, SuiteError>,
    pub duration: Duration,
    /// The runner's last lines of output (both streams, blank lines and the runner's pointers
    /// to logs of its own left out), for the report of a run that could not be judged.
    pub tail: Vec<String>,
}

/// How many of the runner's last lines a run keeps for people.
pub const TAIL_LINES: usize = 12;

impl SuiteRun {
    /// A run whose report holds no test at all could not be judged: it is never an empty pass.
    pub fn judge_empty(mut self, runner: &str) -> SuiteRun {
        if let Ok(results) = &self.results
            && results.collected() == 0
        {
            let runner = runner.to_owned();
            let why = results
                .collection_errors
                .first()
                .cloned()
                .or_else(|| telling_line(&self.tail));
            self.results = Err(SuiteError::NothingCollected { runner, why });
        }
        self
    }
}

/// The runner's standard output, kept to [`MAX_REPORT_BYTES`] when it is the report (a runner
/// that reports there), and the last lines of both streams for people.
#[derive(Default)]
struct Output<'a> {
    /// Whether standard output is the report, and so kept.
    keep_stdout: bool,
    stdout: Mutex<(Vec<u8>, bool)>,
    tail: Mutex<std::collections::VecDeque<String>>,
    /// Where each line goes as well, as it comes.
    log: Option<&'a dyn LogSink>,
}

/// How many lines [`Output`] keeps to find the telling one in: a runner's last words after its
/// error (a summary, npm's pointers to its own log) are rarely more.
const KEPT_LINES: usize = 40;

impl LogSink for Output<'_> {
    fn line(&self, stream: Stream, line: &str) {
        if let Some(log) = self.log {
            log.line(stream, line);
        }
        if self.keep_stdout
            && stream == Stream::Stdout
            && let Ok(mut out) = self.stdout.lock()
        {
            if out.0.len() + line.len() < MAX_REPORT_BYTES {
                out.0.extend_from_slice(line.as_bytes());
                out.0.push(b'\n');
            } else {
                out.1 = true;
            }
        }
        if let Ok(mut tail) = self.tail.lock() {
            if tail.len() == KEPT_LINES {
                tail.pop_front();
            }
            tail.push_back(line.to_owned());
        }
    }
}

/// Where a run is made: the sandbox, the worker's `template` for everything but what runs and
/// where, and the log every line of the runner's output is copied to as it comes (the job's
/// verification log, which a terminal or the job page follows).
pub struct Place<'a> {
    pub sandbox: &'a dyn Sandbox,
    pub template: &'a SandboxSpec,
    pub log: Option<&'a dyn LogSink>,
}

/// Runs `runner` over `workspace` in `place`. `scratch` is an empty directory of the bot's for
/// `/job` and `/job-out`.
pub async fn run(
    place: &Place<'_>,
    runner: &Runner,
    workspace: &Path,
    scratch: &Path,
    timeout: Duration,
    cancel: CancellationToken,
) -> SuiteRun {
    let started = Instant::now();
    let output = Output {
        keep_stdout: runner.path.is_none(),
        log: place.log,
        ..Output::default()
    };
    let results = run_inner(place, &output, runner, workspace, scratch, timeout, cancel).await;
    let tail = output
        .tail
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .filter(|l| !l.trim().is_empty() && !is_log_pointer(l))
        .collect::<Vec<_>>();
    let tail = tail[tail.len().saturating_sub(TAIL_LINES)..].to_vec();
    SuiteRun {
        results,
        duration: started.elapsed(),
        tail,
    }
}

async fn run_inner(
    place: &Place<'_>,
    output: &Output<'_>,
    runner: &Runner,
    workspace: &Path,
    scratch: &Path,
    timeout: Duration,
    cancel: CancellationToken,
) -> Result<RunResults, SuiteError> {
    let (sandbox, template) = (place.sandbox, place.template);
    let sandbox_error = |message: String| SuiteError::Sandbox {
        runner: runner.name.clone(),
        message,
    };
    let (job_dir, out_dir) = (scratch.join("job"), scratch.join("out"));
    for dir in [&job_dir, &out_dir.join("verify")] {
        std::fs::create_dir_all(dir)
            .map_err(|e| sandbox_error(format!("{}: {e}", dir.display())))?;
    }
    let mut spec = template.clone();
    spec.workspace = workspace.to_path_buf();
    spec.job_dir = job_dir;
    spec.out_dir = out_dir.clone();
    spec.command = runner.command.clone();
    // The suite is as untrusted as the worker, and needs none of the worker's variables (an
    // operator's `worker.env` may hold a model's API key): only the environment's own (where
    // its module caches are, its virtual environment).
    spec.env
        .retain(|(name, _)| crate::environment::plan::is_environment_variable(name));
    spec.network = crate::sandbox::Network::None;
    spec.read_only = Vec::new();
    spec.limits.timeout = timeout;
    let exit = sandbox
        .run(&spec, output, cancel)
        .await
        .map_err(|e| sandbox_error(e.to_string()))?;
    let name = runner.name.clone();
    match exit {
        Exit::TimedOut => {
            return Err(SuiteError::TimedOut {
                runner: name,
                limit: timeout,
            });
        }
        Exit::Cancelled => return Err(SuiteError::Cancelled { runner: name }),
        // The shell's and env's "command not found".
        Exit::Code(127) => {
            return Err(SuiteError::RunnerMissing {
                runner: name,
                program: runner.program().to_owned(),
            });
        }
        _ => {}
    }
    match &runner.path {
        None => {
            let last = last_line(output);
            let (stdout, cut) =
                std::mem::take(&mut *output.stdout.lock().unwrap_or_else(|p| p.into_inner()));
            if cut {
                return Err(SuiteError::Unreadable(ResultsError {
                    runner: name,
                    source_name: "its output".to_owned(),
                    message: format!("more than the {MAX_REPORT_BYTES} bytes read"),
                }));
            }
            let results = results::read(runner.format, &runner.name, "its output", &stdout)
                .map_err(SuiteError::Unreadable)?;
            // A runner that failed before reporting a single test (it did not build, it was
            // killed) has no results to judge, not an empty suite.
            if results.tests.is_empty() && results.collection_errors.is_empty() && !exit.success() {
                return Err(SuiteError::NoReport {
                    runner: name,
                    exit: exit.to_string(),
                    path: "its output".to_owned(),
                    last,
                });
            }
            Ok(results)
        }
        Some(path) => {
            let files = report_files(path, workspace, &out_dir);
            if files.is_empty() {
                return Err(SuiteError::NoReport {
                    runner: name,
                    exit: exit.to_string(),
                    path: path.clone(),
                    last: last_line(output),
                });
            }
            let mut all = RunResults::default();
            for (inside, host) in files {
                let text = read_report(&host).map_err(|message| {
                    SuiteError::Unreadable(ResultsError {
                        runner: runner.name.clone(),
                        source_name: inside.clone(),
                        message,
                    })
                })?;
                let one = results::read(runner.format, &runner.name, &inside, &text)
                    .map_err(SuiteError::Unreadable)?;
                all.tests.extend(one.tests);
                all.collection_errors.extend(one.collection_errors);
            }
            Ok(all)
        }
    }
}

/// The line of the runner's output that says why it stopped.
fn last_line(output: &Output) -> Option<String> {
    let tail = output.tail.lock().unwrap_or_else(|p| p.into_inner());
    let lines: Vec<String> = tail.iter().cloned().collect();
    telling_line(&lines)
}

/// The line of a runner's last output that says why it stopped, shortened: its first error line
/// (`ModuleNotFoundError: …`, `npm error could not determine executable to run`), else its last
/// line that is not blank. A runner's pointer to a log of its own (`npm error A complete log of
/// this run can be found in: …`) says nothing: that log is in a sandbox that is gone.
pub fn telling_line(lines: &[String]) -> Option<String> {
    let meaningful = || {
        lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty() && !is_log_pointer(l))
    };
    let error = |l: &&str| {
        let lower = l.to_ascii_lowercase();
        [
            "error",
            "not found",
            "no such file",
            "cannot find",
            "no module named",
        ]
        .iter()
        .any(|w| lower.contains(w))
            && !lower.starts_with("npm warn")
    };
    let line = meaningful()
        .find(error)
        .or_else(|| meaningful().next_back())?;
    Some(crate::text::shortened(line, 200))
}

/// A runner's pointer to a log of its own, or a line of one: npm's "A complete log of this run
/// can be found in:" and the path that follows it.
fn is_log_pointer(line: &str) -> bool {
    let line = line.trim();
    line.contains("A complete log of this run can be found in")
        || (line.starts_with("npm error") && line.contains("/_logs/"))
}

/// The report files `path` (as the sandbox sees it, a `*` allowed in its last part) names on
/// the host, as `(inside, host)`, in name order.
fn report_files(path: &str, workspace: &Path, out_dir: &Path) -> Vec<(String, PathBuf)> {
    let host = |inside: &str| -> Option<PathBuf> {
        let (root, rest) = if let Some(rest) = inside.strip_prefix("/job-out/") {
            (out_dir, rest)
        } else {
            (workspace, inside.strip_prefix("/workspace/")?)
        };
        beneath(root, rest)
    };
    let Some((dir, pattern)) = path.rsplit_once('/') else {
        return Vec::new();
    };
    if !pattern.contains('*') {
        // A report that is not there at all is no report; anything else there is read (and
        // refused if it is not a regular file).
        return host(path)
            .filter(|h| std::fs::symlink_metadata(h).is_ok())
            .map(|h| vec![(path.to_owned(), h)])
            .unwrap_or_default();
    }
    let Some(host_dir) = host(&format!("{dir}/")) else {
        return Vec::new();
    };
    if !std::fs::symlink_metadata(&host_dir).is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    let (prefix, suffix) = pattern.split_once('*').unwrap_or((pattern, ""));
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&host_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            (name.starts_with(prefix)
                && name.ends_with(suffix)
                && name.len() >= prefix.len() + suffix.len())
            .then(|| (format!("{dir}/{name}"), host_dir.join(&name)))
        })
        .collect();
    out.sort();
    out
}

/// `rest` under `root` on the host, when every directory on the way is a real directory: the
/// run may have left a symlink where a report's directory should be (`target -> /home`), and
/// the bot reads nothing outside the run's own directories. The run's processes are gone, so
/// nothing changes between this look and the read.
fn beneath(root: &Path, rest: &str) -> Option<PathBuf> {
    let mut path = root.to_path_buf();
    let mut parts = rest
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .peekable();
    while let Some(part) = parts.next() {
        if part == ".." {
            return None;
        }
        path.push(part);
        let last = parts.peek().is_none();
        if !last && !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            return None;
        }
    }
    Some(path)
}

/// A report file the runner (untrusted) wrote: a regular file, never through a symlink, bounded.
fn read_report(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let Some((file, _)) =
        crate::files::open_regular(path).map_err(|e| format!("cannot open it: {e}"))?
    else {
        return Err("not a regular file".to_owned());
    };
    let mut text = Vec::new();
    file.take(MAX_REPORT_BYTES as u64 + 1)
        .read_to_end(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() > MAX_REPORT_BYTES {
        return Err(format!("more than the {MAX_REPORT_BYTES} bytes read"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_files_by_name_and_by_pattern() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (ws, out) = (dir.path().join("ws"), dir.path().join("out"));
        std::fs::create_dir_all(ws.join("target/surefire-reports")).expect("mkdir");
        std::fs::create_dir_all(out.join("verify")).expect("mkdir");
        assert!(report_files("/job-out/verify/junit.xml", &ws, &out).is_empty());
        std::fs::write(out.join("verify/junit.xml"), "x").expect("write");
        for name in ["TEST-b.xml", "TEST-a.xml", "other.txt"] {
            std::fs::write(ws.join("target/surefire-reports").join(name), "x").expect("write");
        }
        let found = report_files("/workspace/target/surefire-reports/TEST-*.xml", &ws, &out);
        let inside: Vec<&str> = found.iter().map(|(i, _)| i.as_str()).collect();
        assert_eq!(
            inside,
            [
                "/workspace/target/surefire-reports/TEST-a.xml",
                "/workspace/target/surefire-reports/TEST-b.xml"
            ]
        );
        let one = report_files("/job-out/verify/junit.xml", &ws, &out);
        assert_eq!(
            one,
            [(
                "/job-out/verify/junit.xml".to_owned(),
                out.join("verify/junit.xml")
            )]
        );
        assert!(report_files("/etc/passwd", &ws, &out).is_empty());
        assert!(report_files("/workspace/../x.xml", &ws, &out).is_empty());
    }

    #[test]
    fn a_report_directory_that_is_a_symlink_is_not_followed() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (ws, out) = (dir.path().join("ws"), dir.path().join("out"));
        let elsewhere = dir.path().join("elsewhere/surefire-reports");
        std::fs::create_dir_all(&elsewhere).expect("mkdir");
        std::fs::create_dir_all(&ws).expect("mkdir");
        std::fs::write(elsewhere.join("TEST-a.xml"), "x").expect("write");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), ws.join("target")).expect("link");
        std::os::unix::fs::symlink(&elsewhere, ws.join("reports")).expect("link");
        for path in [
            "/workspace/target/surefire-reports/TEST-*.xml",
            "/workspace/target/surefire-reports/TEST-a.xml",
            "/workspace/reports/TEST-*.xml",
        ] {
            assert!(report_files(path, &ws, &out).is_empty(), "{path}");
        }
    }

    #[test]
    fn a_report_that_is_a_symlink_is_not_read() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "<testsuites/>").expect("write");
        let link = dir.path().join("junit.xml");
        std::os::unix::fs::symlink(&secret, &link).expect("link");
        let err = read_report(&link).expect_err("a symlink");
        assert!(err.starts_with("cannot open it"), "{err}");
        assert!(read_report(&secret).is_ok());
    }
}
