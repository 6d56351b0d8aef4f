//! One job's page: its verdict, what it works on (with links to it on its forge), the phases
//! of its latest run with their times, the review flags linked to their lines at the commit
//! they are about, and the log of its latest run (the whole file for a finished job; what there
//! is so far for a running one, the rest streamed by [`super::stream`]).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path as FsPath;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::html::{self, escape, forge_link};
use super::{AppState, WebUrls, authorize, forbidden, html_response, job_id, query_value, refusal};
use crate::detect::RepoPath;
use crate::forge::event::{CommitSha, Event, Forge, RepoName, Thread};
use crate::links::Scope;
use crate::report::{FileLinks, ForgeLinks};
use crate::store::{Job, JobId, JobState, Run, now_ms};

/// The most of a finished job's log the page shows at once, from the end: a log is at most
/// about 2 MiB, which a phone renders slowly.
const SHOWN_LOG_BYTES: u64 = 512 * 1024;

pub(super) async fn page(
    State(state): State<Arc<AppState>>,
    Path(raw): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(id) = job_id(&raw) else {
        return refusal(
            StatusCode::NOT_FOUND,
            "No such job",
            "There is no such job.",
        );
    };
    let pages = &state.pages;
    if let Err(why) = authorize(pages, Scope::Job(id), &query) {
        return forbidden(&why);
    }
    let (job, runs) = match read(&state, id).await {
        Ok(Some(found)) => found,
        Ok(None) => {
            return refusal(
                StatusCode::NOT_FOUND,
                "No such job",
                &format!("The bot has no job {id}."),
            );
        }
        Err(err) => return super::unavailable(&err),
    };
    let attempt = job.attempts;
    let log = if attempt == 0 {
        None
    } else {
        let path = crate::jobs::run::log_path(&pages.data_dir, id, attempt);
        let limit = (!job.state.is_final()).then_some(u64::MAX);
        tokio::task::spawn_blocking(move || read_log(&path, limit.unwrap_or(SHOWN_LOG_BYTES)))
            .await
            .ok()
            .flatten()
    };
    let token = query.get("t").map(String::as_str).unwrap_or_default();
    let view = View {
        job: &job,
        runs: &runs,
        now_ms: now_ms(),
        web: &pages.web_urls,
        log: log.as_ref(),
        stream: (!job.state.is_final()).then(|| {
            let from = log.as_ref().map_or(0, |l| l.end);
            format!(
                "/jobs/{id}/log?t={}&from={attempt}:{from}",
                query_value(token)
            )
        }),
    };
    html_response(StatusCode::OK, render(&view))
}

async fn read(
    state: &AppState,
    id: JobId,
) -> Result<Option<(Job, Vec<Run>)>, crate::store::StoreError> {
    let Some(job) = state.store.job(id).await? else {
        return Ok(None);
    };
    let runs = state.store.runs(id).await?;
    Ok(Some((job, runs)))
}

/// A job's log as read for its page: the text up to its last whole line, where that ends, and
/// how much of the beginning was left out.
pub(super) struct LogText {
    pub text: String,
    /// The byte after the last whole line: where the stream goes on.
    pub end: u64,
    pub skipped: u64,
}

/// The log at `path` up to its last whole line, its last `limit` bytes at most (from a line's
/// start); `None` when there is no file.
pub(super) fn read_log(path: &FsPath, limit: u64) -> Option<LogText> {
    use std::io::{Read as _, Seek as _};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(limit);
    file.seek(std::io::SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(len - start).read_to_end(&mut bytes).ok()?;
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let mut from = 0;
    if start > 0 {
        // Start at a line's beginning.
        from = bytes[..whole]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(whole, |i| i + 1);
    }
    Some(LogText {
        text: String::from_utf8_lossy(&bytes[from..whole]).into_owned(),
        end: start + whole as u64,
        skipped: start + from as u64,
    })
}

/// What the page shows.
pub(super) struct View<'a> {
    pub job: &'a Job,
    pub runs: &'a [Run],
    pub now_ms: i64,
    pub web: &'a WebUrls,
    pub log: Option<&'a LogText>,
    /// The event stream's address, while the job is not final.
    pub stream: Option<String>,
}

