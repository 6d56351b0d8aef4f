//! `forgeward check`, on a range or as git's pre-push hook.

use std::io::{self, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use forgeward::check::{Author, Checked, check_change, check_range, repo_config};
use forgeward::config::Mode;
use forgeward::detect::{Report, timings};
use forgeward::git::{Head, Repo};
use forgeward::report::{self, Format, Range};
use git2::Oid;

use super::range::{self, RangeRequest};
use super::{CheckArgs, EXIT_FLAGGED};

fn color_for(stream_is_terminal: bool) -> bool {
    stream_is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn warn_all(report: &Report) {
    for w in &report.warnings {
        eprintln!("forgeward: warning: {w}");
    }
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    if !args.timings {
        return check(args);
    }
    let started = std::time::Instant::now();
    timings::enable();
    let code = check(args)?;
    print_timings(started.elapsed());
    Ok(code)
}

/// The process's CPU time so far, user and system, over every thread.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is handed.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let of = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    of(usage.ru_utime) + of(usage.ru_stime)
}

/// `--timings`: each rule and each shared reading, in milliseconds and as a share of the
/// process's CPU time (the threads' times add up, so the shares are of the same sum).
fn print_timings(wall: Duration) {
    let cpu = cpu_time();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let share = |d: Duration| {
        if cpu.is_zero() {
            0.0
        } else {
            100.0 * d.as_secs_f64() / cpu.as_secs_f64()
        }
    };
    let timings::Counted { rules, shared } = timings::counted();
    eprintln!(
        "forgeward: timings: {:.1} ms wall, {:.1} ms CPU",
        ms(wall),
        ms(cpu)
    );
    for (rule, d) in rules {
        eprintln!(
            "forgeward: timings:   rule {:<24} {:>8.1} ms {:>5.1} %",
            rule.id(),
            ms(d),
            share(d)
        );
    }
    for (reading, d) in shared {
        eprintln!(
            "forgeward: timings:   {:<29} {:>8.1} ms {:>5.1} %",
            reading.name(),
            ms(d),
            share(d)
        );
    }
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let repo = Repo::discover(&args.repo)?;
    if let Some(pre_push) = &args.pre_push {
        if let Some(range) = &args.range {
            anyhow::bail!(
                "--pre-push reads the ranges from git's input, so the range '{range}' cannot be given too"
            );
        }
        return run_pre_push(&repo, &args, pre_push);
    }
    let compared = range::resolve(
        &repo,
        &RangeRequest {
            range: args.range.as_deref(),
            base: args.base.as_deref(),
            head: args.head.as_deref(),
            worktree: args.worktree,
        },
    )?;
    let (base, head) = (compared.base, compared.head);
    // The base's configuration judges the range; only `--worktree` on a range from HEAD tries
    // out the working tree's (an edit of the configuration that is not committed yet).
    let (config, report) = if compared.is_empty() {
        (repo_config(&repo, Head::Commit(base))?, Report::default())
    } else if head == Head::Worktree && Some(base) == repo.head().ok() {
        let config = repo_config(&repo, head)?;
        let report = check_range(&repo, base, head, &config)?;
        (config, report)
    } else {
        let checked = check_change(&repo, base, head, Author::Person)?;
        (checked.config, checked.report)
    };
    let mode = args.mode.or(config.check.mode).unwrap_or(Mode::Block);
    warn_all(&report);
    let range = Range {
        base: base.to_string(),
        head: match head {
            Head::Commit(oid) => oid.to_string(),
            Head::Worktree => "WORKTREE".to_owned(),
        },
        spelled: compared.spelled.clone(),
        commits: compared.commits,
    };
    let stdout = io::stdout();
    let color = args.format == Format::Text && color_for(stdout.is_terminal());
    // One write for the report, not one per line (stdout is line-buffered).
    let mut out = io::BufWriter::new(stdout.lock());
    // The text report opens with the range; the other formats keep standard output theirs
    // and say it on standard error (and, in Actions, an empty range as a warning too).
    match args.format {
        Format::Text => writeln!(out, "{}", compared.line()).context("writing the report")?,
        format => {
            eprintln!("forgeward: {}", compared.line());
            if format == Format::Github && compared.is_empty() {
                report::write_github_warning(&mut out, &compared.line())
                    .context("writing the report")?;
            }
        }
    }
    if !(compared.is_empty() && args.format == Format::Text) {
        report::write(&mut out, args.format, &report, &range, color)
            .context("writing the report")?;
    }
    out.flush().context("writing the report")?;
    Ok(exit_code(&report, mode))
}

fn exit_code(report: &Report, mode: Mode) -> ExitCode {
    if report.fails() && mode == Mode::Block {
        ExitCode::from(EXIT_FLAGGED)
    } else {
        ExitCode::SUCCESS
    }
}

/// One line of git's pre-push input.
struct PushedRef {
    local_ref: String,
    local: Oid,
    remote: Oid,
}

fn parse_push_lines(input: &str) -> anyhow::Result<Vec<PushedRef>> {
    let mut refs = Vec::new();
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [local_ref, local, _remote_ref, remote] = fields[..] else {
            anyhow::bail!(
                "unexpected pre-push input line '{line}': expected '<local ref> <local sha> <remote ref> <remote sha>'"
            );
        };
        let oid =
            |s: &str| Oid::from_str(s).with_context(|| format!("bad sha '{s}' in pre-push input"));
        refs.push(PushedRef {
            local_ref: local_ref.to_owned(),
            local: oid(local)?,
            remote: oid(remote)?,
        });
    }
    Ok(refs)
}

