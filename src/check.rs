//! A check of one range of a repository: configuration, diff, detector, report.
//!
//! Entry points (`forgeward check`, the pre-push hook, the bot's checks of a worker's change
//! and of a pull request) decide the range; this module does the rest, and reads the
//! configuration from the range's *base*, never from the change: a change cannot switch its
//! own check off. A change that edits `.forgeward.toml` gets `config-edit`, saying what it
//! would relax once it is the base's.

use git2::Oid;

use crate::config::edit::ConfigEdit;
use crate::config::{self, ConfigError, RepoConfig};
use crate::detect::paths::GlobError;
use crate::detect::{Detector, Flag, Options, Report, Rule, Severity};
use crate::git::{GitError, Head, Repo, WorkTree, analyze_range};

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Glob(#[from] GlobError),
}

/// Who made the change judged: a person's change keeps the severities the repository
/// configured; an agent's (a worker's, or an agent-authored pull request) gets every rule that
/// judges the tests at least as a warning, and fails on warnings, whatever the configuration
/// says — a repository may raise severities for agents, never lower them below that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Author {
    Person,
    Agent,
}

/// The raw `.forgeward.toml` as it is at `at`, if there is one.
fn config_text(repo: &Repo, at: Head) -> Result<Option<Vec<u8>>, CheckError> {
    Ok(match at {
        Head::Commit(oid) => repo.read_at(oid, config::FILE_NAME)?,
        Head::Worktree => {
            let root = repo.workdir()?;
            WorkTree::read_file(root, &config::FILE_NAME.into())
        }
    })
}

/// `.forgeward.toml` as it is at `at` (the default configuration where there is none).
pub fn repo_config(repo: &Repo, at: Head) -> Result<RepoConfig, CheckError> {
    parse(config_text(repo, at)?)
}

fn parse(text: Option<Vec<u8>>) -> Result<RepoConfig, CheckError> {
    let Some(text) = text else {
        return Ok(RepoConfig::default());
    };
    let text = String::from_utf8(text).map_err(|_| ConfigError {
        file: config::FILE_NAME.to_owned(),
        line: 1,
        column: 1,
        message: "not valid UTF-8".to_owned(),
    })?;
    Ok(RepoConfig::parse(config::FILE_NAME, &text)?)
}

/// What the detector is told for a change by `author`, from the base's `config`.
pub fn options(config: &RepoConfig, author: Author) -> Options {
    let mut options = config.check.options();
    if author == Author::Agent {
        options.floor(Rule::judges_tests, Severity::Warning);
    }
    options
}

/// Runs the detector over `base..head` with `config` as it is: for a configuration that is
/// not the base's (trying out an edit of it in the working tree); no `config-edit`.
pub fn check_range(
    repo: &Repo,
    base: Oid,
    head: Head,
    config: &RepoConfig,
) -> Result<Report, CheckError> {
    let detector = Detector::new(&config.check.options())?;
    Ok(analyze_range(repo, base, head, &detector)?)
}

/// A change, checked: the configuration in force (the base's) and the detector's report, with
/// `config-edit` first when the change edits that configuration.
pub struct Checked {
    pub config: RepoConfig,
    pub report: Report,
}

/// Checks `base..head`, a change by `author`, with the base's configuration.
pub fn check_change(
    repo: &Repo,
    base: Oid,
    head: Head,
    author: Author,
) -> Result<Checked, CheckError> {
    let before = config_text(repo, Head::Commit(base))?;
    let config = parse(before.clone())?;
    let options = options(&config, author);
    let detector = Detector::new(&options)?;
    let mut report = analyze_range(repo, base, head, &detector)?;
    let after = config_text(repo, head)?;
    if after != before
        && let Some(configured) = options.severity(Rule::ConfigEdit)
    {
        let next = parse(after);
        let edit = ConfigEdit::between(&config, next.as_ref().map_err(|e| e.to_string()));
        let mut severity = edit.severity(configured);
        if author == Author::Agent {
            severity = severity.max(Severity::Warning);
        }
        report.flags.insert(
            0,
            Flag {
                rule: Rule::ConfigEdit,
                severity,
                path: config::FILE_NAME.into(),
                line: None,
                removed_line: None,
                message: edit.message(config::FILE_NAME),
                snippet: None,
            },
        );
    }
    Ok(Checked { config, report })
}
