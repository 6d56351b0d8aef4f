//! `forgeward verify`: the bot's verification on a local repository — the repository's own
//! tests, in the sandbox, on the base, on a change, and on the change with the base's tests put
//! back — for a maintainer checking a branch an agent pushed.
//!
//! Nothing is written to the repository: the commits verification needs (the one with the
//! base's tests, and with `--worktree` the working tree's) live in memory only (libgit2 may
//! refresh the modification time of an object file it finds already there, as it does before
//! any write), and the files the suites run over are a replica in a private temporary
//! directory.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use forgeward::check::{check_range, repo_config};
use forgeward::config::server::{Backend, Settings};
use forgeward::detect::Report;
use forgeward::git::{Head, Replica, Repo};
use forgeward::jobs::verify::{NO_RUNNER, Planned, Verification, flags, plan, run_plan};
use forgeward::report;
use forgeward::sandbox::{JobLog, Redactor, SandboxSpec};
use forgeward::verify::suite::Place;
use git2::Oid;
use tokio_util::sync::CancellationToken;

use super::{EXIT_ERROR, EXIT_FLAGGED};

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The repository (any directory inside it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    repo: PathBuf,
    /// The revision whose tests are the reference [default: merge-base of HEAD with its
    /// upstream, else with the default branch].
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// The change to verify [default: HEAD].
    #[arg(long, value_name = "REV", conflicts_with = "worktree")]
    head: Option<String>,
    /// Verify the working tree: uncommitted and untracked (not ignored) files too.
    #[arg(long)]
    worktree: bool,
    /// Where the tests run [default: sandbox.backend].
    #[arg(long, value_name = "BACKEND", value_parser = super::parse::<Backend>)]
    sandbox: Option<Backend>,
    /// The bot's configuration, for the sandbox's settings and `[verify] timeout`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let (mut settings, secrets) = Settings::load(args.config.as_deref(), std::env::vars())?;
    if let Some(backend) = args.sandbox {
        settings.sandbox.backend = backend;
    }
    let repo = Repo::discover(&args.repo)?;
    // Whatever verification writes to the object database stays in this process.
    repo.git2()
        .odb()
        .and_then(|odb| odb.add_new_mempack_backend(1000).map(drop))
        .context("opening the repository's objects")?;
    let compared = super::range::resolve(
        &repo,
        &super::range::RangeRequest {
            range: None,
            base: args.base.as_deref(),
            head: args.head.as_deref(),
            worktree: args.worktree,
        },
    )?;
    let (head, base) = (compared.head_commit, compared.base);
    // The working tree becomes a commit of its own (in memory), on top of HEAD.
    let head = if args.worktree {
        worktree_commit(&repo)?
    } else {
        head
    };
    let stats = diff_stats(&repo, base, head)?;
    super::run::clear_leftover_mounts();
    let scratch = tempfile::Builder::new()
        .prefix(&forgeward::jobs::leftovers::verify_scratch_prefix())
        .tempdir()
        .context("creating a temporary directory")?;
    let config = forgeward::jobs::setup::local_pipeline_config(
        &settings,
        &secrets,
        scratch.path().to_path_buf(),
    )?;
    let mut repo_config = repo_config(&repo, Head::Commit(base))?;
    let environment_plan = forgeward::environment::plan::Plan::read(
        &forgeward::git::CommitTree::new(repo.git2(), base),
        &repo_config,
    );
    // The detector's own reading of the change says where and how a test was rewritten.
    let detector = check_range(&repo, base, Head::Commit(head), &repo_config)?;
    // Asked for by name: it runs whatever `[verify] enabled` says.
    repo_config.verify.enabled = Some(true);
    let plan = match plan(&repo, &repo_config, &config.verify, base, head)
        .map_err(|e| anyhow::anyhow!(e.message))?
    {
        Planned::Run(plan) => plan,
        // Off cannot be: `enabled` was set above.
        Planned::Off | Planned::NoRunner => anyhow::bail!("{NO_RUNNER}"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let ran = runtime.block_on(async {
        let owner = format!("forgeward-verify-{}", std::process::id());
        let sandbox = forgeward::jobs::setup::sandbox(&settings.sandbox, &owner).await?;
        // The base's files first: the Docker backend picks its image from them.
        let mut files = Replica::create(&scratch.path().join("workspace"))?;
        files.switch(repo.git2(), base)?;
        let cancel = CancellationToken::new();
        let on_interrupt = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_interrupt.cancel();
            }
        });
        let mut template = SandboxSpec {
            workspace: files.path().to_path_buf(),
            job_dir: scratch.path().join("job"),
            out_dir: scratch.path().join("out"),
            command: Vec::new(),
            image: config.worker.image.clone(),
            env: Vec::new(),
            limits: config.limits.clone(),
            network: forgeward::sandbox::Network::None,
            read_only: Vec::new(),
            path: Vec::new(),
        };
        let kept = kept_environments(&settings, scratch.path());
        let environment = prepare_environment(
            sandbox.as_ref(),
            &config,
            kept,
            &environment_plan,
            files.path(),
            cancel.clone(),
        )
        .await?;
        if !environment.is_nothing() {
            eprintln!(
                "environment: {}",
                super::progress::printable(&environment.describe())
            );
        }
        environment.apply(&mut template);
        sandbox.prepare(&mut template).await?;
        let log = std::sync::Arc::new(JobLog::new(Redactor::new(&config.secrets)));
        let place = Place {
            sandbox: sandbox.as_ref(),
            template: &template,
            log: Some(log.as_ref()),
        };
        let ticker = super::progress::Ticker::start("verifying", log.clone());
        let ran = run_plan(
            repo,
            &plan,
            files,
            &scratch.path().join("runs"),
            &place,
            &environment,
            None,
            cancel.clone(),
        )
        .await
        .map_err(|e| anyhow::anyhow!(e.message));
        ticker.stop().await;
        let ran = ran?;
        if cancel.is_cancelled() {
            anyhow::bail!("interrupted");
        }
        anyhow::Ok(ran)
    })?;
    let judged = ran.judged();
    let (files, added_lines, removed_lines) = stats;
    let report = Report {
        flags: flags(&ran.findings, &detector.flags, &plan.edits),
        files,
        added_lines,
        removed_lines,
        ..Report::default()
    };
    let verification = Verification::Ran(Box::new(ran));
    let mut out = std::io::stdout().lock();
    super::run::write_verification(&mut out, Some(&verification))?;
    if !report.flags.is_empty() {
        report::write_text(&mut out, &report, false)?;
    }
    if let Some(why) = verification.unjudged() {
        writeln!(
            out,
            "the tests could not be judged: {}",
            super::progress::printable(&why)
        )?;
    } else if report.flags.is_empty() {
        writeln!(
            out,
            "no test changed its outcome because of the change's tests"
        )?;
    }
    out.flush()?;
    Ok(if !judged {
        ExitCode::from(EXIT_ERROR)
    } else if report.fails() {
        ExitCode::from(EXIT_FLAGGED)
    } else {
        ExitCode::SUCCESS
    })
}