/// What a job is about, read from its event.
pub(super) struct About<'a> {
    pub forge: Forge,
    pub repo: &'a RepoName,
    pub number: u64,
    pub thread: Thread,
    /// Who started it.
    pub by: &'a str,
    /// The title the event carried (an issue's, when it was labelled).
    pub title: Option<&'a str>,
    /// What started it, in a few words.
    pub how: String,
}

pub(super) fn about(event: &Event) -> Option<About<'_>> {
    Some(match event {
        Event::IssueLabeled {
            repo,
            number,
            actor,
            title,
            ..
        } => About {
            forge: repo.forge,
            repo: &repo.name,
            number: number.0,
            thread: Thread::Issue,
            by: &actor.login,
            title: Some(title),
            how: "the trigger label".to_owned(),
        },
        Event::Comment {
            repo,
            number,
            thread,
            author,
            body,
            ..
        } => About {
            forge: repo.forge,
            repo: &repo.name,
            number: number.0,
            thread: *thread,
            by: &author.login,
            title: None,
            how: {
                let line = body.lines().next().unwrap_or("").trim();
                let mut line: String = line.chars().take(120).collect();
                if line.len() < body.trim().len() {
                    line.push('…');
                }
                format!("a comment: {line}")
            },
        },
        Event::PullRequest {
            repo,
            number,
            author,
            ..
        } => About {
            forge: repo.forge,
            repo: &repo.name,
            number: number.0,
            thread: Thread::PullRequest,
            by: &author.login,
            title: None,
            how: "a pull request's new commits".to_owned(),
        },
        Event::Ping | Event::Installation { .. } => return None,
    })
}

/// Links into a forge's web UI.
pub(super) struct ForgeUrls<'a> {
    pub web: &'a str,
    pub forge: Forge,
    pub repo: &'a RepoName,
}

impl ForgeUrls<'_> {
    fn repo_path(&self) -> String {
        crate::report::encode_path(&RepoPath::new(self.repo.0.as_bytes().to_vec()))
    }

    pub fn repo(&self) -> String {
        format!("{}/{}", self.web, self.repo_path())
    }

    pub fn thread(&self, thread: Thread, number: u64) -> String {
        let kind = match (self.forge, thread) {
            (Forge::GitHub, Thread::Issue) | (Forge::Forgejo, Thread::Issue) => "issues",
            (Forge::GitLab, Thread::Issue) => "-/issues",
            (Forge::GitHub, Thread::PullRequest) => "pull",
            (Forge::GitLab, Thread::PullRequest) => "-/merge_requests",
            (Forge::Forgejo, Thread::PullRequest) => "pulls",
        };
        format!("{}/{kind}/{number}", self.repo())
    }

    pub fn branch(&self, branch: &str) -> String {
        let kind = match self.forge {
            Forge::GitHub => "tree",
            Forge::GitLab => "-/tree",
            Forge::Forgejo => "src/branch",
        };
        let branch = crate::report::encode_path(&RepoPath::new(branch.as_bytes().to_vec()));
        format!("{}/{kind}/{branch}", self.repo())
    }

    pub fn commit(&self, sha: &str) -> String {
        let kind = match self.forge {
            Forge::GitHub | Forge::Forgejo => "commit",
            Forge::GitLab => "-/commit",
        };
        let sha: String = sha.chars().filter(char::is_ascii_hexdigit).collect();
        format!("{}/{kind}/{sha}", self.repo())
    }

    pub fn line(&self, sha: &str, path: &str, line: Option<u32>) -> String {
        let links = ForgeLinks {
            forge: self.forge,
            web_url: self.web.to_owned(),
            repo: self.repo.clone(),
            sha: CommitSha(sha.chars().filter(char::is_ascii_hexdigit).collect()),
        };
        links.line(&RepoPath::new(path.as_bytes().to_vec()), line)
    }
}

/// The sign (`#12`, GitLab's `!12`) a pull (merge) request or issue goes by.
pub(super) fn sigil(forge: Forge, thread: Thread) -> char {
    match (forge, thread) {
        (Forge::GitLab, Thread::PullRequest) => '!',
        _ => '#',
    }
}

