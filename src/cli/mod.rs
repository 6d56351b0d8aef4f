//! Command-line parsing (clap) and dispatch. Exit codes: 0 clean, 1 flags in block mode (for
//! `verify`: flags; for `doctor`: a check failed), 2 usage or IO error with a one-line reason
//! (for `verify`: also a run that could not be judged), 3 (`forgeward run`) the worker asked a
//! question.

mod check;
mod doctor;
mod env;
mod hook;
mod link;
mod progress;
mod range;
mod run;
mod serve;
mod setup;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use forgeward::config::Mode;
use forgeward::git;
use forgeward::report::Format;

pub const EXIT_FLAGGED: u8 = 1;
pub const EXIT_ERROR: u8 = 2;
/// `forgeward run`: the worker stopped to ask a question instead of making the change.
pub const EXIT_QUESTION: u8 = 3;

#[derive(Parser)]
#[command(
    name = "forgeward",
    version,
    about = "Flags changes that make the tests pass instead of making the code work."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a range of commits (by default: what HEAD adds to its upstream) for the signs of
    /// tests made to pass: tests skipped, weakened, deleted or focused, expectations edited,
    /// stubbed imports, shadowing modules, hard-coded answers, forced exits and more.
    Check(CheckArgs),
    /// Install or remove the pre-push hook.
    Hook {
        #[command(subcommand)]
        action: HookAction,
    },
    /// Run the bot: receive GitHub, GitLab and Forgejo (or Gitea) webhooks, queue their jobs
    /// durably, and run them.
    Serve {
        /// The bot's configuration [default: none; every setting has a default and an
        /// environment variable FORGEWARD_<SECTION>_<KEY>].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Only receive and queue: jobs are run by `forgeward worker` processes elsewhere.
        #[arg(long)]
        no_worker: bool,
    },
    /// Check that this machine, with this configuration, can run the bot: the configuration,
    /// each forge's secrets, the store, the sandbox, each forge's API and git. Exits 0 when
    /// every check passes, 1 when one fails.
    Doctor {
        /// The configuration `serve` is given [default: none: the defaults and the
        /// FORGEWARD_<SECTION>_<KEY> variables].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Run jobs only (no HTTP), for machines that share the bot's PostgreSQL store.
    Worker {
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Run one job locally, with no forge: the worker in a sandbox on a repository, then the
    /// report the bot would post and the branch it left.
    Run(run::RunArgs),
    /// Run the repository's own tests in the sandbox on the base, on a change, and on the
    /// change with the base's tests put back: flags a test that passes only with the change's
    /// own tests, and tests the change lost.
    Verify(verify::VerifyArgs),
    /// Prepare the environment a repository's tests get (the setup its files call for, its
    /// declared toolchains), as `verify` and `run` would, and show it: no worker, no tests.
    Env(env::EnvArgs),
    /// Print a signed link to the job list (`link jobs`) or to a job's page (`link job N`).
    Link(link::LinkArgs),
    /// Set the bot up on a forge: `setup github` makes its GitHub App from a manifest, and
    /// writes the App's id, private key and webhook secret.
    Setup {
        #[command(subcommand)]
        forge: SetupForge,
    },
}

#[derive(Subcommand)]
enum SetupForge {
    /// Serve a page (on loopback) whose form has GitHub make the bot's App with the
    /// permissions and events it needs, then write the App's files and print the lines for
    /// forgeward.toml. Exits once the App is made.
    Github(setup::GithubArgs),
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The range to check, as git writes it: `main..HEAD` (main's tree to HEAD's), or
    /// `origin/main...HEAD` (from where HEAD forked from origin/main) [default: what HEAD adds
    /// to its upstream, else to the default branch].
    #[arg(value_name = "RANGE")]
    range: Option<String>,
    /// The repository (any directory inside it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    repo: PathBuf,
    /// The revision to compare against [default: merge-base of HEAD with its upstream, else
    /// with the default branch].
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// The revision to check [default: HEAD].
    #[arg(long, value_name = "REV", conflicts_with = "worktree")]
    head: Option<String>,
    /// Check the working tree: uncommitted and untracked (not ignored) files too.
    #[arg(long)]
    worktree: bool,
    /// `text`, `json`, `sarif` (code scanning), `github` (workflow commands that annotate the
    /// diff in Actions) or `codequality` (GitLab's Code Quality report).
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = parse::<Format>)]
    format: Format,
    /// `block` exits 1 when anything is flagged; `warn` reports and exits 0 [default: the
    /// repository's `.forgeward.toml`, else block].
    #[arg(long, value_name = "MODE", value_parser = parse::<Mode>)]
    mode: Option<Mode>,
    /// Run as git's pre-push hook: read `<local ref> <local sha> <remote ref> <remote sha>`
    /// lines on standard input and check what each ref would send.
    #[arg(long, num_args = 0..=2, value_names = ["REMOTE", "URL"], conflicts_with_all = ["base", "head", "worktree"])]
    pre_push: Option<Vec<String>>,
    /// Print on standard error where the check's time went: each rule, and each reading the
    /// rules share, in CPU time summed over every thread, beside the process's CPU time.
    #[arg(long)]
    timings: bool,
}

#[derive(Subcommand)]
enum HookAction {
    /// Write the pre-push hook where git runs it (respects core.hooksPath and linked
    /// worktrees); a hook already there is kept and run first.
    Install {
        #[arg(long, value_name = "DIR", default_value = ".")]
        repo: PathBuf,
        /// Written into the hook [default: none: the repository's `.forgeward.toml` decides
        /// at each push, else block].
        #[arg(long, value_name = "MODE", value_parser = parse::<Mode>)]
        mode: Option<Mode>,
        /// Set a hook already there aside instead of running it before ours.
        #[arg(long)]
        force: bool,
    },
    /// Remove the pre-push hook and put back the one it replaced.
    Uninstall {
        #[arg(long, value_name = "DIR", default_value = ".")]
        repo: PathBuf,
    },
}

fn parse<T: std::str::FromStr<Err = String>>(s: &str) -> Result<T, String> {
    s.parse()
}

pub fn run() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    // SAFETY: the process has one thread yet: the bot's runtime starts in the command.
    unsafe { git::init() };
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Serve { config, no_worker } => serve::serve(config.as_deref(), !no_worker),
        Command::Worker { config } => serve::worker(config.as_deref()),
        Command::Doctor { config } => doctor::run(config.as_deref()),
        Command::Run(args) => run::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Env(args) => env::run(args),
        Command::Setup {
            forge: SetupForge::Github(args),
        } => setup::github(args),
        Command::Link(args) => link::run(args),
        Command::Hook { action } => match action {
            HookAction::Install { repo, mode, force } => hook::install(&repo, mode, force),
            HookAction::Uninstall { repo } => hook::uninstall(&repo),
        },
    }
}
