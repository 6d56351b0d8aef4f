//! The status comment: the one comment a job posts on its issue, pull request or merge request,
//! edited in place from "queued" to the verdict. GitHub-flavoured Markdown, which GitLab and
//! Forgejo render the same way.
//!
//! Rendering is pure: everything shown comes in through [`StatusComment`] (durations included, so
//! no clock is read here), and the output depends on nothing else. Finding the comment again is
//! the hidden marker on its first line ([`status_marker`], [`parse_status_marker`]). Posting and
//! editing the comment belong to `forge/`; redacting log lines belongs to the caller.

use std::fmt::Write as _;
use std::time::Duration;

use crate::config::pipeline::TestsAccess;
use crate::detect::{Flag, RepoPath, Severity};
use crate::forge::event::{CommitSha, Forge, RepoName};
use crate::store::JobId;
use crate::text::one_line;

/// Up to this many flags the list starts open: a reviewer reads that many at a glance. A longer
/// list starts folded so the verdict and the table stay on screen.
const OPEN_FLAGS_MAX: usize = 10;

/// A worker's name longer than this is cut: a table cell on a phone is about this wide.
const WORKER_NAME_MAX: usize = 48;

/// Hex digits of an image digest kept when a worker's name is shortened: as many as
/// `docker images` shows, enough to tell images apart.
const DIGEST_SHOWN: usize = 12;

/// The most of a worker's question the comment quotes, in characters and in lines: the rest is
/// cut with an ellipsis (the whole question, up to its own cap, still reaches the next job).
const QUESTION_SHOWN_MAX: usize = 4000;
const QUESTION_LINES_MAX: usize = 60;

/// Put after a character that must not act in a quoted question (`@` of a mention, `<` of a tag
/// or an HTML comment, `&` of an entity): invisible, and it stops the forge from reading one.
const DEFUSE: char = '\u{200B}';

const MARKER_PREFIX: &str = "<!-- forgeward:status job=";
const MARKER_SUFFIX: &str = " -->";

/// Everything a status comment shows. Optional parts are left out of the comment when `None` or
/// empty.
#[derive(Clone)]
pub struct StatusComment<'a> {
    pub job: JobId,
    pub state: StatusState,
    /// Runs started, counting the one in progress (0 while never started: the row is left out).
    pub attempt: u32,
    pub max_attempts: u32,
    /// The worker's name or image, e.g. `claude-code@sha256:ab12…`; shortened if long.
    pub worker: Option<&'a str>,
    pub exit: Option<WorkerExit>,
    /// Elapsed so far while working, the total when done.
    pub duration: Option<Duration>,
    pub changes: Option<ChangeSummary>,
    pub flags: &'a [Flag],
    pub branch: Option<&'a str>,
    pub pull_request: Option<PullRequestLink<'a>>,
    /// Builds the links to flagged lines.
    pub links: &'a dyn FileLinks,
    /// The worker's last log lines, already redacted by the caller. Shown only while working and
    /// after a failure or time-out.
    pub log_tail: &'a [String],
    /// One line on why the job failed or was cancelled.
    pub error: Option<&'a str>,
    /// The question the worker asked instead of making the change: shown in the
    /// [`StatusState::Question`] state.
    pub question: Option<WorkerQuestion<'a>>,
    /// Whether the worker could change the base's tests (known once the checkout is ready).
    pub tests: Option<TestsAccess>,
    /// The bot's own runs of the repository's tests, once they ran.
    pub verification: Option<&'a VerificationView>,
    /// Each phase the job entered and the time it took (so far, for the one it is in).
    pub phases: &'a [(&'static str, Duration)],
    /// The job's live page, with its signed token (`server.public_url` set).
    pub page: Option<&'a str>,
    /// What the worker could reach (`none`, the allow list) and, once it ran, what it reached.
    pub network: Option<&'a str>,
    /// The environment the job prepared or found kept (`kept from job 12: python
    /// (requirements.txt) · 1,204 files, 48 MB`), once that phase ran.
    pub environment: Option<&'a str>,
    /// What the detector could not read and passed over (`tests/test_big.py: skipped: 8.1 MiB,
    /// over the 4 MiB limit`): a person looks at it instead.
    pub unread: &'a [String],
}

