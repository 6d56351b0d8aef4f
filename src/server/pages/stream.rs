//! A job's log as it grows, as Server-Sent Events (`text/event-stream`):
//!
//! - `log`: one line of the log (JSON string), with the id `<attempt>:<byte after the line>`;
//!   a client that reconnects sends the last id it saw (`Last-Event-ID`, or `from` in the
//!   address the first time) and the stream goes on from there;
//! - `attempt`: a new attempt began (its number): its log follows from its start;
//! - `phases`: the job's state, headline and the latest run's phases with their times (JSON),
//!   whenever they change;
//! - `end`: the job is final (its state); the stream ends.
//!
//! The log is the file the runner writes line by line (`logs/<job>-<attempt>.log`, append-only),
//! read from where the stream is: every 200 ms while lines come, backing off to twice a second
//! when none do; the job's rows are read once a second. A comment every 15 s keeps proxies from
//! closing a quiet stream. The stream ends with the job, when the client goes, when the link it
//! was opened with expires, or when the server shuts down.

use std::collections::HashMap;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::channel::{Channel, Sender};

use super::job::{headline, phase_times};
use super::{AppState, authorize, forbidden, html, job_id, refusal};
use crate::links::Scope;
use crate::store::{Job, JobId, Run, now_ms};

/// How often the job's rows are read: phases change in seconds, not milliseconds.
const STATE_EVERY: Duration = Duration::from_secs(1);

/// How soon the file is looked at again after it grew, and at most how long it waits when it
/// did not (the wait doubles in between): a line shows within half a second, at the cost of
/// two reads of a file's end a second per stream while the worker is quiet.
const FAST: Duration = Duration::from_millis(200);
const SLOW: Duration = Duration::from_millis(500);

/// A comment sent after this much silence, so that a proxy does not close the stream.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// The most of the file read at once: a worker printing fast is sent in pieces of this.
const CHUNK: u64 = 256 * 1024;

/// How long a browser waits before reconnecting a stream that broke, in milliseconds.
const RETRY_MS: u64 = 3000;

/// Where a stream is in a job's log: which attempt's file, and the byte after the last line
/// sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cursor {
    pub attempt: u32,
    pub offset: u64,
}

impl Cursor {
    /// `3:1024`, as event ids carry it.
    pub fn parse(text: &str) -> Option<Cursor> {
        let (attempt, offset) = text.trim().split_once(':')?;
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 19 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(attempt) || !digits(offset) {
            return None;
        }
        Some(Cursor {
            attempt: attempt.parse().ok()?,
            offset: offset.parse().ok()?,
        })
    }
}

pub(super) async fn events(
    State(state): State<Arc<AppState>>,
    Path(raw): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let Some(id) = job_id(&raw) else {
        return refusal(
            StatusCode::NOT_FOUND,
            "No such job",
            "There is no such job.",
        );
    };
    let expires_at = match authorize(&state.pages, Scope::Job(id), &query) {
        Ok(expires_at) => expires_at,
        Err(why) => return forbidden(&why),
    };
    match state.store.job(id).await {
        Ok(Some(_)) => {}
        Ok(None) => {
            return refusal(
                StatusCode::NOT_FOUND,
                "No such job",
                &format!("The bot has no job {id}."),
            );
        }
        Err(err) => return super::unavailable(&err),
    }
    let Ok(permit) = state.pages.streams.clone().try_acquire_owned() else {
        let mut busy = refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "Busy",
            "Too many logs are being followed right now; this page tries again shortly.",
        );
        busy.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return busy;
    };
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(Cursor::parse)
        .or_else(|| query.get("from").and_then(|f| Cursor::parse(f)));
    let (sender, body) = Channel::<Bytes, std::convert::Infallible>::new(32);
    let follow = Follow {
        state: state.clone(),
        id,
        expires_at,
        out: Out {
            sender,
            last: Instant::now(),
        },
    };
    tokio::spawn(async move {
        let _permit = permit;
        follow.run(resume).await;
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream; charset=utf-8"),
            // nginx and its kind would hold the events back otherwise.
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::new(body),
    )
        .into_response()
}

/// The client went away.
struct Gone;

/// The stream's sending end.
struct Out {
    sender: Sender<Bytes, std::convert::Infallible>,
    last: Instant,
}

impl Out {
    async fn send(&mut self, text: String) -> Result<(), Gone> {
        self.last = Instant::now();
        self.sender
            .send_data(Bytes::from(text))
            .await
            .map_err(|_| Gone)
    }
}

/// One event: `event:`, `id:` when given, and `data:` (one line: every value sent is JSON or a
/// number, which has no newline).
pub(super) fn event(name: &str, id: Option<&str>, data: &str) -> String {
    let mut s = format!("event: {name}\n");
    if let Some(id) = id {
        s.push_str(&format!("id: {id}\n"));
    }
    for line in data.split('\n') {
        s.push_str("data: ");
        s.push_str(line.trim_end_matches('\r'));
        s.push('\n');
    }
    s.push('\n');
    s
}

