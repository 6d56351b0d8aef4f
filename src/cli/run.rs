//! `forgeward run`: one job, locally, with no forge — live progress on the terminal, then the
//! report the bot would post and the branch it left.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Context as _;
use forgeward::config::server::{Backend, Settings};
use forgeward::jobs::local::{LocalJob, LocalOutcome, Progress, Source, run_local};
use forgeward::jobs::run::Task;
use forgeward::jobs::verify::Verification;
use forgeward::report;
use forgeward::sandbox::Exit;

use super::progress::printable;
use super::{EXIT_ERROR, EXIT_FLAGGED, EXIT_QUESTION};

#[derive(clap::Args)]
pub struct RunArgs {
    /// The repository: a directory on this machine (the result is left there as a branch) or a
    /// URL git can clone without credentials.
    #[arg(long, value_name = "PATH|URL")]
    repo: String,
    /// What the worker is asked to do.
    #[arg(
        long,
        value_name = "TEXT",
        required_unless_present = "task_file",
        conflicts_with = "task_file"
    )]
    task: Option<String>,
    /// What the worker is asked to do, from a Markdown file (its first line is the title).
    #[arg(long, value_name = "FILE")]
    task_file: Option<PathBuf>,
    /// The worker, as a shell command run in the sandbox [default: worker.command].
    #[arg(long, value_name = "CMD")]
    worker: Option<String>,
    /// Where the worker runs [default: sandbox.backend].
    #[arg(long, value_name = "BACKEND", value_parser = super::parse::<Backend>)]
    sandbox: Option<Backend>,
    /// The branch to start from [default: the checked-out branch; `main` for a URL].
    #[arg(long, value_name = "BRANCH")]
    base: Option<String>,
    /// The branch the result goes to [default: forgeward/run-<time>].
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// The bot's configuration, for the worker and sandbox settings.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Keep no mirror between runs: clone into a temporary one, removed afterwards.
    #[arg(long)]
    no_cache: bool,
}

/// Where `forgeward run` keeps its mirrors between runs, so that a second run on a repository
/// fetches only what is new: the configured data directory's mirrors when one is configured
/// (shared with the bot, which takes turns with this process over each mirror), else
/// `$XDG_CACHE_HOME/forgeward/mirrors` (`~/.cache/forgeward/mirrors`). `None` with `--no-cache`
/// or when neither is known: the mirror then lives and dies with the run's own directory.
pub(super) fn mirror_cache(
    settings: &Settings,
    no_cache: bool,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    if no_cache {
        return None;
    }
    let default = forgeward::config::server::ServerSection::default().data_dir;
    if settings.server.data_dir != default {
        return Some(settings.server.data_dir.join("mirrors"));
    }
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let cache = var("XDG_CACHE_HOME").and_then(absolute).or_else(|| {
        var("HOME")
            .and_then(absolute)
            .map(|home| home.join(".cache"))
    })?;
    Some(cache.join("forgeward").join("mirrors"))
}

/// Where the prepared environments are kept beside the mirrors at `mirrors`
/// (`~/.cache/forgeward/environments`).
pub(super) fn environments_beside(mirrors: &std::path::Path) -> PathBuf {
    mirrors.parent().unwrap_or(mirrors).join("environments")
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let (mut settings, secrets) = Settings::load(args.config.as_deref(), std::env::vars())?;
    if let Some(worker) = &args.worker {
        settings.worker.command = vec!["/bin/sh".to_owned(), "-c".to_owned(), worker.clone()];
        settings.worker.name.get_or_insert_with(|| worker.clone());
    }
    if let Some(backend) = args.sandbox {
        settings.sandbox.backend = backend;
    }
    let task = match (&args.task, &args.task_file) {
        (Some(text), _) => task_from_text(text),
        (None, Some(file)) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading {}", file.display()))?;
            task_from_text(&text)
        }
        (None, None) => anyhow::bail!("say what to do with --task or --task-file"),
    };
    if task.title.is_empty() {
        anyhow::bail!("the task is empty: say what to do with --task or --task-file");
    }
    // Before anything is cloned or prepared: a run with no worker could only fail later.
    if settings.worker.command.is_empty() {
        anyhow::bail!(
            "no worker: give its command with --worker 'COMMAND', or set worker.command in the configuration"
        );
    }
    let source = if std::path::Path::new(&args.repo).exists() {
        Source::Path(PathBuf::from(&args.repo))
    } else if args.repo.contains("://") || args.repo.contains('@') {
        Source::Url(args.repo.clone())
    } else {
        anyhow::bail!("{}: no such directory, and not a URL", args.repo);
    };
    let branch = args.branch.clone().unwrap_or_else(|| {
        format!(
            "forgeward/run-{}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S")
        )
    });
    clear_leftover_mounts();
    let data_dir = std::env::temp_dir().join(forgeward::jobs::leftovers::run_scratch_name());
    let mut config =
        forgeward::jobs::setup::local_pipeline_config(&settings, &secrets, data_dir.clone())?;
    if let Some(cache) = mirror_cache(&settings, args.no_cache, |name| std::env::var_os(name)) {
        config.environments = environments_beside(&cache);
        config.mirrors = cache;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let result = runtime.block_on(async {
        let owner = format!("forgeward-run-{}", std::process::id());
        let sandbox = forgeward::jobs::setup::sandbox(&settings.sandbox, &owner).await?;
        let job = LocalJob {
            source,
            task,
            base: args.base.clone(),
            branch,
        };
        let terminal = Terminal::new();
        let outcome = run_local(&config, sandbox, job, &|p| terminal.show(p)).await;
        terminal.done();
        outcome.map_err(|e| anyhow::anyhow!(e.message))
    });
    let _ = std::fs::remove_dir_all(&data_dir);
    let outcome = result?;
    print_outcome(&outcome)?;
    Ok(exit_code(&outcome))
}