/// A worker's question (`/job-out/question.md`) and whom the comment asks to answer it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerQuestion<'a> {
    /// As the worker wrote it, untrusted: quoted, capped and defused when shown (no mention
    /// notifies anyone, no tag or HTML comment opens).
    pub text: &'a str,
    /// The login of the person who started the job: mentioned, and asked for the answer.
    pub asked_by: &'a str,
    /// The bot's comment command (`trigger.command`, `/forgeward` by default).
    pub command: &'a str,
}

/// Where the job is, as the comment's header says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatusState {
    Queued,
    /// `phase` is what the job is doing, for people: "cloning", "running the worker", …
    Working {
        phase: String,
    },
    ReadyForReview,
    Flagged,
    Failed,
    Cancelled,
    TimedOut,
    /// The worker stopped to ask a question (the task or the tests look wrong to it): no pull
    /// request, the question quoted, the person who started the job asked to answer.
    Question,
    /// No flag fails the check, but verification could not run the repository's tests on the
    /// change (the comment's `error` says why): never "ready for review".
    Unjudged,
}

/// How the worker process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerExit {
    Exited(i32),
    /// Killed by a signal, named like `SIGKILL`.
    Killed(String),
    TimedOut,
}

/// The size of the change the worker made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangeSummary {
    pub files: usize,
    pub added: u64,
    pub removed: u64,
}

/// The pull request (GitHub and Forgejo, shown `#12`) or merge request (GitLab, shown `!12`) the
/// job opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PullRequestLink<'a> {
    pub forge: Forge,
    pub number: u64,
    pub url: &'a str,
}

/// Builds the web link to a file, or to one line of it, at the commit the flags are about.
pub trait FileLinks {
    fn line(&self, path: &RepoPath, line: Option<u32>) -> String;
}

/// Links into a forge's web UI at one commit:
/// GitHub `{web_url}/{repo}/blob/{sha}/{path}#L{line}`,
/// GitLab `{web_url}/{repo}/-/blob/{sha}/{path}#L{line}`,
/// Forgejo `{web_url}/{repo}/src/commit/{sha}/{path}#L{line}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForgeLinks {
    pub forge: Forge,
    /// `https://github.com`, `https://gitlab.com` or a self-hosted instance's root.
    pub web_url: String,
    pub repo: RepoName,
    pub sha: CommitSha,
}

impl FileLinks for ForgeLinks {
    fn line(&self, path: &RepoPath, line: Option<u32>) -> String {
        let blob = match self.forge {
            Forge::GitHub => "blob",
            Forge::GitLab => "-/blob",
            Forge::Forgejo => "src/commit",
        };
        let mut url = format!(
            "{}/{}/{blob}/{}/{}",
            self.web_url.trim_end_matches('/'),
            self.repo,
            self.sha,
            super::encode_path(path),
        );
        if let Some(line) = line {
            let _ = write!(url, "#L{line}");
        }
        url
    }
}

/// The hidden first line that finds a job's comment again: `<!-- forgeward:status job=42 -->`.
pub fn status_marker(job: JobId) -> String {
    format!("{MARKER_PREFIX}{job}{MARKER_SUFFIX}")
}

/// The job a status comment is about, read from the marker on its first line; `None` for any
/// other comment, including one that only quotes a marker further down.
pub fn parse_status_marker(body: &str) -> Option<JobId> {
    let first = body.lines().next()?.trim();
    let id = first
        .strip_prefix(MARKER_PREFIX)?
        .strip_suffix(MARKER_SUFFIX)?;
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse().ok().map(JobId)
}

/// The whole comment body, marker first.
/// What the status comment shows of verification: the runner, each run's counts (or why it
/// could not be judged), and the tests whose outcome changed with the base's tests.
#[derive(Debug, Clone, Default)]
pub struct VerificationView {
    /// `None`: verification could not run at all, for `note`'s reason.
    pub runner: Option<String>,
    /// `(run, passed · failed · skipped · collected, or why not)`.
    pub runs: Vec<(String, Result<[usize; 4], String>)>,
    /// `(test, with the change's tests, with the base's)`.
    pub changed: Vec<(String, String, String)>,
    pub note: Option<String>,
}