/// The verdict, or where the job is, in a few words; and a class for its colour.
pub(super) fn headline(job: &Job, run: Option<&Run>) -> (String, &'static str) {
    let flags = run.map_or(0, |r| r.flags.len());
    let text = match job.state {
        JobState::Queued if job.attempts == 0 => "⏳ Queued".to_owned(),
        JobState::Queued => format!(
            "⏳ Queued to run again (attempt {} of {} next)",
            job.attempts + 1,
            job.max_attempts
        ),
        JobState::Running => format!("🔄 In progress — {}", job.phase),
        JobState::Succeeded if job.question.is_some() => "❓ The worker has a question".to_owned(),
        JobState::Succeeded if run.is_some_and(|r| r.unjudged.is_some()) => {
            "⚪ The tests could not be run".to_owned()
        }
        JobState::Succeeded if run.is_some_and(|r| r.pull_request.is_some()) => {
            "✅ Ready for review: no review flags".to_owned()
        }
        JobState::Succeeded => "✅ Done: no review flags".to_owned(),
        JobState::Flagged if flags == 1 => "⚠️ Flagged — 1 review flag".to_owned(),
        JobState::Flagged if flags > 1 => format!("⚠️ Flagged — {flags} review flags"),
        JobState::Flagged => "⚠️ Flagged".to_owned(),
        JobState::Failed => "❌ Failed".to_owned(),
        JobState::Cancelled => "⏹ Cancelled".to_owned(),
        JobState::Dead => format!("❌ Failed on every attempt ({})", job.attempts),
    };
    (text, state_class(job.state))
}

pub(super) fn state_class(state: JobState) -> &'static str {
    match state {
        JobState::Queued => "state-queued",
        JobState::Running => "state-running",
        JobState::Succeeded => "state-succeeded",
        JobState::Flagged => "state-flagged",
        JobState::Failed => "state-failed",
        JobState::Cancelled => "state-cancelled",
        JobState::Dead => "state-dead",
    }
}

/// What the state means for the person reading.
fn meaning(job: &Job, run: Option<&Run>) -> String {
    if job.state == JobState::Succeeded
        && job.question.is_none()
        && let Some(why) = run.and_then(|r| r.unjudged.as_deref())
    {
        return format!(
            "No flag fails the check, but forgeward could not run the repository's tests on the change ({why}), so it is not ready for review: a person runs them before accepting it."
        );
    }
    let text = match job.state {
        JobState::Queued => "The job is waiting for a free runner and will start on its own.",
        JobState::Running => "A worker is on it; this page follows it as it goes.",
        JobState::Succeeded if job.question.is_some() => {
            "The worker stopped to ask instead of making the change, so no pull request was opened."
        }
        JobState::Succeeded => "No review flags. A person still reviews before merging.",
        JobState::Flagged => {
            "The change may make the tests pass instead of making the code work: look at each flag before accepting it."
        }
        JobState::Failed | JobState::Dead => "The job stopped without a change to review.",
        JobState::Cancelled => {
            "The job was stopped on purpose, by a newer trigger or a maintainer."
        }
    };
    text.to_owned()
}

/// The phases of a run, each with when it began and when it ended (`None`: still going).
pub(super) fn phase_times(job: &Job, run: &Run) -> Vec<(String, i64, Option<i64>)> {
    let end = run.ended_at_ms.or_else(|| {
        // A run whose lease ran out, or a job final without its run's end: the job's last word.
        (job.state.is_final() || job.attempts > run.attempt).then_some(job.updated_at_ms)
    });
    run.phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let ended = run.phases.get(i + 1).map(|n| n.started_at_ms).or(end);
            (p.phase.clone(), p.started_at_ms, ended)
        })
        .collect()
}

pub(super) fn render(view: &View) -> String {
    let job = view.job;
    let run = view.runs.last();
    let about = about(&job.event);
    let (headline, class) = headline(job, run);
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<header class=\"top\">forgeward · job {}</header>\n<main>",
        job.id
    );
    let _ = writeln!(
        b,
        "<h1 id=\"state\" class=\"{class}\">{}</h1>",
        escape(&headline)
    );
    let _ = writeln!(b, "<p class=\"meaning\">{}</p>", escape(&meaning(job, run)));
    verdict_details(&mut b, job);
    facts(&mut b, view, about.as_ref(), run);
    phases(&mut b, view, run);
    flags(&mut b, view, about.as_ref(), run);
    log(&mut b, view);
    b.push_str("</main>\n");
    let title = match (&about, run.and_then(|r| r.title.as_deref())) {
        (_, Some(title)) => format!("Job {} · {title}", job.id),
        (Some(a), None) => format!("Job {} · {}", job.id, a.repo),
        (None, None) => format!("Job {}", job.id),
    };
    html::page(&title, &b, view.stream.is_some())
}

