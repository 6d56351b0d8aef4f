use super::*;

fn redact(text: &str) -> String {
    Redactor::new(["s3cr3t-value-42", "abc"]).redact(text)
}

#[test]
fn configured_secret_values_are_replaced_everywhere() {
    assert_eq!(
        redact("key s3cr3t-value-42 and again s3cr3t-value-42!"),
        "key *** and again ***!"
    );
}

#[test]
fn short_configured_values_are_not_replaced() {
    // "abc" is too short to be a secret: redacting it would garble ordinary words.
    assert_eq!(redact("abcdef cabbage abc"), "abcdef cabbage abc");
}

#[test]
fn a_secret_containing_another_is_replaced_whole() {
    let r = Redactor::new(["password1", "password1-longer"]);
    assert_eq!(r.redact("x password1-longer y"), "x *** y");
}

#[test]
fn token_shapes_are_replaced() {
    let cases = [
        (
            "token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 ok",
            "token *** ok",
        ),
        ("gho_AbCdEfGhIjKlMnOpQrStUv12", "***"),
        (
            "ghs_AbCdEfGhIjKlMnOpQrStUv12 ghu_AbCdEfGhIjKlMnOpQrStUv12",
            "*** ***",
        ),
        ("ghr_AbCdEfGhIjKlMnOpQrStUv12.", "***."),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "***"),
        ("glpat-aBcDeFgHiJkLmNoPqRsT", "***"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
            "jwt *** end",
        ),
        ("AKIAIOSFODNN7EXAMPLE", "***"),
        ("key=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "key=***"),
        ("sk-proj-AbCdEfGhIjKlMnOpQrStUvWx", "***"),
    ];
    for (input, want) in cases {
        assert_eq!(Redactor::default().redact(input), want, "input: {input}");
    }
}

#[test]
fn named_values_keep_their_name() {
    let cases = [
        (
            "curl -H 'Authorization: token abc123' https://x",
            "curl -H 'Authorization: ***",
        ),
        ("Bearer AbCdEfGhIjKlMnOpQrStUv0123", "Bearer ***"),
        (
            "login password=hunter2 user=me",
            "login password=*** user=me",
        ),
        (
            "GET /api?access_token=0123456789abcdef0123&x=1",
            "GET /api?access_token=***&x=1",
        ),
        ("secret = dGhpcyBpcyBhIHNlY3JldA==", "secret = ***"),
        (
            r#"{"api_key": "abcdefgh12345678"}"#,
            r#"{"api_key": "***"}"#,
        ),
    ];
    for (input, want) in cases {
        assert_eq!(Redactor::default().redact(input), want, "input: {input}");
    }
}

#[test]
fn ordinary_text_is_left_alone() {
    // A commit sha, a checksum, prose with the trigger words, short values: none is a secret.
    let lines = [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "the bearer of bad news asked for a token",
        "set token=abc to retry",
        "Missing secret: configure it",
        "passwords are hashed with argon2",
        "ghp_short is not a token",
        "task-id sk-12",
        "eyJ alone is just text",
    ];
    for line in lines {
        assert_eq!(Redactor::default().redact(line), line);
    }
}

#[test]
fn debug_never_shows_the_secrets() {
    let r = Redactor::new(["topsecretvalue"]);
    assert_eq!(format!("{r:?}"), "Redactor(1 secrets)");
}

#[test]
fn the_log_stores_lines_redacted() {
    let log = JobLog::new(Redactor::new(["hunter2hunter2"]));
    log.line(Stream::Stdout, "pass is hunter2hunter2");
    log.line(Stream::Stderr, "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789");
    assert_eq!(log.tail(10), ["pass is ***", "***"]);
    assert_eq!(log.text(), "pass is ***\n***\n");
    assert!(!log.text().contains("hunter2"));
}

#[test]
fn long_lines_are_cut_and_marked() {
    let log = JobLog::new(Redactor::default());
    log.line(Stream::Stdout, &"é".repeat(MAX_LINE_BYTES));
    let line = &log.tail(1)[0];
    assert!(
        line.len() <= MAX_LINE_BYTES + CUT_MARK.len(),
        "{}",
        line.len()
    );
    assert!(line.ends_with(CUT_MARK));
}

#[test]
fn the_log_keeps_head_and_tail_within_its_cap() {
    let log = JobLog::new(Redactor::default());
    let filler = "x".repeat(1000);
    for i in 0..3000 {
        log.line(Stream::Stdout, &format!("{i:05} {filler}"));
    }
    let text = log.text();
    assert!(text.len() <= MAX_LOG_BYTES + 64, "{}", text.len());
    assert!(text.starts_with("00000 "), "the beginning is kept");
    assert_eq!(log.tail(2)[1], format!("02999 {filler}"), "the end is kept");
    assert!(log.dropped_lines() > 0);
    assert_eq!(log.total_lines(), 3000);
    assert!(text.contains(&format!("[… {} lines dropped …]", log.dropped_lines())));
    assert!(
        !text.contains(&format!("\n01000 {filler}\n")),
        "the middle is dropped"
    );
}

