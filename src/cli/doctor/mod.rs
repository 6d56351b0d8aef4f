//! `forgeward doctor [--config FILE]`: whether this machine, with this configuration, can run
//! the bot — found out now, instead of from a webhook that silently does nothing.
//!
//! The checks are a table ([`CHECKS`]), run in order: the configuration parses; each
//! configured forge has its secrets; the store is reachable and migrated; the sandbox starts a
//! worker that has no network; each forge's API accepts the bot's credentials; each forge's git
//! URL answers. Each prints its lines as soon as it is done, `✓` or `✗` (with the fix: what to
//! set, where), or `-` for something with nothing to check (a forge not configured, a check
//! that cannot run because an earlier one failed). Exit status: 0 when nothing failed, 1 when
//! something did (a configuration that does not parse included: it is a finding like any other,
//! reported as a line), 2 for a usage error.
//!
//! The doctor only reads: it creates no store, applies no migration, sends no write to a forge
//! and offers git no credentials. It never prints a secret: every line goes through a
//! [`Redactor`] holding every secret value it read, a forge's own error messages included.

mod api;
mod git;
mod sandbox;
mod secrets;
mod store;

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use forgeward::config::server::Settings;
use forgeward::forge::Forge;
use forgeward::forge::webhook::Secret;
use forgeward::sandbox::Redactor;

/// How long one network call may take: a forge, a git server or a database answers in well
/// under a second; ten seconds means it will not.
pub(super) const NETWORK_TIMEOUT: Duration = Duration::from_secs(10);

/// A check: a name, and what it does with what the checks before it learned.
struct Check {
    name: &'static str,
    run: for<'a> fn(&'a mut Context) -> Pending<'a>,
}

type Pending<'a> = Pin<Box<dyn Future<Output = Vec<Line>> + Send + 'a>>;

/// Every check, in the order they run and print. Later ones read what earlier ones left in the
/// [`Context`]: the API and git checks need the secrets, the Forgejo git probe the bot's login.
const CHECKS: &[Check] = &[
    Check {
        name: "configuration",
        run: secrets::configuration,
    },
    Check {
        name: "secrets",
        run: secrets::secrets,
    },
    Check {
        name: "store",
        run: store::check,
    },
    Check {
        name: "sandbox",
        run: sandbox::check,
    },
    Check {
        name: "forge API",
        run: api::check,
    },
    Check {
        name: "git",
        run: git::check,
    },
];

/// What a line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mark {
    Pass,
    Fail,
    /// Nothing to check, or not checked: said, and neither passed nor failed.
    Neutral,
}

/// One line of the report, and for a failure the fix.
#[derive(Clone, Debug)]
pub(super) struct Line {
    pub mark: Mark,
    /// What it is about: `store`, `GitHub API`.
    pub subject: String,
    pub text: String,
    /// What to set, where.
    pub fix: Option<String>,
}

impl Line {
    pub fn pass(subject: impl Into<String>, text: impl Into<String>) -> Line {
        Line {
            mark: Mark::Pass,
            subject: subject.into(),
            text: text.into(),
            fix: None,
        }
    }