fn verdict_details(b: &mut String, job: &Job) {
    if let Some(question) = &job.question {
        let _ = writeln!(
            b,
            "<h2>The worker asks</h2>\n<blockquote>{}</blockquote>",
            escape(question)
        );
    }
    if let Some(error) = &job.last_error
        && job.state != JobState::Succeeded
        && job.state != JobState::Flagged
    {
        let _ = writeln!(b, "<p><strong>Why:</strong> {}</p>", escape(error));
    }
}

fn facts(b: &mut String, view: &View, about: Option<&About>, run: Option<&Run>) {
    let job = view.job;
    b.push_str("<dl class=\"facts\">\n");
    let mut fact = |name: &str, value: String| {
        let _ = writeln!(b, "<dt>{}</dt><dd>{value}</dd>", escape(name));
    };
    if let Some(about) = about {
        let urls = ForgeUrls {
            web: view.web.of(about.forge),
            forge: about.forge,
            repo: about.repo,
        };
        fact(
            "Repository",
            format!(
                "{} <span class=\"muted\">on {}</span>",
                forge_link(&urls.repo(), &about.repo.0),
                escape(forge_name(about.forge))
            ),
        );
        let what = match about.thread {
            Thread::Issue => "Issue",
            Thread::PullRequest if about.forge == Forge::GitLab => "Merge request",
            Thread::PullRequest => "Pull request",
        };
        let title = run.and_then(|r| r.title.as_deref()).or(about.title);
        let mut cell = forge_link(
            &urls.thread(about.thread, about.number),
            &format!("{}{}", sigil(about.forge, about.thread), about.number),
        );
        if let Some(title) = title {
            let _ = write!(cell, " {}", escape(title));
        }
        fact(what, cell);
        fact(
            "Started by",
            format!(
                "{} <span class=\"muted\">({})</span>",
                escape(about.by),
                escape(&about.how)
            ),
        );
        if let Some(branch) = run.and_then(|r| r.branch.as_deref()) {
            fact(
                "Branch",
                format!("<code>{}</code>", forge_link(&urls.branch(branch), branch)),
            );
        }
        if let Some((number, url)) = run.and_then(|r| r.pull_request.as_ref()) {
            let name = if about.forge == Forge::GitLab {
                "Merge request opened"
            } else {
                "Pull request opened"
            };
            let sign = sigil(about.forge, Thread::PullRequest);
            fact(name, forge_link(url, &format!("{sign}{number}")));
        }
        if let Some(sha) = run.and_then(|r| r.commit_sha.as_deref().or(r.base_sha.as_deref())) {
            let short: String = sha.chars().take(12).collect();
            let name = if run.is_some_and(|r| r.commit_sha.is_some()) {
                "Commit"
            } else {
                "Base commit"
            };
            fact(
                name,
                format!("<code>{}</code>", forge_link(&urls.commit(sha), &short)),
            );
        }
    }
    if job.attempts > 0 {
        fact(
            "Attempt",
            escape(&format!("{} of {}", job.attempts, job.max_attempts)),
        );
    }
    fact("Queued", html::time_element(job.created_at_ms));
    if job.state.is_final() {
        fact("Ended", html::time_element(job.updated_at_ms));
    }
    b.push_str("</dl>\n");
}

fn phases(b: &mut String, view: &View, run: Option<&Run>) {
    b.push_str("<h2>Phases</h2>\n");
    let Some(run) = run else {
        b.push_str("<ol id=\"phase-list\" class=\"phases\"></ol>\n");
        b.push_str("<p class=\"muted\">No run yet.</p>\n");
        return;
    };
    b.push_str("<ol id=\"phase-list\" class=\"phases\">\n");
    for (phase, started, ended) in phase_times(view.job, run) {
        let (class, took) = match ended {
            Some(ended) => ("done", ended - started),
            None => ("current", view.now_ms - started),
        };
        let _ = writeln!(
            b,
            "<li class=\"{class}\" data-phase=\"{p}\" title=\"began {at}\">{p} <span class=\"took\">{took}</span></li>",
            p = escape(&phase),
            at = escape(&html::time(started)),
            took = escape(&html::duration(took)),
        );
    }
    b.push_str("</ol>\n");
    let earlier = &view.runs[..view.runs.len().saturating_sub(1)];
    if !earlier.is_empty() {
        b.push_str("<p class=\"muted\">Earlier attempts: ");
        let each: Vec<String> = earlier
            .iter()
            .map(|r| {
                let took = r.ended_at_ms.map_or_else(
                    || "its lease ran out".to_owned(),
                    |e| html::duration(e - r.started_at_ms),
                );
                format!(
                    "{} (began {}, {})",
                    r.attempt,
                    escape(&html::time(r.started_at_ms)),
                    escape(&took)
                )
            })
            .collect();
        b.push_str(&each.join("; "));
        b.push_str("</p>\n");
    }
}