impl VerificationView {
    /// One line for a commit status: how the base's tests fare on the change.
    pub fn status_line(&self) -> Option<String> {
        if self.runner.is_none() {
            return Some("verification could not run".to_owned());
        }
        match self.runs.last() {
            Some((_, Ok([passed, _, _, collected]))) => Some(format!(
                "the base's tests: {passed} of {collected} pass on the change"
            )),
            Some((_, Err(_))) => Some("verification could not judge the change".to_owned()),
            None => None,
        }
    }
}

/// The most changed tests listed by name.
const CHANGED_MAX: usize = 20;

fn verification_section(v: &VerificationView) -> String {
    let mut s = String::new();
    let Some(runner) = &v.runner else {
        let _ = writeln!(
            s,
            "**Verification:** could not run: {}\n",
            inline(v.note.as_deref().unwrap_or("no test command"))
        );
        return s;
    };
    let _ = writeln!(s, "**Verification** ({})\n", inline(runner));
    s.push_str("| run | passed | failed | skipped | collected |\n|:--|--:|--:|--:|--:|\n");
    for (name, counts) in &v.runs {
        match counts {
            Ok([p, f, k, c]) => {
                let _ = writeln!(s, "| {} | {p} | {f} | {k} | {c} |", inline(name));
            }
            Err(why) => {
                let _ = writeln!(
                    s,
                    "| {} | could not be judged: {} | | | |",
                    inline(name),
                    inline(why)
                );
            }
        }
    }
    if !v.changed.is_empty() {
        s.push('\n');
        for (test, head, base) in v.changed.iter().take(CHANGED_MAX) {
            let _ = writeln!(
                s,
                "- {}: {} with the change's tests, {} with the base's",
                code_span(test),
                inline(head),
                inline(base)
            );
        }
        if v.changed.len() > CHANGED_MAX {
            let _ = writeln!(s, "- … and {} more", v.changed.len() - CHANGED_MAX);
        }
    }
    s
}

pub fn render_status(status: &StatusComment) -> String {
    let mut out = String::new();
    out.push_str(&status_marker(status.job));
    out.push('\n');
    out.push_str(&story(status, status.flags.len()));
    out.push_str("<sub>forgeward · one comment per job, updated as it runs</sub>\n");
    out
}

/// The same story as the status comment, for a check's summary (a GitHub check run's): without
/// the marker and the footer, within `max_chars` characters. A story too long for that lists
/// fewer flags, saying how many more there are (a check carries each of them as an annotation
/// of its own); past even that, it is cut.
pub fn render_check_summary(status: &StatusComment, max_chars: usize) -> String {
    let mut shown = status.flags.len();
    loop {
        let text = story(status, shown);
        if text.chars().count() <= max_chars {
            return text;
        }
        if shown == 0 {
            let mut cut: String = text.chars().take(max_chars.saturating_sub(1)).collect();
            cut.push('…');
            return cut;
        }
        shown = shown * 3 / 4;
    }
}

/// Everything between the marker and the footer, listing the first `flags_shown` flags.
fn story(status: &StatusComment, flags_shown: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### {}\n", header(status));
    let _ = writeln!(out, "{}\n", meaning(status));
    let _ = writeln!(out, "{}", table(status));
    if !status.flags.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            flag_list(status.flags, flags_shown, status.links)
        );
    }
    if let Some(v) = status.verification {
        let _ = writeln!(out, "{}", verification_section(v));
    }
    let shows_log = matches!(
        status.state,
        StatusState::Working { .. } | StatusState::Failed | StatusState::TimedOut
    );
    if let (StatusState::Question, Some(question)) = (&status.state, status.question) {
        let _ = writeln!(out, "{}", question_block(&question));
    }
    if shows_log && !status.log_tail.is_empty() {
        let _ = writeln!(out, "{}", log_tail(status.log_tail));
    }
    if let (StatusState::Failed | StatusState::Cancelled | StatusState::Unjudged, Some(error)) =
        (&status.state, status.error)
    {
        let _ = writeln!(out, "**Why:** {}\n", inline(error));
    }
    out
}

