//! `forgeward env`: the environment a repository's tests get — the setup its base calls for
//! and why, what was passed over, the toolchains it declares — prepared in the sandbox and kept
//! where `verify` and `run` keep theirs, with no worker and no test run. `--plan` only shows
//! it.

use std::path::PathBuf;
use std::process::ExitCode;

use forgeward::check::repo_config;
use forgeward::config::server::{Backend, Settings};
use forgeward::environment::plan::Plan;
use forgeward::git::{CommitTree, Head, Replica, Repo};
use tokio_util::sync::CancellationToken;

use super::progress::printable;

#[derive(clap::Args)]
pub struct EnvArgs {
    /// The repository (any directory inside it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    repo: PathBuf,
    /// The revision whose files decide the environment [default: HEAD].
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// Show what would be prepared, and prepare nothing.
    #[arg(long)]
    plan: bool,
    /// Where the setup runs [default: sandbox.backend].
    #[arg(long, value_name = "BACKEND", value_parser = super::parse::<Backend>)]
    sandbox: Option<Backend>,
    /// The bot's configuration: `[environment]` (what the setup may reach, its variables) and
    /// the sandbox's settings.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub fn run(args: EnvArgs) -> anyhow::Result<ExitCode> {
    let (mut settings, secrets) = Settings::load(args.config.as_deref(), std::env::vars())?;
    if let Some(backend) = args.sandbox {
        settings.sandbox.backend = backend;
    }
    let repo = Repo::discover(&args.repo)?;
    let rev = args.base.as_deref().unwrap_or("HEAD");
    let base = repo.resolve(rev)?;
    let plan = Plan::read(
        &CommitTree::new(repo.git2(), base),
        &repo_config(&repo, Head::Commit(base))?,
    );
    let short = base.to_string().chars().take(12).collect::<String>();
    write_plan(&mut std::io::stdout().lock(), rev, &short, &plan)?;
    if args.plan {
        return Ok(ExitCode::SUCCESS);
    }
    if !settings.environment.enabled {
        println!("environment: not prepared: [environment] enabled = false");
        return Ok(ExitCode::SUCCESS);
    }
    let scratch = tempfile::Builder::new()
        .prefix("forgeward-env-")
        .tempdir()
        .map_err(|e| anyhow::anyhow!("creating a temporary directory: {e}"))?;
    let config = forgeward::jobs::setup::local_pipeline_config(
        &settings,
        &secrets,
        scratch.path().to_path_buf(),
    )?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("starting the async runtime: {e}"))?;
    let environment = runtime.block_on(async {
        let owner = format!("forgeward-env-{}", std::process::id());
        let sandbox = forgeward::jobs::setup::sandbox(&settings.sandbox, &owner).await?;
        let mut files = Replica::create(&scratch.path().join("workspace"))?;
        files.switch(repo.git2(), base)?;
        let cancel = CancellationToken::new();
        let on_interrupt = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_interrupt.cancel();
            }
        });
        let kept = super::verify::kept_environments(&settings, scratch.path());
        super::verify::prepare_environment(
            sandbox.as_ref(),
            &config,
            kept,
            &plan,
            files.path(),
            cancel,
        )
        .await
    })?;
    println!("environment: {}", printable(&environment.describe()));
    if let Some(kept) = &environment.kept {
        println!("kept in {}", kept.dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The plan, for people: where it comes from, each step and why, what was passed over, the
/// toolchains, and the files that decide it.
fn write_plan(
    out: &mut dyn std::io::Write,
    rev: &str,
    short: &str,
    plan: &Plan,
) -> std::io::Result<()> {
    let from = if plan.configured {
        format!("{} [environment] setup", forgeward::config::FILE_NAME)
    } else {
        "the base's files".to_owned()
    };
    writeln!(
        out,
        "environment at {} ({short}), from {from}:",
        printable(rev)
    )?;
    if plan.steps.is_empty() {
        writeln!(out, "  setup: none (nothing to install)")?;
    } else {
        writeln!(out, "  setup:")?;
        for (i, step) in plan.steps.iter().enumerate() {
            let place = match step.dir.as_str() {
                "" => step.ecosystem.as_str().to_owned(),
                dir => format!("{} in {dir}", step.ecosystem.as_str()),
            };
            writeln!(
                out,
                "    {}. {place}: {} ({})",
                i + 1,
                printable(&step.command),
                printable(&step.why)
            )?;
        }
    }
    for note in &plan.notes {
        writeln!(out, "  passed over: {}", printable(note))?;
    }
    if plan.wanted.is_empty() {
        writeln!(out, "  toolchains: none declared")?;
    } else {
        let wanted: Vec<String> = plan
            .wanted
            .iter()
            .map(|w| format!("{} {} ({})", w.tool.as_str(), w.requirement, w.source))
            .collect();
        writeln!(out, "  toolchains: {}", printable(&wanted.join(", ")))?;
    }
    let inputs = plan.input_names();
    if !inputs.is_empty() {
        writeln!(out, "  decided by: {}", printable(&inputs.join(", ")))?;
    }
    Ok(())
}