fn flags(b: &mut String, view: &View, about: Option<&About>, run: Option<&Run>) {
    let Some(run) = run.filter(|r| !r.flags.is_empty()) else {
        return;
    };
    let _ = writeln!(
        b,
        "<h2 id=\"flags\">Review flags ({})</h2>",
        run.flags.len()
    );
    b.push_str("<ul class=\"flags\">\n");
    for flag in &run.flags {
        let mut place = flag.path.clone();
        if let Some(line) = flag.line {
            let _ = write!(place, ":{line}");
        }
        let place = match (about, run.commit_sha.as_deref()) {
            (Some(about), Some(sha)) => {
                let urls = ForgeUrls {
                    web: view.web.of(about.forge),
                    forge: about.forge,
                    repo: about.repo,
                };
                forge_link(&urls.line(sha, &flag.path, flag.line), &place)
            }
            _ => escape(&place),
        };
        let severity = match flag.severity.as_str() {
            "error" => "error",
            "note" => "note",
            _ => "warning",
        };
        let _ = write!(
            b,
            "<li><code>{place}</code> <strong class=\"sev-{severity}\">{}</strong> \
             <span class=\"muted\">({})</span> — {}",
            escape(&flag.rule),
            escape(&flag.severity),
            escape(&flag.message)
        );
        if let Some(snippet) = &flag.snippet {
            let _ = write!(b, "<br><code>{}</code>", escape(snippet));
        }
        b.push_str("</li>\n");
    }
    b.push_str("</ul>\n");
}

fn log(b: &mut String, view: &View) {
    let job = view.job;
    match &view.stream {
        Some(stream) => {
            let _ = writeln!(b, "<section id=\"log\" data-stream=\"{}\">", escape(stream));
        }
        None => b.push_str("<section id=\"log\">\n"),
    }
    let attempt = if job.attempts > 1 {
        format!(" (attempt {})", job.attempts)
    } else {
        String::new()
    };
    let _ = writeln!(b, "<h2>Log{attempt}</h2>");
    if let Some(log) = view.log
        && log.skipped > 0
    {
        let _ = writeln!(
            b,
            "<p class=\"muted\">The first {} of the log are left out here; the whole log is \
             in the bot's data directory.</p>",
            escape(&bytes(log.skipped))
        );
    }
    let live = if view.stream.is_some() {
        "Connecting to the live log…"
    } else {
        ""
    };
    let _ = writeln!(b, "<p id=\"log-live\" class=\"muted\">{live}</p>");
    b.push_str("<pre id=\"log-lines\" class=\"log\">");
    match view.log {
        Some(log) if !log.text.is_empty() => {
            for line in log.text.lines() {
                let _ = write!(
                    b,
                    "<span class=\"line\">{}\n</span>",
                    escape(&html::log_line(line))
                );
            }
        }
        _ => {
            let why = if job.state.is_final() {
                "No worker log for this run on this server: a pull request's check runs no \
                 worker, and a runner on another machine keeps its log in its own data \
                 directory."
            } else {
                "Nothing yet: the worker has not printed anything, or it runs on a machine \
                 whose data directory this server does not share."
            };
            let _ = write!(b, "<span id=\"log-empty\" class=\"muted\">{why}</span>");
        }
    }
    b.push_str("</pre>\n</section>\n");
}

fn bytes(n: u64) -> String {
    if n >= 1024 * 1024 {
        format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KiB", n.div_ceil(1024))
    }
}

fn forge_name(forge: Forge) -> &'static str {
    match forge {
        Forge::GitHub => "GitHub",
        Forge::GitLab => "GitLab",
        Forge::Forgejo => "Forgejo",
    }
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