fn header(status: &StatusComment) -> String {
    match &status.state {
        StatusState::Queued => "⏳ forgeward: queued".to_owned(),
        StatusState::Working { phase } => {
            let mut s = format!("🔄 forgeward: working — {}", inline(phase));
            if let Some(elapsed) = status.duration {
                let _ = write!(s, " ({})", human_duration(elapsed));
            }
            s
        }
        StatusState::ReadyForReview => "✅ forgeward: ready for review".to_owned(),
        StatusState::Flagged => format!(
            "⚠️ forgeward: flagged — {}",
            count(status.flags.len(), "review flag", "review flags")
        ),
        // A setup that failed is the repository's environment, not the worker.
        StatusState::Failed
            if status.phases.last().map(|(p, _)| *p) == Some("preparing environment") =>
        {
            "❌ forgeward: failed — the environment could not be prepared".to_owned()
        }
        StatusState::Failed => "❌ forgeward: failed".to_owned(),
        StatusState::Cancelled => "⏹ forgeward: cancelled".to_owned(),
        StatusState::TimedOut => "⏱ forgeward: timed out".to_owned(),
        StatusState::Question => "❓ forgeward: the worker has a question".to_owned(),
        StatusState::Unjudged => "⚪ forgeward: the tests could not be run".to_owned(),
    }
}

/// What the state means for the person reading the comment.
fn meaning(status: &StatusComment) -> &'static str {
    match &status.state {
        StatusState::ReadyForReview if !status.flags.is_empty() => {
            "Nothing here fails the check; the flags below are for a person to read. A person still reviews before merging."
        }
        StatusState::ReadyForReview if !status.unread.is_empty() => {
            "No review flags on what the detector read; what it could not read is listed below for a person to look at. A person still reviews before merging."
        }
        StatusState::Queued => "The job is waiting for a free runner and will start on its own.",
        StatusState::Working { .. } => {
            "A worker is making the change. This comment will show the result when it is done."
        }
        StatusState::ReadyForReview => "No review flags. A person still reviews before merging.",
        StatusState::Flagged => {
            "The change may make the tests pass instead of making the code work: look at each flag before accepting it."
        }
        StatusState::Failed => "The job stopped without a change to review.",
        StatusState::Cancelled => {
            "The job was stopped on purpose, by a newer trigger or a maintainer."
        }
        StatusState::TimedOut => {
            "The worker ran out of time before it finished, so there is no change to review."
        }
        StatusState::Question => {
            "The worker stopped to ask instead of making the change, so no pull request was opened. Anything it changed is on the branch."
        }
        StatusState::Unjudged => {
            "The detector raised nothing that fails the check, but forgeward could not run the repository's tests on the change, so it is not ready for review: a person runs them before accepting it."
        }
    }
}

fn table(status: &StatusComment) -> String {
    let mut rows: Vec<(&str, String)> = Vec::new();
    let worker = status.worker.map(|w| code_span(&shorten_worker(w)));
    let exit = status.exit.as_ref().map(exit_text);
    match (worker, exit) {
        (Some(w), Some(e)) => rows.push(("Worker", format!("{w} · {e}"))),
        (Some(cell), None) | (None, Some(cell)) => rows.push(("Worker", cell)),
        (None, None) => {}
    }
    if let Some(environment) = status.environment {
        rows.push(("Environment", printable(environment)));
    }
    if let Some(network) = status.network {
        rows.push(("Network", printable(network)));
    }
    if let Some(d) = status.duration {
        let mut cell = human_duration(d);
        if !status.phases.is_empty() {
            let each: Vec<String> = status
                .phases
                .iter()
                .map(|(phase, took)| format!("{phase} {}", human_duration(*took)))
                .collect();
            cell.push_str(&format!(" ({})", each.join(" · ")));
        }
        rows.push(("Duration", cell));
    }
    if let Some(c) = status.changes {
        rows.push((
            "Changes",
            format!(
                "+{} −{} in {}",
                c.added,
                c.removed,
                count(c.files, "file", "files")
            ),
        ));
    }
    if !status.flags.is_empty() {
        rows.push(("Review flags", status.flags.len().to_string()));
    }
    if !status.unread.is_empty() {
        let each: Vec<String> = status.unread.iter().map(|w| printable(w)).collect();
        rows.push(("Not read", each.join("; ")));
    }
    if let Some(branch) = status.branch {
        rows.push(("Branch", code_span(&printable(branch))));
    }
    if let Some(pr) = status.pull_request {
        let sigil = match pr.forge {
            Forge::GitHub | Forge::Forgejo => '#',
            Forge::GitLab => '!',
        };
        rows.push((
            "Pull request",
            format!("[{sigil}{}]({})", pr.number, link_destination(pr.url)),
        ));
    } else if status.state == StatusState::Question {
        rows.push((
            "Pull request",
            "none: the worker asked a question".to_owned(),
        ));
    }
    if status.attempt > 0 {
        rows.push((
            "Attempt",
            format!("{} of {}", status.attempt, status.max_attempts),
        ));
    }
    if let Some(tests) = status.tests {
        rows.push(("Tests", tests.to_string()));
    }
    // A code span, or GitHub would link `#42` to issue 42.
    let mut job = code_span(&format!("#{}", status.job));
    if let Some(page) = status.page {
        let _ = write!(job, " · [live page]({})", link_destination(page));
    }
    rows.push(("Job", job));

    let mut s = String::from("| | |\n|:--|:--|\n");
    for (name, value) in rows {
        // GFM splits cells on every unescaped `|`, code spans included.
        let _ = writeln!(s, "| {name} | {} |", value.replace('|', "\\|"));
    }
    s
}