/// Files changed, lines added and lines removed from `base` to `head`, for the report's summary.
fn diff_stats(repo: &Repo, base: Oid, head: Oid) -> anyhow::Result<(usize, u64, u64)> {
    let git = repo.git2();
    let tree = |oid: Oid| git.find_commit(oid).and_then(|c| c.tree());
    let stats = git
        .diff_tree_to_tree(Some(&tree(base)?), Some(&tree(head)?), None)
        .and_then(|d| d.stats())
        .context("comparing the base and the change")?;
    Ok((
        stats.files_changed(),
        stats.insertions() as u64,
        stats.deletions() as u64,
    ))
}

/// The working tree as a commit on top of `HEAD` (in memory): tracked files as they are now,
/// untracked files that are not ignored, deleted files gone. The index on disk is not touched.
fn worktree_commit(repo: &Repo) -> anyhow::Result<Oid> {
    let git = repo.git2();
    let mut index = git.index().context("reading the index")?;
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .and_then(|()| index.update_all(["*"], None))
        .context("reading the working tree")?;
    let tree = index
        .write_tree()
        .and_then(|id| git.find_tree(id))
        .context("reading the working tree")?;
    let parent = git
        .find_commit(repo.head()?)
        .context("reading HEAD's commit")?;
    let signature = git2::Signature::now("forgeward", "forgeward@localhost")
        .context("a signature for the working tree's commit")?;
    git.commit(
        None,
        &signature,
        &signature,
        "the working tree",
        &tree,
        &[&parent],
    )
    .context("the working tree's commit")
}

/// Where local runs keep environments: in the cache beside the mirrors, else (no cache) in
/// `scratch`, gone with it.
pub(super) fn kept_environments(settings: &Settings, scratch: &std::path::Path) -> PathBuf {
    super::run::mirror_cache(settings, false, |name| std::env::var_os(name)).map_or_else(
        || scratch.join("environments"),
        |mirrors| super::run::environments_beside(&mirrors),
    )
}

/// Prepares `plan`'s environment over the base's files at `workspace`, the phase's progress on
/// the terminal; a failure is the setup's reason, its last lines on stderr first.
pub(super) async fn prepare_environment(
    sandbox: &dyn forgeward::sandbox::Sandbox,
    config: &forgeward::jobs::config::PipelineConfig,
    kept: std::path::PathBuf,
    plan: &forgeward::environment::plan::Plan,
    workspace: &std::path::Path,
    cancel: CancellationToken,
) -> anyhow::Result<forgeward::jobs::environment::Environment> {
    use forgeward::jobs::environment::{Preparing, prepare};
    let log = std::sync::Arc::new(JobLog::new(Redactor::new(&config.secrets)));
    let at = Preparing {
        sandbox,
        policy: &config.environment,
        limits: &config.limits,
        image: config.worker.image.clone(),
        store: forgeward::environment::kept::Store::at(kept),
        job: None,
        log: log.clone(),
        cancel,
    };
    let ticker = super::progress::Ticker::start("preparing environment", log);
    let prepared = prepare(&at, plan, workspace).await;
    ticker.stop().await;
    match prepared {
        Ok(environment) => Ok(environment),
        Err(failed) => {
            for line in &failed.tail {
                eprintln!("  > {}", super::progress::printable(line));
            }
            let failed = forgeward::jobs::error::JobError::from(failed);
            anyhow::bail!("{}", failed.message)
        }
    }
}