/// Unmounts what a crashed `forgeward run` or `forgeward verify` left mounted in its
/// temporary directory; a failure is said and does not stop this run.
pub(super) fn clear_leftover_mounts() {
    let temp = std::env::temp_dir();
    if let Err(e) = forgeward::jobs::leftovers::clear_leftover_local_mounts(&temp) {
        tracing::warn!(error = %e, "unmounting what a crashed run left in {}", temp.display());
    }
}

fn task_from_text(text: &str) -> Task {
    let mut lines = text.trim().lines();
    let title = lines
        .next()
        .unwrap_or("")
        .trim_start_matches('#')
        .trim()
        .to_owned();
    Task {
        title,
        body: lines.collect::<Vec<_>>().join("\n").trim().to_owned(),
        instructions: String::new(),
        earlier_question: None,
    }
}

/// Progress on stderr: one line per phase, the worker's lines indented under "working".
struct Terminal {
    started: Instant,
    tty: bool,
    last: Mutex<String>,
}

impl Terminal {
    fn new() -> Terminal {
        Terminal {
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            last: Mutex::new(String::new()),
        }
    }

    fn show(&self, progress: Progress<'_>) {
        let stamp = super::progress::stamp(self.started.elapsed());
        let mut err = std::io::stderr().lock();
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        match progress {
            Progress::Phase(phase) => {
                if self.tty && !last.is_empty() {
                    let _ = writeln!(err);
                }
                let _ = writeln!(err, "{stamp} {phase}");
                last.clear();
            }
            // On a terminal the clock on the last line ticks while nothing is printed.
            Progress::Tick => {
                if self.tty && !last.is_empty() {
                    let _ = write!(err, "\r\x1b[2K{stamp}   │ {last}");
                }
            }
            Progress::Said(line) => {
                if self.tty && !last.is_empty() {
                    let _ = writeln!(err);
                }
                let _ = writeln!(err, "{stamp}   {}", printable(line));
                last.clear();
            }
            Progress::WorkerLine(line) => {
                let line: String = line.chars().take(160).collect();
                if self.tty {
                    let _ = write!(err, "\r\x1b[2K{stamp}   │ {line}");
                    *last = line;
                } else {
                    let _ = writeln!(err, "{stamp}   │ {line}");
                }
            }
        }
        let _ = err.flush();
    }

    fn done(&self) {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if self.tty && !last.is_empty() {
            eprintln!();
        }
    }
}

fn print_outcome(outcome: &LocalOutcome) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let verdict = match (&outcome.exit, &outcome.report) {
        _ if outcome.question.is_some() => "❓ the worker has a question",
        (Exit::TimedOut, _) => "⏱ the worker ran out of time",
        (exit, _) if !exit.success() => "❌ the worker failed",
        (_, None) => "❌ the worker made no changes",
        (_, Some(report)) if report.fails() => "⚠️ flagged: look before accepting",
        _ if unjudged(outcome).is_some() => "⚪ the tests could not be run: not ready for review",
        _ => "✅ ready for review",
    };
    writeln!(
        out,
        "{verdict} (the worker {} after {} s; the job took {} s)",
        outcome.exit,
        outcome.worker_duration.as_secs(),
        outcome.duration.as_secs()
    )?;
    let phases: Vec<String> = outcome
        .phases
        .iter()
        .map(|(phase, took)| format!("{phase} {:.1} s", took.as_secs_f64()))
        .collect();
    writeln!(out, "phases: {}", phases.join(" · "))?;
    if let Some(question) = &outcome.question {
        writeln!(out, "\nthe worker asks:")?;
        for line in question.lines() {
            writeln!(out, "  > {}", printable(line))?;
        }
        writeln!(
            out,
            "\nanswer it in the task (or --task-file) and run again; no change is ready for review\n"
        )?;
    } else if !outcome.exit.success() && !outcome.log_tail.is_empty() {
        writeln!(out, "the worker's last lines:")?;
        for line in &outcome.log_tail {
            writeln!(out, "  {line}")?;
        }
    }
    if let Some(summary) = &outcome.summary {
        writeln!(out, "\nthe worker's summary:\n{}\n", summary.trim())?;
    }
    if let Some(report) = &outcome.report {
        report::write_text(&mut out, report, false)?;
    }
    write_verification(&mut out, outcome.verification.as_ref())?;
    if let Some(why) = unjudged(outcome) {
        writeln!(out, "the tests could not be judged: {}", printable(&why))?;
    }
    writeln!(out, "tests: {}", outcome.tests)?;
    match (&outcome.branch, &outcome.commit) {
        (Some(branch), Some(commit)) => writeln!(out, "branch: {branch} ({commit})")?,
        (None, Some(commit)) => writeln!(
            out,
            "commit: {commit} (not pushed: the repository is remote)"
        )?,
        _ => {}
    }
    Ok(())
}