fn exit_text(exit: &WorkerExit) -> String {
    match exit {
        WorkerExit::Exited(code) => format!("exited with code {code}"),
        WorkerExit::Killed(signal) => format!("killed by {}", inline(signal)),
        WorkerExit::TimedOut => "stopped at its time limit".to_owned(),
    }
}

fn flag_list(flags: &[Flag], shown: usize, links: &dyn FileLinks) -> String {
    let open = if flags.len() <= OPEN_FLAGS_MAX {
        " open"
    } else {
        ""
    };
    let mut s = format!(
        "<details{open}>\n<summary>{}</summary>\n\n",
        count(flags.len(), "review flag", "review flags")
    );
    for flag in flags.iter().take(shown) {
        let mut place = printable(&flag.path.display());
        if let Some(line) = flag.line {
            let _ = write!(place, ":{line}");
        }
        let severity = match flag.severity {
            Severity::Warning => "",
            Severity::Error => " (error)",
            Severity::Note => " (note)",
        };
        let _ = writeln!(
            s,
            "- [{}]({}) **{}**{severity} — {}",
            code_span(&place),
            link_destination(&links.line(&flag.path, flag.line)),
            flag.rule,
            inline(&flag.message),
        );
    }
    if shown < flags.len() {
        let _ = writeln!(
            s,
            "- … and {} more, each an annotation of this check",
            flags.len() - shown
        );
    }
    s.push_str("\n</details>\n");
    s
}

fn log_tail(lines: &[String]) -> String {
    let longest = lines.iter().map(|l| longest_backtick_run(l)).max();
    let fence = "`".repeat(longest.unwrap_or(0).max(2) + 1);
    let mut s = format!("<details><summary>Last log lines</summary>\n\n{fence}text\n");
    for line in lines {
        s.push_str(line.trim_end_matches(['\r', '\n']));
        s.push('\n');
    }
    let _ = writeln!(s, "{fence}\n\n</details>");
    s
}

/// The question quoted, then who is asked to answer and how.
fn question_block(question: &WorkerQuestion) -> String {
    let mut s = quote(question.text);
    let login = question.asked_by;
    let mention = if !login.is_empty()
        && login
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        format!("@{login}")
    } else {
        "The person who started this job".to_owned()
    };
    let command = printable(&one_line(question.command));
    let _ = writeln!(
        s,
        "\n{mention}, reply {} here to start the next job with your answer, or {} alone to let \
         the worker go on as it sees fit.",
        code_span(&format!("{command} run <answer>")),
        code_span(&format!("{command} run")),
    );
    s
}

/// `text` as a Markdown blockquote, at most [`QUESTION_SHOWN_MAX`] characters and
/// [`QUESTION_LINES_MAX`] lines of it, each line [`defused`].
fn quote(text: &str) -> String {
    let text = text.trim();
    let kept: String = text.chars().take(QUESTION_SHOWN_MAX).collect();
    let mut cut = kept.len() < text.len();
    let mut lines: Vec<&str> = kept.lines().collect();
    if lines.len() > QUESTION_LINES_MAX {
        lines.truncate(QUESTION_LINES_MAX);
        cut = true;
    }
    let mut s = String::new();
    for line in lines {
        let line = defused(line);
        let line = line.trim_end();
        s.push('>');
        if !line.is_empty() {
            s.push(' ');
            s.push_str(line);
        }
        s.push('\n');
    }
    if cut {
        s.push_str(">\n> …\n");
    }
    s
}