/// The `phases` event's data: the state, the headline, the latest run's phases, the server's
/// clock (for the page's running timer; left out with `now` `None`, to tell whether anything
/// else changed).
pub(super) fn phases_json(job: &Job, run: Option<&Run>, now: Option<i64>) -> String {
    let (headline, _) = headline(job, run);
    let phases: Vec<serde_json::Value> = run
        .map(|run| phase_times(job, run))
        .unwrap_or_default()
        .into_iter()
        .map(|(phase, started, ended)| {
            serde_json::json!({ "phase": phase, "started_at_ms": started, "ended_at_ms": ended })
        })
        .collect();
    let mut data = serde_json::json!({
        "state": job.state.as_str(),
        "phase": job.phase,
        "attempt": job.attempts,
        "headline": headline,
        "phases": phases,
    });
    if let Some(now) = now {
        data["now_ms"] = now.into();
    }
    data.to_string()
}

/// Lines read from a log file, each with the byte after it.
pub(super) fn read_lines(path: &FsPath, from: u64, max: u64) -> Vec<(String, u64)> {
    use std::io::{Read as _, Seek as _};
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    if file.seek(std::io::SeekFrom::Start(from)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(max).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let mut lines = Vec::new();
    let mut at = 0;
    while let Some(newline) = bytes[at..].iter().position(|b| *b == b'\n') {
        let line = &bytes[at..at + newline];
        at += newline + 1;
        lines.push((
            html::log_line(&String::from_utf8_lossy(line)),
            from + at as u64,
        ));
    }
    // A chunk full of one endless line (never written by the job log, which cuts lines) is
    // passed as a line, so the stream does not stall on it.
    if lines.is_empty() && bytes.len() as u64 == max {
        lines.push((html::log_line(&String::from_utf8_lossy(&bytes)), from + max));
    }
    lines
}

/// Whether `offset` is where a line of the file at `path` begins (the start, or just after a
/// newline) within the file: a cursor from a client is only taken at a line's start.
fn at_line_start(path: &FsPath, offset: u64) -> bool {
    use std::io::{Read as _, Seek as _};
    if offset == 0 {
        return true;
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut byte = [0u8; 1];
    file.seek(std::io::SeekFrom::Start(offset - 1)).is_ok()
        && file.read_exact(&mut byte).is_ok()
        && byte[0] == b'\n'
}

struct Follow {
    state: Arc<AppState>,
    id: JobId,
    /// When the link the stream was opened with expires: the stream ends then (a client that
    /// reconnects is refused).
    expires_at: i64,
    out: Out,
}

impl Follow {
    fn path(&self, attempt: u32) -> PathBuf {
        crate::jobs::run::log_path(&self.state.pages.data_dir, self.id, attempt)
    }

    async fn run(mut self, resume: Option<Cursor>) {
        let shutdown = self.state.pages.shutdown.clone();
        tokio::select! {
            _ = self.follow(resume) => {}
            () = shutdown.cancelled() => {}
        }
    }

    async fn follow(&mut self, resume: Option<Cursor>) -> Result<(), Gone> {
        self.out.send(format!("retry: {RETRY_MS}\n\n")).await?;
        let mut cursor: Option<Cursor> = None;
        let mut resume = resume;
        let mut shown_phases = String::new();
        let mut read_at: Option<Instant> = None;
        let mut wait = FAST;
        loop {
            if crate::links::now_secs() >= self.expires_at {
                return Ok(());
            }
            let mut ended = None;
            if read_at.is_none_or(|at| at.elapsed() >= STATE_EVERY) {
                read_at = Some(Instant::now());
                match self.read_job().await {
                    Ok(Some((job, run))) => {
                        if job.attempts > 0 && cursor.map(|c| c.attempt) != Some(job.attempts) {
                            cursor = Some(self.start(job.attempts, resume.take(), cursor).await?);
                        }
                        let phases = phases_json(&job, run.as_ref(), None);
                        if phases != shown_phases {
                            let data = phases_json(&job, run.as_ref(), Some(now_ms()));
                            self.out.send(event("phases", None, &data)).await?;
                            shown_phases = phases;
                        }
                        if job.state.is_final() {
                            ended = Some(job.state);
                        }
                    }
                    // The job is gone (it cannot be, but a stream should not spin on it).
                    Ok(None) => return Ok(()),
                    Err(err) => {
                        tracing::warn!(error = %err, job = %self.id, "a log stream could not read its job")
                    }
                }
            }
            let sent = match cursor.as_mut() {
                Some(cursor) => self.send_lines(cursor).await?,
                None => 0,
            };
            if let Some(state) = ended {
                // The runner finished the file before it recorded the outcome: what is left
                // is all there is.
                if let Some(cursor) = cursor.as_mut() {
                    while self.send_lines(cursor).await? > 0 {}
                }
                let data = serde_json::json!({ "state": state.as_str() }).to_string();
                self.out.send(event("end", None, &data)).await?;
                return Ok(());
            }
            if self.out.last.elapsed() >= KEEPALIVE {
                self.out.send(": keepalive\n\n".to_owned()).await?;
            }
            wait = if sent > 0 { FAST } else { (wait * 2).min(SLOW) };
            tokio::time::sleep(wait).await;
        }
    }

    async fn read_job(&self) -> Result<Option<(Job, Option<Run>)>, crate::store::StoreError> {
        let store = &self.state.store;
        let Some(job) = store.job(self.id).await? else {
            return Ok(None);
        };
        let run = store.runs(self.id).await?.pop();
        Ok(Some((job, run)))
    }

    /// Where the stream starts in attempt `attempt`'s log: where the client says it was, when
    /// that is this attempt and a line's start; else the beginning (said with an `attempt`
    /// event when the client had been following another attempt).
    async fn start(
        &mut self,
        attempt: u32,
        resume: Option<Cursor>,
        following: Option<Cursor>,
    ) -> Result<Cursor, Gone> {
        if let Some(resume) = resume.filter(|r| r.attempt == attempt) {
            let path = self.path(attempt);
            let offset = resume.offset;
            let fits = tokio::task::spawn_blocking(move || at_line_start(&path, offset))
                .await
                .unwrap_or(false);
            if fits {
                return Ok(resume);
            }
        }
        let switched = following.is_some() || resume.is_some_and(|r| r.attempt != attempt);
        if switched {
            self.out
                .send(event("attempt", None, &attempt.to_string()))
                .await?;
        }
        Ok(Cursor { attempt, offset: 0 })
    }

    /// Sends the whole lines written since `cursor`, moving it; how many.
    async fn send_lines(&mut self, cursor: &mut Cursor) -> Result<usize, Gone> {
        let path = self.path(cursor.attempt);
        let from = cursor.offset;
        let lines = tokio::task::spawn_blocking(move || read_lines(&path, from, CHUNK))
            .await
            .unwrap_or_default();
        let count = lines.len();
        let mut text = String::new();
        for (line, end) in lines {
            let data = serde_json::Value::String(line).to_string();
            let id = format!("{}:{end}", cursor.attempt);
            text.push_str(&event("log", Some(&id), &data));
            cursor.offset = end;
        }
        if !text.is_empty() {
            self.out.send(text).await?;
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_attempt_and_offset() {
        assert_eq!(
            Cursor::parse("2:1024"),
            Some(Cursor {
                attempt: 2,
                offset: 1024
            })
        );
        for bad in ["", "2", ":5", "2:", "a:1", "2:-1", "2:1:3", "99999999999:1"] {
            assert_eq!(Cursor::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_event_is_one_block_of_fields() {
        assert_eq!(
            event("log", Some("1:6"), "\"hello\""),
            "event: log\nid: 1:6\ndata: \"hello\"\n\n"
        );
        assert_eq!(event("end", None, "{}"), "event: end\ndata: {}\n\n");
        // A value with a newline cannot end the event or forge a field.
        assert_eq!(
            event("x", None, "a\nevent: end\r"),
            "event: x\ndata: a\ndata: event: end\n\n"
        );
        // Log lines go as JSON: the carriage return and the quote are escaped.
        let data = serde_json::Value::String("a\r\"b\"".to_owned()).to_string();
        assert_eq!(data, "\"a\\r\\\"b\\\"\"");
    }

    #[test]
    fn lines_are_read_whole_from_where_the_stream_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("1-1.log");
        std::fs::write(&path, "one\ntwo\nthr").expect("write");
        assert_eq!(
            read_lines(&path, 0, CHUNK),
            [("one".to_owned(), 4), ("two".to_owned(), 8)]
        );
        assert_eq!(read_lines(&path, 8, CHUNK), []);
        std::fs::write(&path, "one\ntwo\nthree \u{1b}[1m<b>\n").expect("write");
        assert_eq!(
            read_lines(&path, 8, CHUNK),
            [("three <b>".to_owned(), 22)],
            "escapes dropped; HTML is the page's to escape"
        );
        assert!(at_line_start(&path, 0) && at_line_start(&path, 4) && at_line_start(&path, 8));
        assert!(!at_line_start(&path, 5) && !at_line_start(&path, 500));
        assert_eq!(read_lines(&dir.path().join("none.log"), 0, CHUNK), []);
        // One endless line is passed in pieces rather than stalling the stream.
        std::fs::write(&path, "x".repeat(10)).expect("write");
        assert_eq!(read_lines(&path, 0, 4), [("xxxx".to_owned(), 4)]);
    }
}