#[test]
fn tail_reaches_into_the_head_when_the_tail_is_short() {
    let log = JobLog::new(Redactor::default());
    for line in ["a", "b", "c"] {
        log.line(Stream::Stdout, line);
    }
    assert_eq!(log.tail(2), ["b", "c"]);
    assert_eq!(log.tail(9), ["a", "b", "c"]);
}

#[test]
fn watchers_see_the_last_line() {
    let log = JobLog::new(Redactor::new(["watched-secret"]));
    let rx = log.subscribe();
    assert_eq!(*rx.borrow(), None);
    log.line(Stream::Stdout, "first");
    log.line(Stream::Stdout, "now watched-secret");
    assert_eq!(rx.borrow().as_deref(), Some("now ***"));
}

/// Collects what a pump hands over.
#[derive(Default)]
struct Lines(Mutex<Vec<String>>);

impl LogSink for Lines {
    fn line(&self, _stream: Stream, line: &str) {
        self.0.lock().unwrap().push(line.to_owned());
    }
}

async fn pump(input: &[u8], max: usize) -> Vec<String> {
    let lines = Lines::default();
    pump_lines(input, Stream::Stdout, &lines, max).await;
    lines.0.into_inner().unwrap()
}

#[tokio::test]
async fn pump_cuts_lines_and_replaces_bad_utf8() {
    assert_eq!(pump(b"a\r\nb\n\nlast", 100).await, ["a", "b", "", "last"]);
    assert_eq!(pump(b"ok \xff\xfe\n", 100).await, ["ok \u{fffd}\u{fffd}"]);
    assert_eq!(pump(b"0123456789\nxy\n", 4).await, ["0123", "xy"]);
    assert_eq!(pump(b"0123\n4567", 4).await, ["0123", "4567"]);
}

#[tokio::test]
async fn pump_skips_the_rest_of_a_long_line_across_reads() {
    let mut input = vec![b'a'; 20 * 1024];
    input.extend_from_slice(b"\nnext\n");
    let got = pump(&input, 100).await;
    assert_eq!(got, ["a".repeat(100), "next".to_owned()]);
}

#[test]
fn a_live_file_gets_each_redacted_line_as_it_comes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("logs").join("7-1.log");
    let log = JobLog::with_file(Redactor::new(["s3cr3t-value-42"]), &path).expect("the file");
    assert!(log.has_file());
    log.line(Stream::Stdout, "first");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "first\n");
    log.line(Stream::Stderr, "token s3cr3t-value-42 here");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "first\ntoken *** here\n"
    );
    log.finish_file();
    log.finish_file();
    log.line(Stream::Stdout, "after the end");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "first\ntoken *** here\n",
        "nothing is written once finished"
    );
    assert_eq!(log.total_lines(), 3);
    assert!(!JobLog::new(Redactor::default()).has_file());
}

#[test]
fn a_live_file_past_the_cap_stops_then_ends_with_the_last_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("1-1.log");
    let log = JobLog::with_file(Redactor::default(), &path).expect("the file");
    let line = |n: usize| format!("{n:06} {}", "x".repeat(1000));
    let count = 3000; // ~3 MiB: past the live file's cap and the log's own.
    let mut cut_at = None;
    for n in 0..count {
        log.line(Stream::Stdout, &line(n));
        if cut_at.is_none() {
            let text = std::fs::read_to_string(&path).expect("read");
            if text.ends_with(&format!("{LIVE_CUT_MARK}\n")) {
                cut_at = Some(n);
            }
        }
    }
    let cut_at = cut_at.expect("the live file was cut");
    let before_finish = std::fs::read_to_string(&path).expect("read");
    assert!(before_finish.len() <= MAX_LOG_BYTES + LIVE_CUT_MARK.len() + 1);
    log.finish_file();
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.starts_with(&before_finish), "the file only grows");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], line(0));
    assert_eq!(lines[cut_at], LIVE_CUT_MARK);
    assert_eq!(lines.last().copied(), Some(line(count - 1).as_str()));
    let dropped = lines
        .iter()
        .find(|l| l.starts_with("[… ") && l.ends_with(" lines dropped …]"))
        .expect("a line counts the dropped ones");
    let n: usize = dropped
        .trim_start_matches("[… ")
        .trim_end_matches(" lines dropped …]")
        .parse()
        .expect("a count");
    // Every line is either in the file or counted as dropped.
    let written = lines.len() - 2;
    assert_eq!(written + n, count, "{dropped}");
    assert!(text.len() < 2 * MAX_LOG_BYTES, "{}", text.len());
}
