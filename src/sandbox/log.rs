//! The job log: what a worker printed, redacted and capped, kept for the status comment, the
//! job page and the operator. Owns [`Redactor`] (secret values and token-shaped text become
//! `***`), [`JobLog`] (the [`LogSink`] the pipeline hands to a sandbox, which can also write
//! each line to a file as it comes, for the job page to stream) and [`pump_lines`] (a worker's
//! pipe cut into lines, shared by every backend).
//!
//! Redaction happens before a line is stored, watched or counted, so nothing unredacted is ever
//! kept; this module must never log, print or put in an error the text it is redacting.

use std::collections::VecDeque;
use std::sync::{LazyLock, Mutex, PoisonError};

use regex::{Regex, RegexSet};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

use super::{LogSink, Stream};

/// What a redacted value becomes.
pub const MASK: &str = "***";

/// Configured secrets shorter than this are not redacted by value: a four-character value would
/// turn every occurrence of a common word or number in the log into `***`, and a secret that
/// short is no secret. Token-shaped text is still caught by the patterns.
pub const MIN_SECRET_LEN: usize = 6;

/// The longest line the log keeps, in bytes; the rest is cut and marked. 4 KiB holds a long
/// compiler error or stack frame; longer lines are minified code or binary noise that would
/// crowd out everything else.
pub const MAX_LINE_BYTES: usize = 4 * 1024;

/// The most the log keeps in all, in bytes. 1 MiB is a long build log; a worker printing more is
/// looping, and the status comment shows only the last lines anyway. A quarter of it keeps the
/// beginning (what the worker set out to do), the rest the most recent lines (how it ended).
pub const MAX_LOG_BYTES: usize = 1024 * 1024;

/// The line length a backend cuts at while reading a pipe, before the log sees the line: it
/// bounds memory while a worker prints without newlines. It is larger than [`MAX_LINE_BYTES`] by
/// more than any secret is long, so a secret straddling this cut lies past the log's own cut and
/// no prefix of it is kept.
pub const MAX_PIPE_LINE_BYTES: usize = 16 * 1024;

/// Where a line was cut.
const CUT_MARK: &str = " …[line cut]";

/// Token shapes, each replaced whole. Bare hex (a commit sha, a checksum) is deliberately not
/// here: build logs are full of them, and a hex secret is caught by its configured value or by
/// the `key=value` pattern.
static TOKENS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens.
        r"\bgh[pousr]_[A-Za-z0-9]{20,}",
        r"\bgithub_pat_[A-Za-z0-9_]{20,}",
        // GitLab personal/project access tokens.
        r"\bglpat-[A-Za-z0-9_\-]{20,}",
        // JWTs: three base64url parts, the first a JSON object (`{"` is `eyJ`).
        r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
        // AWS access key ids.
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        // OpenAI / Anthropic style API keys.
        r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}",
    ]
    .iter()
    .map(|p| Regex::new(p).unwrap_or_else(|e| panic!("token pattern {p}: {e}")))
    .collect()
});

/// Tokens named by what precedes them; group 1 is kept, the rest replaced.
static NAMED: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // `Authorization: <anything>` up to the end of the line (Basic, token, Bearer, …).
        r"(?i)(\bauthorization\s*[:=]\s*)\S.*",
        // `Bearer <token>`; 16 characters so that prose ("bearer of bad news") stays.
        r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{16,}=*",
        // `password=…` or `"password": "…"` (a password may be short). A bare `password:` is
        // prose ("Missing password: set one") as often as not, and is left alone.
        r#"(?i)(\bpass(?:word|wd)(?:\s*=\s*["']?|["']\s*:\s*["']))[^\s"'&,;]+"#,
        // `token=…`, `secret=…`, `api_key=…`, `"access_token": "…"` with a long value.
        r#"(?i)(\b[a-z_\-]*(?:token|secret|api[_\-]?key)(?:\s*=\s*["']?|["']\s*:\s*["']))[A-Za-z0-9+/_\-.~]{8,}=*"#,
    ]
    .iter()
    .map(|p| Regex::new(p).unwrap_or_else(|e| panic!("named pattern {p}: {e}")))
    .collect()
});

/// A cheap first pass: most lines match no pattern and are returned untouched.
static ANY: LazyLock<RegexSet> = LazyLock::new(|| {
    let all = TOKENS.iter().chain(NAMED.iter()).map(|r| r.as_str());
    RegexSet::new(all).unwrap_or_else(|e| panic!("pattern set: {e}"))
});