/// One line of a worker's text, made inert where it could act on the forge or on the comment: an
/// `@` cannot mention (or notify a team), a `<` cannot open a tag or an HTML comment (which could
/// hide the rest of the comment or pass for the bot's markers), `-->` cannot close one, a `&`
/// cannot spell an entity (`&#64;`), and control characters become U+FFFD. Everything else is
/// kept as written, Markdown included: the defusing characters are invisible.
fn defused(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        match c {
            '\t' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            '@' | '＠' => {
                out.push(c);
                out.push(DEFUSE);
            }
            '<' if next
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '!' | '/' | '?')) =>
            {
                out.push(c);
                out.push(DEFUSE);
            }
            '&' if next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#') => {
                out.push(c);
                out.push(DEFUSE);
            }
            '-' if out.ends_with('-') && next == Some('>') => {
                out.push(DEFUSE);
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `42 s`, `3 min 5 s`, `1 h 2 min`: the two largest units, whole seconds.
pub fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m, s) {
        (0, 0, s) => format!("{s} s"),
        (0, m, 0) => format!("{m} min"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, 0, _) => format!("{h} h"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `claude-code@sha256:ab12cd34ef56…`: an image digest cut to [`DIGEST_SHOWN`] digits, then
/// anything still longer than [`WORKER_NAME_MAX`] characters cut with an ellipsis.
fn shorten_worker(name: &str) -> String {
    let mut name = printable(name);
    if let Some(at) = name.find("@sha256:") {
        let digest_start = at + "@sha256:".len();
        if name.len() - digest_start > DIGEST_SHOWN {
            name.truncate(digest_start + DIGEST_SHOWN);
            name.push('…');
        }
    }
    if name.chars().count() > WORKER_NAME_MAX {
        name = name.chars().take(WORKER_NAME_MAX - 1).collect();
        name.push('…');
    }
    name
}

/// Text for one line of Markdown: control characters (a newline in a path, say) become U+FFFD,
/// as invalid UTF-8 already does.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect()
}

/// `content` as a code span: a fence longer than any backtick run inside, padded with a space
/// where the content would otherwise merge with the fence or lose its own spaces.
fn code_span(content: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(content) + 1);
    let pad = content.starts_with('`')
        || content.ends_with('`')
        || (content.starts_with(' ') && content.ends_with(' ') && !content.trim().is_empty());
    let pad = if pad { " " } else { "" };
    format!("{fence}{pad}{content}{pad}{fence}")
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// A URL as a Markdown link destination: the characters that would end it early or split a
/// table cell are percent-encoded.
fn link_destination(url: &str) -> String {
    let mut s = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            ' ' | '(' | ')' | '<' | '>' | '|' | '`' => {
                let _ = write!(s, "%{:02X}", u32::from(c));
            }
            c if c.is_control() => {}
            c => s.push(c),
        }
    }
    s
}

/// Text from elsewhere (a flag's message, an error, a phase) on one line of Markdown. Its code
/// spans are kept as written, as the detector's messages use them to quote code; everything else
/// Markdown or HTML would act on is backslash-escaped, so a `<tag>` or a `*` reads as written.
fn inline(text: &str) -> String {
    let text = printable(&one_line(text));
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find('`') {
        escape_into(&rest[..start], &mut out);
        let opening = &rest[start..];
        let run = longest_prefix_run(opening);
        let body = &opening[run..];
        match closing_run(body, run) {
            Some(end) => {
                out.push_str(&opening[..run + end + run]);
                rest = &body[end + run..];
            }
            None => {
                out.push_str(&"\\`".repeat(run));
                rest = body;
            }
        }
    }
    escape_into(rest, &mut out);
    out
}

fn longest_prefix_run(text: &str) -> usize {
    text.len() - text.trim_start_matches('`').len()
}

/// Where a run of exactly `run` backticks starts in `body`, closing a code span.
fn closing_run(body: &str, run: usize) -> Option<usize> {
    let mut i = 0;
    while let Some(found) = body[i..].find('`') {
        let at = i + found;
        let len = longest_prefix_run(&body[at..]);
        if len == run {
            return Some(at);
        }
        i = at + len;
    }
    None
}

fn escape_into(text: &str, out: &mut String) {
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '~' | '|'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
