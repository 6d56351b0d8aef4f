//! What both forges' HTTP clients share: how a name goes into a URL, how a forge's error text
//! becomes one short line, how long a rate limit asks to wait, and how retries back off.

use std::time::Duration;

use http::HeaderMap;
use http::header::RETRY_AFTER;

/// `text` percent-encoded for one path segment or a query value: everything but RFC 3986's
/// unreserved characters, so `group/sub/project` becomes `group%2Fsub%2Fproject` (as GitLab
/// wants ids and file paths) and a branch name cannot add a path segment.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A forge's error text on one line (its lines joined), cut to `max` characters; "no message"
/// when there is none.
pub fn message_line(text: &str, max: usize) -> String {
    let text = crate::text::one_line(text);
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None if text.is_empty() => "no message".to_owned(),
        None => text,
    }
}

/// `Retry-After` in seconds, when the answer has a readable one.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    header_u64(headers, RETRY_AFTER.as_str()).map(Duration::from_secs)
}

/// An integer header, when it is there and readable.
pub fn header_u64(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// `base` doubled `times` times, without overflowing.
pub fn backoff(base: Duration, times: u32) -> Duration {
    base.saturating_mul(2u32.saturating_pow(times.min(16)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_for_any_forge() {
        assert_eq!(encode("group/sub/project"), "group%2Fsub%2Fproject");
        assert_eq!(encode("a b+é.toml"), "a%20b%2B%C3%A9.toml");
        assert_eq!(encode("plain-name_1.0~x"), "plain-name_1.0~x");
        assert_eq!(encode("../x?y#z"), "..%2Fx%3Fy%23z");
    }

    #[test]
    fn messages_are_one_short_line() {
        assert_eq!(message_line("a\nb", 10), "a; b");
        assert_eq!(
            message_line(&"x".repeat(12), 10),
            format!("{}…", "x".repeat(10))
        );
        assert_eq!(message_line("  \n", 10), "no message");
        // Cut on a character, not a byte.
        assert_eq!(message_line("ééé", 2), "éé…");
    }

    #[test]
    fn retry_after_and_backoff() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", " 7 ".parse().expect("a header value"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert("retry-after", "soon".parse().expect("a header value"));
        assert_eq!(retry_after(&headers), None);
        assert_eq!(backoff(Duration::from_secs(1), 3), Duration::from_secs(8));
        assert_eq!(
            backoff(Duration::from_secs(1), 1000),
            Duration::from_secs(65536)
        );
    }
}