/// Replaces secrets in text: every configured secret value (at least [`MIN_SECRET_LEN`] long)
/// and anything shaped like a token, with [`MASK`].
#[derive(Clone, Default)]
pub struct Redactor {
    /// Longest first, so a secret that contains another is replaced whole.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    /// Says how many secrets it holds, never which.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    /// A redactor for these configured secret values (tokens, webhook secrets, API keys).
    pub fn new<I, S>(secrets: I) -> Redactor
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .map(|s| s.as_ref().trim().to_owned())
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Redactor { secrets }
    }

    /// The text with every secret replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), MASK);
            }
        }
        if !ANY.is_match(&out) {
            return out;
        }
        for re in TOKENS.iter() {
            out = re.replace_all(&out, MASK).into_owned();
        }
        for re in NAMED.iter() {
            out = re.replace_all(&out, format!("${{1}}{MASK}")).into_owned();
        }
        out
    }
}

/// Everything [`JobLog`] keeps, behind one lock.
#[derive(Default)]
struct Kept {
    /// The first lines, up to a quarter of [`MAX_LOG_BYTES`]; never evicted.
    head: Vec<String>,
    head_bytes: usize,
    /// The most recent lines after the head, oldest evicted first.
    tail: VecDeque<String>,
    tail_bytes: usize,
    /// Lines evicted from the tail (between head and tail in the full text).
    dropped: u64,
    /// Lines seen in all.
    seen: u64,
    /// The file each line is written to as it comes, if any.
    live: Option<LiveFile>,
}

/// The log as a file written while the worker runs: append-only, so that a reader following it
/// (the job page's stream) can resume at any byte it reached. The first [`MAX_LOG_BYTES`] of
/// lines go in as they come; past that a line says so and the rest wait, and when the worker
/// ends ([`JobLog::finish_file`]) the most recent lines the log kept follow, after a line
/// counting the ones dropped between. The file stays under twice [`MAX_LOG_BYTES`].
struct LiveFile {
    file: std::fs::File,
    bytes: usize,
    /// Lines written before the cut (the file's first `lines` are the log's first).
    lines: u64,
    cut: bool,
    /// A write failed (the disk is full, say): the file is left as it is.
    broken: bool,
    finished: bool,
}

/// The line a live file gets where it stops taking lines as they come.
pub const LIVE_CUT_MARK: &str =
    "[… the log passed 1 MiB: its last lines follow when the worker ends …]";

impl LiveFile {
    fn write(&mut self, text: &str) {
        use std::io::Write as _;
        if self.broken {
            return;
        }
        if let Err(err) = self.file.write_all(text.as_bytes()) {
            // The error only: never the text.
            tracing::warn!(error = %err, "the live job log cannot be written; it stops here");
            self.broken = true;
        }
        self.bytes += text.len();
    }

    fn line(&mut self, line: &str) {
        if self.cut || self.finished {
            return;
        }
        if self.bytes + line.len() + 1 > MAX_LOG_BYTES {
            self.write(&format!("{LIVE_CUT_MARK}\n"));
            self.cut = true;
            return;
        }
        let mut text = String::with_capacity(line.len() + 1);
        text.push_str(line);
        text.push('\n');
        self.write(&text);
        self.lines += 1;
    }
}

/// The job log: a thread-safe [`LogSink`] that redacts each line before anything else, cuts it
/// at [`MAX_LINE_BYTES`], and keeps the beginning and the most recent lines within
/// [`MAX_LOG_BYTES`], counting the lines it had to drop in between.
pub struct JobLog {
    redactor: Redactor,
    kept: Mutex<Kept>,
    last: watch::Sender<Option<String>>,
}

impl JobLog {
    pub fn new(redactor: Redactor) -> JobLog {
        JobLog {
            redactor,
            kept: Mutex::new(Kept::default()),
            last: watch::Sender::new(None),
        }
    }

    /// Watches the last (redacted) line as it arrives: for live progress on a terminal or a
    /// status comment. `None` until the worker prints something.
    pub fn subscribe(&self) -> watch::Receiver<Option<String>> {
        self.last.subscribe()
    }

    /// The last `n` kept lines, oldest first.
    pub fn tail(&self, n: usize) -> Vec<String> {
        let kept = self.lock();
        let from_tail = kept.tail.len().min(n);
        let from_head = (n - from_tail).min(kept.head.len());
        let mut lines: Vec<String> = kept.head[kept.head.len() - from_head..].to_vec();
        lines.extend(kept.tail.iter().skip(kept.tail.len() - from_tail).cloned());
        lines
    }