    pub fn fail(
        subject: impl Into<String>,
        text: impl Into<String>,
        fix: impl Into<String>,
    ) -> Line {
        Line {
            mark: Mark::Fail,
            subject: subject.into(),
            text: text.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn neutral(subject: impl Into<String>, text: impl Into<String>) -> Line {
        Line {
            mark: Mark::Neutral,
            subject: subject.into(),
            text: text.into(),
            fix: None,
        }
    }
}

/// The credentials a forge's secrets check found complete.
#[derive(Clone)]
pub(super) enum Credentials {
    /// A GitHub App: its id and the key file that loaded (and signed) fine.
    GithubApp { id: u64, key: PathBuf },
    /// A token (GitHub's personal token, GitLab's or Forgejo's access token).
    Token(Secret),
}

/// What the secrets check found for one forge.
#[derive(Clone)]
pub(super) struct ForgeSetup {
    pub forge: Forge,
    /// The operator set something of it (a secret, a `*_file`, its section or a
    /// `FORGEWARD_<FORGE>_…` variable).
    pub configured: bool,
    /// Complete credentials, or None when they are missing or unreadable.
    pub credentials: Option<Credentials>,
}

/// What the checks learn, for the ones after them.
pub(super) struct Context {
    pub config: Option<PathBuf>,
    /// The settings, once they parse; None after the configuration check failed.
    pub settings: Option<Settings>,
    /// The `FORGEWARD_` variables the settings were read with.
    pub vars: BTreeMap<String, String>,
    /// One entry per forge, once the secrets check ran.
    pub forges: Vec<ForgeSetup>,
    /// The forge's login for the bot's token, once the API check learned it.
    pub logins: BTreeMap<Forge, String>,
    /// Every secret value read, so that no line shows one.
    pub secrets: Vec<String>,
}

impl Context {
    /// The settings, or the line saying why `subject` cannot be checked.
    pub fn settings_or_skip(&self, subject: &str) -> Result<&Settings, Vec<Line>> {
        self.settings.as_ref().ok_or_else(|| {
            vec![Line::neutral(
                subject,
                "not checked: the configuration does not parse",
            )]
        })
    }
}

/// A forge's name as people write it.
pub(super) fn forge_name(forge: Forge) -> &'static str {
    match forge {
        Forge::GitHub => "GitHub",
        Forge::GitLab => "GitLab",
        Forge::Forgejo => "Forgejo",
    }
}

/// A path as the operator should read it: absolute, so a relative default (`forgeward-data`)
/// shows which directory it is relative to.
pub(super) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

pub fn run(config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut cx = Context {
        config: config.map(Path::to_owned),
        settings: None,
        vars: BTreeMap::new(),
        forges: Vec::new(),
        logins: BTreeMap::new(),
        secrets: Vec::new(),
    };
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut out = std::io::stdout().lock();
    let (mut passed, mut failed) = (0usize, 0usize);
    runtime.block_on(async {
        for check in CHECKS {
            let lines = (check.run)(&mut cx).await;
            debug_assert!(!lines.is_empty(), "the {} check said nothing", check.name);
            // Redacted with every secret read so far: the secrets check reads them, and
            // nothing before it has any to show.
            let redactor = Redactor::new(&cx.secrets);
            for line in &lines {
                match line.mark {
                    Mark::Pass => passed += 1,
                    Mark::Fail => failed += 1,
                    Mark::Neutral => {}
                }
                write_line(&mut out, line, &redactor, color)?;
            }
            out.flush()?;
        }
        anyhow::Ok(())
    })?;
    let summary = if failed == 0 {
        format!("all {passed} checks passed")
    } else {
        format!(
            "{failed} failed, {passed} passed: fix the ✗ lines, then run `forgeward doctor` again"
        )
    };
    writeln!(out, "\n{summary}")?;
    Ok(ExitCode::from(if failed == 0 {
        0
    } else {
        super::EXIT_FLAGGED
    }))
}

fn write_line(
    out: &mut dyn Write,
    line: &Line,
    redactor: &Redactor,
    color: bool,
) -> std::io::Result<()> {
    let (mark, paint) = match line.mark {
        Mark::Pass => ("✓", "\x1b[32m"),
        Mark::Fail => ("✗", "\x1b[31m"),
        Mark::Neutral => ("-", "\x1b[2m"),
    };
    let (on, off) = if color { (paint, "\x1b[0m") } else { ("", "") };
    let text = redactor.redact(&one_line(&format!("{}: {}", line.subject, line.text)));
    writeln!(out, "{on}{mark}{off} {text}")?;
    if let Some(fix) = &line.fix {
        writeln!(out, "    fix: {}", redactor.redact(&one_line(fix)))?;
    }
    Ok(())
}

/// Text from anywhere (a forge's message, libgit2's) on one line.
pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
