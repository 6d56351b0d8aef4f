//! A check of one range of a repository: configuration, diff, detector, report.
//!
//! Entry points (`forgeward check`, the pre-push hook, later the bot's check of a pull request)
//! decide the range and where the configuration is read from; this module does the rest.

use git2::Oid;

use crate::config::{self, ConfigError, RepoConfig};
use crate::detect::paths::GlobError;
use crate::detect::{Detector, Report};
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

/// `.forgeward.toml` as it is at `at` (the default configuration where there is none).
pub fn repo_config(repo: &Repo, at: Head) -> Result<RepoConfig, CheckError> {
    let text = match at {
        Head::Commit(oid) => repo.read_at(oid, config::FILE_NAME)?,
        Head::Worktree => {
            let root = repo.workdir()?;
            WorkTree::read_file(root, &config::FILE_NAME.into())
        }
    };
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

/// Runs the detector over `base..head` with `config`.
pub fn check_range(
    repo: &Repo,
    base: Oid,
    head: Head,
    config: &RepoConfig,
) -> Result<Report, CheckError> {
    let detector = Detector::new(&config.check.options())?;
    Ok(analyze_range(repo, base, head, &detector)?)
}