    /// Everything kept, one line each, with a note where lines were dropped.
    pub fn text(&self) -> String {
        let kept = self.lock();
        let mut text = String::with_capacity(kept.head_bytes + kept.tail_bytes + 64);
        for line in &kept.head {
            text.push_str(line);
            text.push('\n');
        }
        if kept.dropped > 0 {
            text.push_str(&format!("[… {} lines dropped …]\n", kept.dropped));
        }
        for line in &kept.tail {
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    /// The log, writing each line to `path` too as it comes (the file is created, or emptied).
    pub fn with_file(redactor: Redactor, path: &std::path::Path) -> std::io::Result<JobLog> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::File::create(path)?;
        let log = JobLog::new(redactor);
        log.lock().live = Some(LiveFile {
            file,
            bytes: 0,
            lines: 0,
            cut: false,
            broken: false,
            finished: false,
        });
        Ok(log)
    }

    /// Whether the log is written to a file as it comes.
    pub fn has_file(&self) -> bool {
        self.lock().live.is_some()
    }

    /// Ends the live file: when it was cut, the lines kept since (the most recent ones) are
    /// written after a line counting those dropped, then it is synced. Blocking IO; once.
    pub fn finish_file(&self) {
        let mut kept = self.lock();
        let Kept {
            tail, seen, live, ..
        } = &mut *kept;
        let Some(live) = live.as_mut().filter(|l| !l.finished) else {
            return;
        };
        if live.cut {
            let first_kept = seen.saturating_sub(tail.len() as u64).max(live.lines);
            let dropped = first_kept - live.lines;
            let mut text = String::new();
            if dropped > 0 {
                text.push_str(&format!("[… {dropped} lines dropped …]\n"));
            }
            let skip = usize::try_from(first_kept - seen.saturating_sub(tail.len() as u64))
                .unwrap_or(usize::MAX);
            for line in tail.iter().skip(skip) {
                text.push_str(line);
                text.push('\n');
            }
            live.write(&text);
        }
        live.finished = true;
        if !live.broken
            && let Err(err) = live.file.sync_all()
        {
            tracing::warn!(error = %err, "the job log could not be synced");
        }
    }

    /// Lines dropped to stay within [`MAX_LOG_BYTES`].
    pub fn dropped_lines(&self) -> u64 {
        self.lock().dropped
    }

    /// Lines received in all, kept or not.
    pub fn total_lines(&self) -> u64 {
        self.lock().seen
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        // A panic elsewhere while holding the lock leaves consistent data: every update below
        // completes before the guard drops.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl LogSink for JobLog {
    fn line(&self, _stream: Stream, line: &str) {
        let line = cut(self.redactor.redact(line), MAX_LINE_BYTES);
        {
            let mut kept = self.lock();
            kept.seen += 1;
            let size = line.len() + 1;
            if kept.tail.is_empty() && kept.head_bytes + size <= MAX_LOG_BYTES / 4 {
                kept.head_bytes += size;
                kept.head.push(line.clone());
            } else {
                kept.tail_bytes += size;
                kept.tail.push_back(line.clone());
                let budget = MAX_LOG_BYTES - kept.head_bytes;
                while kept.tail_bytes > budget {
                    match kept.tail.pop_front() {
                        Some(old) => {
                            kept.tail_bytes -= old.len() + 1;
                            kept.dropped += 1;
                        }
                        None => break,
                    }
                }
            }
            // Under the same lock: the file's lines are in the log's order.
            if let Some(live) = &mut kept.live {
                live.line(&line);
            }
        }
        self.last.send_replace(Some(line));
    }
}

/// The line cut to at most `max` bytes (on a character boundary), marked when cut.
fn cut(mut line: String, max: usize) -> String {
    if line.len() <= max {
        return line;
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line.truncate(end);
    line.push_str(CUT_MARK);
    line
}

/// Reads a worker's pipe to its end and hands each line to `sink` as it arrives: without the
/// newline (and a trailing `\r`), invalid UTF-8 replaced, a line longer than `max_line` bytes
/// handed over at that length and the rest of it skipped. A read error ends the stream like an
/// end of file: the worker's output is not worth failing the job over.
pub async fn pump_lines<R>(mut reader: R, stream: Stream, sink: &dyn LogSink, max_line: usize)
where
    R: AsyncRead + Unpin,
{
    let mut buf = vec![0u8; 8 * 1024];
    let mut line: Vec<u8> = Vec::new();
    // True while skipping the rest of a line already handed over cut.
    let mut skipping = false;
    let emit = |bytes: &[u8]| {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        sink.line(stream, &String::from_utf8_lossy(bytes));
    };
    loop {
        let n = match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for chunk in buf[..n].split_inclusive(|b| *b == b'\n') {
            let (body, ends) = match chunk.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (chunk, false),
            };
            if !skipping {
                let room = max_line.saturating_sub(line.len());
                line.extend_from_slice(&body[..body.len().min(room)]);
                if body.len() > room || (!ends && line.len() >= max_line) {
                    emit(&line);
                    line.clear();
                    skipping = !ends;
                } else if ends {
                    emit(&line);
                    line.clear();
                }
            } else if ends {
                skipping = false;
            }
        }
    }
    if !line.is_empty() {
        emit(&line);
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
