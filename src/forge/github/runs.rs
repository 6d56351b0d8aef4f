//! What a GitHub client keeps of its check runs: the conclusion a flagged commit's run takes,
//! and the runs it began and has not completed.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde::Deserialize;

use crate::forge::{CommitSha, RepoName};

/// Runs begun and not yet completed that one client remembers. Far more than the jobs a
/// process runs at once; past it, the oldest are forgotten (and found again by listing).
const REMEMBERED_RUNS: usize = 1024;

/// What an App's check run concludes when the bot flags a commit (`[github] flagged_conclusion`).
///
/// `failure` is the default: it is what the commit status says without an App, on GitLab and on
/// Forgejo, so branch protection that requires `forgeward` behaves the same however the bot
/// authenticates. `action_required` says the same more softly in GitHub's interface ("Action
/// required" rather than a red cross, with the details link to the pull request) and blocks a
/// required check just the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlaggedConclusion {
    #[default]
    Failure,
    ActionRequired,
}

impl FlaggedConclusion {
    pub fn as_str(self) -> &'static str {
        match self {
            FlaggedConclusion::Failure => "failure",
            FlaggedConclusion::ActionRequired => "action_required",
        }
    }
}

/// The check runs one client began and has not completed, by repository and commit.
#[derive(Default)]
pub(super) struct OpenRuns {
    runs: Mutex<HashMap<(String, String), (u64, u64)>>,
    /// Counts what was remembered, to forget the oldest first.
    seq: Mutex<u64>,
}

impl OpenRuns {
    pub(super) fn remember(&self, repo: &RepoName, sha: &CommitSha, id: u64) {
        let seq = {
            let mut seq = self.seq.lock().unwrap_or_else(PoisonError::into_inner);
            *seq += 1;
            *seq
        };
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        if runs.len() >= REMEMBERED_RUNS
            && let Some(oldest) = runs
                .iter()
                .min_by_key(|(_, (_, s))| *s)
                .map(|(k, _)| k.clone())
        {
            runs.remove(&oldest);
        }
        runs.insert((repo.0.clone(), sha.0.clone()), (id, seq));
    }

    pub(super) fn take(&self, repo: &RepoName, sha: &CommitSha) -> Option<u64> {
        self.runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(repo.0.clone(), sha.0.clone()))
            .map(|(id, _)| id)
    }
}
