//! The `forgeward` check run of a commit, for a GitHub App: begun `in_progress`, then completed
//! with the check's title and summary, its conclusion, and an annotation for every flag, as
//! GitHub's Checks API describes them (`POST /repos/{owner}/{repo}/check-runs`, `PATCH
//! /repos/{owner}/{repo}/check-runs/{check_run_id}`).
//!
//! One run per head commit: the run a check began is the one it completes. The client remembers
//! the runs it began until it completes them; a check begun by another process, or before a
//! restart, is found among the App's runs on the commit that are still in progress. A run
//! already completed is left as it is and a new check makes a new run, which GitHub shows in its
//! place: annotations can only ever be added to a run, so a completed run is never taken up
//! again.
//!
//! The API takes at most 50 annotations a request: the run is completed with the first 50, and
//! the rest follow in further updates of the same run, which GitHub appends. A check that fails
//! between those updates leaves a completed run with its conclusion and part of its
//! annotations; the job's next try makes a new, whole run.

use http::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::client::{Client, cut_chars, failure};
use super::http::{encode, repo_path};
use crate::forge::api::{
    CheckConclusion, CheckFlag, CheckResult, CheckStart, FlagLevel, ForgeResult, STATUS_CONTEXT,
};
use crate::forge::http::decode;
use crate::forge::{CommitSha, RepoName};
use crate::text::one_line;

/// The Checks API takes at most this many annotations in one request; more go in further
/// updates of the same run.
pub const MAX_ANNOTATIONS: usize = 50;

/// A check run's summary: GitHub refuses a longer one (characters).
pub const MAX_SUMMARY_CHARS: usize = 65_535;

/// An annotation's message and raw details: GitHub keeps at most 64 KB of each.
const MAX_ANNOTATION_BYTES: usize = 64 * 1024;

/// An annotation's title: at most 255 characters.
const MAX_ANNOTATION_TITLE_CHARS: usize = 255;

/// A check run's title: GitHub documents no limit, and a title is one line a person reads at a
/// glance; this keeps a pathological one from being refused.
const MAX_TITLE_CHARS: usize = 1024;

/// The summary of a run in progress.
pub(super) const IN_PROGRESS_SUMMARY: &str = "forgeward is checking this commit for signs that the change \
makes the tests pass without making the code work. This check completes with the result.";

#[derive(Deserialize)]
struct CheckRunJson {
    id: u64,
}

#[derive(Deserialize)]
struct CheckRunsJson {
    check_runs: Vec<CheckRunJson>,
}

impl Client {
    /// Begins the check of `sha`: the App's unfinished run on it, set in progress again, or a
    /// new run in progress.
    pub(super) async fn start_check_run(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        check: &CheckStart,
    ) -> ForgeResult<()> {
        let title = title(&check.title);
        let output = json!({ "title": title, "summary": IN_PROGRESS_SUMMARY });
        let id = match self.open_run(repo, sha).await? {
            Some(id) => {
                let mut body = json!({ "status": "in_progress", "output": output });
                details(&mut body, check.details_url.as_deref());
                self.update_run(repo, id, body).await?;
                id
            }
            None => {
                let mut body = json!({
                    "name": STATUS_CONTEXT,
                    "head_sha": sha.0,
                    "status": "in_progress",
                    "output": output,
                });
                details(&mut body, check.details_url.as_deref());
                self.create_run(repo, body).await?
            }
        };
        self.open_runs.remember(repo, sha, id);
        Ok(())
    }

    /// Completes the check of `sha`: the run its start began (or a new one, when none is
    /// open), with the conclusion, title, summary and the first annotations, then the rest of
    /// the annotations [`MAX_ANNOTATIONS`] at a time.
    pub(super) async fn finish_check_run(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        result: &CheckResult,
    ) -> ForgeResult<()> {
        let title = title(&result.title);
        let summary = cut_chars(&result.summary, MAX_SUMMARY_CHARS);
        let annotations: Vec<Value> = result.flags.iter().map(annotation).collect();
        let mut batches = annotations.chunks(MAX_ANNOTATIONS);
        let output = |batch: Option<&[Value]>| {
            let mut output = json!({ "title": title, "summary": summary });
            if let Some(batch) = batch {
                output["annotations"] = json!(batch);
            }
            output
        };
        let first = output(batches.next());
        let conclusion = self.conclusion(result.conclusion);
        let id = match self.open_run(repo, sha).await? {
            Some(id) => {
                let mut body = json!({
                    "status": "completed",
                    "conclusion": conclusion,
                    "output": first,
                });
                details(&mut body, result.details_url.as_deref());
                self.update_run(repo, id, body).await?;
                id
            }
            None => {
                let mut body = json!({
                    "name": STATUS_CONTEXT,
                    "head_sha": sha.0,
                    "status": "completed",
                    "conclusion": conclusion,
                    "output": first,
                });
                details(&mut body, result.details_url.as_deref());
                self.create_run(repo, body).await?
            }
        };
        for batch in batches {
            self.update_run(repo, id, json!({ "output": output(Some(batch)) }))
                .await?;
        }
        Ok(())
    }