/// The bot's own runs of the tests, as the status comment shows them: a line per run, and the
/// tests whose outcome changed.
pub(super) fn write_verification(
    out: &mut impl std::io::Write,
    verification: Option<&Verification>,
) -> std::io::Result<()> {
    let Some(verification) = verification else {
        return Ok(());
    };
    let Some(view) = verification.view() else {
        return writeln!(out, "verification: off");
    };
    let Some(runner) = &view.runner else {
        let why = view.note.as_deref().unwrap_or("no test command");
        return writeln!(out, "verification: could not run: {}", printable(why));
    };
    writeln!(out, "verification ({}):", printable(runner))?;
    let durations = verification.durations();
    // The runs' names in one column, a space past the longest.
    let width = 1 + view
        .runs
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0);
    for (i, (name, counts)) in view.runs.iter().enumerate() {
        match counts {
            Ok([passed, failed, skipped, collected]) => writeln!(
                out,
                "  {name:<width$} {passed} passed · {failed} failed · {skipped} skipped · {collected} collected ({:.1} s)",
                durations.get(i).map_or(0.0, |d| d.as_secs_f64())
            )?,
            Err(why) => writeln!(
                out,
                "  {name:<width$} could not be judged: {}",
                printable(why)
            )?,
        }
    }
    for (run, tail) in verification.unjudged_tails() {
        writeln!(out, "  the {run} run's last lines:")?;
        for line in tail {
            writeln!(out, "    │ {}", printable(line))?;
        }
    }
    for (id, head, base) in &view.changed {
        writeln!(
            out,
            "  {}: {head} with the change's tests, {base} with the base's",
            printable(id)
        )?;
    }
    Ok(())
}

/// Why the bot's runs of the tests could not judge the change, when they could not.
fn unjudged(outcome: &LocalOutcome) -> Option<String> {
    outcome.verification.as_ref()?.unjudged()
}

/// As `forgeward verify`: tests that could not be judged are an error (2), whatever else the
/// change shows; then flags (1).
fn exit_code(outcome: &LocalOutcome) -> ExitCode {
    match &outcome.report {
        _ if outcome.question.is_some() => ExitCode::from(EXIT_QUESTION),
        _ if !outcome.exit.success() => ExitCode::from(EXIT_ERROR),
        None => ExitCode::from(EXIT_ERROR),
        Some(_) if unjudged(outcome).is_some() => ExitCode::from(EXIT_ERROR),
        Some(report) if report.fails() => ExitCode::from(EXIT_FLAGGED),
        Some(_) => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(data_dir: Option<&str>, vars: &[(&str, &str)], no_cache: bool) -> Option<PathBuf> {
        let mut settings = Settings::default();
        if let Some(dir) = data_dir {
            settings.server.data_dir = PathBuf::from(dir);
        }
        let vars: Vec<(String, std::ffi::OsString)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).into()))
            .collect();
        mirror_cache(&settings, no_cache, |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn mirrors_are_kept_in_the_data_directory_or_the_user_s_cache() {
        let home = [("HOME", "/home/ada")];
        assert_eq!(
            cache(None, &home, false),
            Some(PathBuf::from("/home/ada/.cache/forgeward/mirrors"))
        );
        assert_eq!(
            cache(
                None,
                &[("HOME", "/home/ada"), ("XDG_CACHE_HOME", "/var/cache/ada")],
                false
            ),
            Some(PathBuf::from("/var/cache/ada/forgeward/mirrors"))
        );
        // A relative XDG_CACHE_HOME is ignored, as the XDG spec says.
        assert_eq!(
            cache(
                None,
                &[("HOME", "/home/ada"), ("XDG_CACHE_HOME", "cache")],
                false
            ),
            Some(PathBuf::from("/home/ada/.cache/forgeward/mirrors"))
        );
        assert_eq!(
            cache(Some("/srv/forgeward"), &home, false),
            Some(PathBuf::from("/srv/forgeward/mirrors")),
            "a configured data directory's mirrors win"
        );
        assert_eq!(cache(None, &[], false), None, "no home: nothing kept");
        assert_eq!(
            cache(Some("/srv/forgeward"), &home, true),
            None,
            "--no-cache"
        );
    }
}
