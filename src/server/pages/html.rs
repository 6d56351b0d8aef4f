//! HTML for the pages, written as strings: [`escape`] for everything that comes from a forge, a
//! worker or the store, [`Page`] for the document around it (the viewport, the stylesheet and
//! the script inline, each allowed by its hash in the Content-Security-Policy, which allows
//! nothing else).
//!
//! Nothing is put in a page unescaped but the literal markup written here. Text from outside
//! goes through [`escape`] (element text and quoted attribute values alike); an address from
//! outside goes through [`href`] first, which keeps only `http(s)` links.

use std::fmt::Write as _;
use std::sync::LazyLock;

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// The stylesheet, inline in every page.
const STYLE: &str = include_str!("page.css");

/// The script, inline in the pages that need it (the job page's live log and phases).
const SCRIPT: &str = include_str!("page.js");

/// `'sha256-…'` of a source, as a CSP source expression.
fn csp_hash(source: &str) -> String {
    let digest = Sha256::digest(source.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The policy every page is sent with: the page's own inline style and script by their hashes,
/// the event stream on the bot's own origin, no frames, no plugins, no other origin, no
/// `<base>`, forms only back to the bot.
pub static CSP: LazyLock<String> = LazyLock::new(|| {
    format!(
        "default-src 'none'; script-src {}; style-src {}; connect-src 'self'; img-src 'self'; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        csp_hash(SCRIPT),
        csp_hash(STYLE)
    )
});

/// `text` with the characters HTML gives a meaning to (`& < > " '`) as entities, and control
/// characters other than tab and newline as U+FFFD: safe as element text and as a quoted
/// attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    escape_into(&mut out, text);
    out
}

pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// An address from outside (a forge's pull request URL) fit for an `href`: only `http://` and
/// `https://` addresses are links (a `javascript:` or `data:` one is not), escaped.
pub fn href(url: &str) -> Option<String> {
    let lower = url.trim_start().get(..8).unwrap_or("").to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then(|| escape(url))
}

/// `<a href="…">text</a>` to a forge, opened without a referrer; plain text when `url` is not
/// an http(s) address.
pub fn forge_link(url: &str, text: &str) -> String {
    match href(url) {
        Some(url) => format!(
            "<a href=\"{url}\" rel=\"noreferrer noopener\">{}</a>",
            escape(text)
        ),
        None => escape(text),
    }
}

/// A line of a worker's log as shown: terminal escape sequences (colours, cursor moves) taken
/// out, other control characters but tab as U+FFFD. Not escaped: that is the caller's.
pub fn log_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                // CSI: parameters and intermediates, then one final byte in @..~.
                Some('[') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ST (ESC \).
                Some(']') => {
                    chars.next();
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            },
            '\t' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A whole page: the document, its head (title, viewport, the inline stylesheet), `body`, and
/// the script when `script` is set.
pub fn page(title: &str, body: &str, script: bool) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + SCRIPT.len() + 512);
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
    let _ = writeln!(out, "<title>{} · forgeward</title>", escape(title));
    let _ = writeln!(out, "<style>{STYLE}</style>");
    out.push_str("</head>\n<body>\n");
    out.push_str(body);
    if script {
        let _ = writeln!(out, "<script>{SCRIPT}</script>");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// `2025-06-15 15:07:40 UTC`.
pub fn time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map_or_else(
        || "—".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// `42 s`, `3 min 5 s`, `1 h 2 min`.
pub fn duration(ms: i64) -> String {
    let secs = ms.max(0) / 1000;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s} s"),
        (0, m) => format!("{m} min {s} s"),
        (h, m) => format!("{h} h {m} min"),
    }
}

/// A `<time>` element for `ms`, machine-readable in its `datetime`.
pub fn time_element(ms: i64) -> String {
    let iso = chrono::DateTime::from_timestamp_millis(ms).map_or_else(String::new, |t| {
        t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    });
    format!(
        "<time datetime=\"{}\">{}</time>",
        escape(&iso),
        escape(&time(ms))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_html_reads_is_escaped() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(escape("a\u{0}b\u{7f}c\td"), "a\u{FFFD}b\u{FFFD}c\td");
        assert_eq!(escape("ünïcödé ✓"), "ünïcödé ✓");
        // An attribute value cannot be closed from inside.
        let attr = format!("<a title=\"{}\">", escape("\" onmouseover=\"alert(1)"));
        assert_eq!(attr, "<a title=\"&quot; onmouseover=&quot;alert(1)\">");
    }

    #[test]
    fn only_http_addresses_are_links() {
        assert_eq!(
            href("https://github.com/a/b/pull/1?x=1&y=\"2\"").as_deref(),
            Some("https://github.com/a/b/pull/1?x=1&amp;y=&quot;2&quot;")
        );
        assert!(href("HTTP://example.com").is_some());
        for bad in [
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "data:text/html,<script>",
            "//evil.example",
            "vbscript:x",
            "",
        ] {
            assert_eq!(href(bad), None, "{bad}");
        }
        assert_eq!(
            forge_link("javascript:alert(1)", "<b>#1</b>"),
            "&lt;b&gt;#1&lt;/b&gt;"
        );
        assert_eq!(
            forge_link("https://x.example/1", "<b>#1</b>"),
            "<a href=\"https://x.example/1\" rel=\"noreferrer noopener\">&lt;b&gt;#1&lt;/b&gt;</a>"
        );
    }

    #[test]
    fn log_lines_lose_terminal_escapes_and_controls() {
        assert_eq!(log_line("\u{1b}[31mFAILED\u{1b}[0m test"), "FAILED test");
        assert_eq!(log_line("\u{1b}]0;title\u{7}rest"), "rest");
        assert_eq!(log_line("\u{1b}]8;;http://x\u{1b}\\link"), "link");
        assert_eq!(log_line("a\rb\u{8}c\td"), "a\u{FFFD}b\u{FFFD}c\td");
        assert_eq!(log_line("<script>"), "<script>", "escaping is the caller's");
        assert_eq!(log_line("trailing \u{1b}"), "trailing ");
    }

    #[test]
    fn the_page_allows_its_own_style_and_script_only() {
        let html = page("Job #1 <x>", "<main></main>", true);
        assert!(html.contains("<title>Job #1 &lt;x&gt; · forgeward</title>"));
        assert!(html.contains("name=\"viewport\" content=\"width=device-width"));
        assert!(CSP.contains(&csp_hash(SCRIPT)) && CSP.contains(&csp_hash(STYLE)));
        assert!(!CSP.contains("unsafe-inline") && !CSP.contains("unsafe-eval"));
        assert!(CSP.starts_with("default-src 'none';"));
        assert!(!page("x", "", false).contains("<script>"));
        // The hash is of exactly what the page carries between the tags.
        let script = html
            .split("<script>")
            .nth(1)
            .and_then(|s| s.split("</script>").next())
            .expect("the script");
        assert_eq!(csp_hash(script), csp_hash(SCRIPT));
        assert!(!SCRIPT.contains("</script"), "the script cannot end early");
        assert!(!STYLE.contains("</style"), "the style cannot end early");
    }

    #[test]
    fn times_and_durations() {
        assert_eq!(time(1_750_000_060_000), "2025-06-15 15:07:40 UTC");
        assert_eq!(duration(42_999), "42 s");
        assert_eq!(duration(185_000), "3 min 5 s");
        assert_eq!(duration(3_720_000), "1 h 2 min");
        assert_eq!(duration(-5), "0 s");
        assert!(time_element(1_750_000_060_000).contains("datetime=\"2025-06-15T15:07:40Z\""));
    }
}