/// The pre-commit framework runs pre-push hooks without git's input, naming the range in
/// its environment instead.
fn pre_commit_range() -> Option<(String, String, String)> {
    let from = std::env::var("PRE_COMMIT_FROM_REF").ok()?;
    let to = std::env::var("PRE_COMMIT_TO_REF").ok()?;
    let name = std::env::var("PRE_COMMIT_LOCAL_BRANCH").unwrap_or_else(|_| "HEAD".to_owned());
    Some((name, to, from))
}

fn run_pre_push(repo: &Repo, args: &CheckArgs, remote_args: &[String]) -> anyhow::Result<ExitCode> {
    let remote = remote_args
        .first()
        .cloned()
        .or_else(|| std::env::var("PRE_COMMIT_REMOTE_NAME").ok())
        .unwrap_or_else(|| "origin".to_owned());
    let mut input = String::new();
    if !io::stdin().is_terminal() {
        io::stdin()
            .read_to_string(&mut input)
            .context("reading the refs to push")?;
    }
    let mut refs = parse_push_lines(&input)?;
    if refs.is_empty()
        && let Some((name, to, from)) = pre_commit_range()
    {
        refs.push(PushedRef {
            local_ref: name,
            local: repo.resolve(&to)?,
            remote: repo.resolve(&from).unwrap_or(Oid::zero()),
        });
    }
    let mut total = Report::default();
    let mut mode = args.mode;
    // Flags at or above each range's `fail_on`: only these refuse a push.
    let mut failing = 0;
    for r in refs {
        if r.local.is_zero() {
            continue; // A deleted ref sends nothing.
        }
        // An annotated tag arrives as the tag object: what it sends is the commit it tags.
        let Some(local) = repo.peel_to_commit(r.local) else {
            continue; // A tag of a tree or a blob sends no commits to check.
        };
        let remote_commit = (!r.remote.is_zero())
            .then(|| repo.peel_to_commit(r.remote))
            .flatten();
        let base = match remote_commit {
            Some(remote_commit) => repo.merge_base(local, remote_commit)?,
            None => repo.base_for_new_branch(&remote, local)?,
        };
        let Some(base) = base else {
            eprintln!(
                "forgeward: {}: nothing on '{remote}' to compare it with, so it was not checked",
                r.local_ref
            );
            continue;
        };
        if base == local {
            continue; // Nothing new is sent.
        }
        let Checked { config, report } =
            check_change(repo, base, Head::Commit(local), Author::Person)?;
        mode = mode.or(config.check.mode);
        failing += report.failing();
        total.files += report.files;
        total.added_lines += report.added_lines;
        total.removed_lines += report.removed_lines;
        total.flags.extend(report.flags);
        total.allowed.extend(report.allowed);
        total.warnings.extend(report.warnings);
    }
    total.flags.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    total.flags.dedup();
    total.warnings.dedup();
    warn_all(&total);
    let mode = mode.unwrap_or(Mode::Block);
    let stderr = io::stderr();
    let color = color_for(stderr.is_terminal());
    let mut err = stderr.lock();
    if total.flags.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    report::write_text(&mut err, &total, color)?;
    if failing == 0 {
        writeln!(err, "forgeward: only notes: the push goes ahead")?;
        return Ok(ExitCode::SUCCESS);
    }
    if mode == Mode::Block {
        // The hint names a flag that refuses the push: the most severe one, first of its kind.
        let Some(first) = total.flags.iter().rev().max_by_key(|f| f.severity) else {
            return Ok(ExitCode::SUCCESS);
        };
        writeln!(
            err,
            "\nforgeward: push refused: the commits being pushed carry {} review flag{}. Three ways forward:\n  \
             1. fix it: make the code work rather than the test pass;\n  \
             2. allow it in .forgeward.toml, with a reason a reviewer can read, in a change of its\n     \
             own (the configuration in force is the base's, so it applies once that change is\n     \
             on the remote, and the change itself is flagged config-edit for a reviewer):\n       \
             [[check.allow]]\n       rule = \"{}\"\n       path = \"{}\"\n       reason = \"…\"\n  \
             3. push anyway, once: git push --no-verify",
            failing,
            if failing == 1 { "" } else { "s" },
            first.rule,
            first.path,
        )?;
        return Ok(ExitCode::from(EXIT_FLAGGED));
    }
    writeln!(err, "forgeward: warn mode: the push goes ahead")?;
    Ok(ExitCode::SUCCESS)
}