    /// A flagged check concludes as configured; an error is a `failure`, since a check run
    /// has no `error` and a check that could not be done must not read as a pass.
    fn conclusion(&self, conclusion: CheckConclusion) -> &'static str {
        match conclusion {
            CheckConclusion::Passed => "success",
            CheckConclusion::Noted | CheckConclusion::Unjudged => "neutral",
            CheckConclusion::Flagged => self.flagged_conclusion.as_str(),
            CheckConclusion::Error => "failure",
        }
    }

    /// The App's `forgeward` run on `sha` that is still in progress, the newest if several:
    /// remembered from its start in this process, else listed.
    async fn open_run(&self, repo: &RepoName, sha: &CommitSha) -> ForgeResult<Option<u64>> {
        const CALL: &str = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs";
        if let Some(id) = self.open_runs.take(repo, sha) {
            return Ok(Some(id));
        }
        let mut path = format!(
            "/repos/{}/commits/{}/check-runs?check_name={STATUS_CONTEXT}&status=in_progress&filter=all&per_page=100",
            repo_path(repo),
            encode(&sha.0)
        );
        if let Some(app) = self.app_id() {
            path.push_str(&format!("&app_id={app}"));
        }
        let runs: CheckRunsJson = self.fetch(repo, CALL, Method::GET, &path, None).await?;
        Ok(runs.check_runs.iter().map(|run| run.id).max())
    }

    async fn create_run(&self, repo: &RepoName, body: Value) -> ForgeResult<u64> {
        const CALL: &str = "POST /repos/{owner}/{repo}/check-runs";
        let path = format!("/repos/{}/check-runs", repo_path(repo));
        let answer = self
            .send(repo, CALL, Method::POST, &path, Some(body))
            .await?;
        let run: CheckRunJson = decode(&answer.body).map_err(|kind| failure(repo, CALL, kind))?;
        Ok(run.id)
    }

    async fn update_run(&self, repo: &RepoName, id: u64, body: Value) -> ForgeResult<()> {
        const CALL: &str = "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}";
        let path = format!("/repos/{}/check-runs/{id}", repo_path(repo));
        self.send(repo, CALL, Method::PATCH, &path, Some(body))
            .await?;
        Ok(())
    }
}

/// A run's title: one line, within [`MAX_TITLE_CHARS`].
fn title(text: &str) -> String {
    cut_chars(&one_line(text), MAX_TITLE_CHARS).to_owned()
}

fn details(body: &mut Value, url: Option<&str>) {
    if let Some(url) = url {
        body["details_url"] = json!(url);
    }
}

/// One flag as an annotation: on its line, or on line 1 of its file for a flag on the whole
/// file or on something the change removed (said in the message, with the line it had in the
/// base), so that every flag is in the run's list of annotations and the ones on a file the
/// pull request shows stand at its top.
pub(super) fn annotation(flag: &CheckFlag) -> Value {
    let line = flag.line.unwrap_or(1).max(1);
    let mut message = one_line(&flag.message);
    if flag.line.is_none() {
        match flag.base_line {
            Some(base) => message.push_str(&format!(" (removed: line {base} of the base)")),
            None => message.push_str(" (the whole file)"),
        }
    }
    json!({
        "path": flag.path,
        "start_line": line,
        "end_line": line,
        "annotation_level": match flag.level {
            FlagLevel::Note => "notice",
            FlagLevel::Warning => "warning",
            FlagLevel::Error => "failure",
        },
        "title": cut_chars(&flag.rule, MAX_ANNOTATION_TITLE_CHARS),
        "message": cut_bytes(&message, MAX_ANNOTATION_BYTES),
        "raw_details": cut_bytes(&flag.details, MAX_ANNOTATION_BYTES),
    })
}

/// The longest start of `text` within `max` bytes, on a character boundary.
fn cut_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
