//! What the forges' webhooks have in common: the secret a delivery is checked against, the
//! outcome of parsing one delivery, and errors a sender can act on.
//!
//! Each forge's `webhook` module verifies and parses its own deliveries; the server calls them
//! and sees only [`Parsed`] and [`WebhookError`]. Nothing here logs or echoes a secret or a
//! payload: a refused delivery is described by a short reason and, for a bad payload, the JSON
//! path that failed.

use std::fmt;

use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use subtle::{Choice, ConstantTimeEq};

use super::event::Event;

/// A webhook secret (GitHub, Forgejo) or token (GitLab). `Debug` and `Display` print `***`, never
/// the value, so a secret can sit in a config struct that is logged.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value, for the one place that needs it: the comparison or the HMAC.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Why a delivery was refused. [`status`](WebhookError::status) gives the HTTP status; `Display`
/// is the short reason sent back to the forge and logged (never a secret, never the body).
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// 401: missing or wrong signature or token.
    #[error("{reason}")]
    Unauthorized { reason: &'static str },
    /// 400: a header the forge always sends is missing or bad (event name, delivery id).
    #[error("{header}: {reason}")]
    BadHeader {
        header: &'static str,
        reason: String,
    },
    /// 400: the body is not the JSON this event has; `path` is the JSON path that failed
    /// (`issue.number`), or `.` when the body is not JSON at all.
    #[error("malformed payload at {path}: {message}")]
    Malformed { path: String, message: String },
    /// 415: the body is not JSON at all but another encoding the forge can be set to send
    /// (GitHub's default for a new webhook is a form); `hint` says what to change.
    #[error("the delivery's content type is {content_type}: {hint}")]
    WrongContentType {
        content_type: String,
        hint: &'static str,
    },
}

impl WebhookError {
    /// The HTTP status to answer with.
    pub fn status(&self) -> u16 {
        match self {
            WebhookError::Unauthorized { .. } => 401,
            WebhookError::BadHeader { .. } | WebhookError::Malformed { .. } => 400,
            WebhookError::WrongContentType { .. } => 415,
        }
    }

    /// A fixed label for metrics: `unauthorized`, `bad_header`, `malformed` or `content_type`.
    pub fn reason_label(&self) -> &'static str {
        match self {
            WebhookError::Unauthorized { .. } => "unauthorized",
            WebhookError::BadHeader { .. } => "bad_header",
            WebhookError::Malformed { .. } => "malformed",
            WebhookError::WrongContentType { .. } => "content_type",
        }
    }
}

/// The outcome of parsing a delivery: an event the bot acts on, or one it acknowledges and
/// ignores, with a short label for metrics (`issues.opened`, `push`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    Event(Event),
    Ignored(String),
}

/// True when `given` equals one of `secrets`. Every secret is compared, with no early exit, and
/// the comparison is of SHA-256 digests so that neither the position of the first differing byte
/// nor the secrets' lengths show in the time taken.
pub fn matches_any(secrets: &[Secret], given: &[u8]) -> bool {
    let given = Sha256::digest(given);
    let mut found = Choice::from(0);
    for secret in secrets {
        let digest = Sha256::digest(secret.expose().as_bytes());
        found |= digest[..].ct_eq(&given[..]);
    }
    found.into()
}

/// True when `digest` is the HMAC-SHA256 of `body` under one of `secrets` (GitHub's, Forgejo's
/// and Gitea's signatures). Every secret is tried, each in constant time, with no early exit.
pub fn signed_by_any(secrets: &[Secret], digest: &[u8], body: &[u8]) -> bool {
    use hmac::{Hmac, Mac};
    let mut matched = false;
    for secret in secrets {
        // HMAC takes a key of any length; the error case cannot happen.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes()) else {
            continue;
        };
        mac.update(body);
        // `|`, not `||`: the remaining secrets are checked even after a match.
        matched |= mac.verify_slice(digest).is_ok();
    }
    matched
}

/// The longest label [`ignored`] keeps: labels come from headers and payloads, and a metric
/// label should stay short whatever a sender puts there.
const MAX_LABEL_LEN: usize = 64;

/// An ignored delivery, labelled `label` with anything but ASCII letters, digits, `_`, `.` and `-`
/// replaced by `_`, and cut to [`MAX_LABEL_LEN`].
pub(in crate::forge) fn ignored(label: &str) -> Parsed {
    let label = label
        .chars()
        .take(MAX_LABEL_LEN)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    Parsed::Ignored(label)
}

/// Deserializes the whole of `body` as `T`, naming the JSON path that failed. The path is
/// tracked only for a body that does not parse: a delivery that does pays for one plain parse.
pub(in crate::forge) fn from_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, WebhookError> {
    if let Ok(value) = serde_json::from_slice(body) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut de)
        .map_err(|err| malformed(full_path(err.path(), err.inner()), err.inner()))?;
    de.end().map_err(|err| malformed(".".to_owned(), &err))?;
    Ok(value)
}

/// A payload that lacks what its event needs, though serde had nothing to say (a key that is
/// required only for one kind of delivery).
pub(in crate::forge) fn missing(path: &str) -> WebhookError {
    WebhookError::Malformed {
        path: path.to_owned(),
        message: "missing field".to_owned(),
    }
}

/// The path of the value that failed. serde reports a missing field at the object that lacks
/// it, so the field's name is added (`pull_request.head` + `sha`); a body that ends inside an
/// object it could not name (`?`) is the whole body (`.`).
fn full_path(path: &serde_path_to_error::Path, err: &serde_json::Error) -> String {
    let path = match path.to_string() {
        unknown if unknown == "?" => ".".to_owned(),
        path => path,
    };
    let message = err.to_string();
    let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(field, _)| field)
    else {
        return path;
    };
    if path == "." {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

fn malformed(path: String, err: &serde_json::Error) -> WebhookError {
    WebhookError::Malformed {
        path,
        message: redact_strings(&err.to_string()),
    }
}

/// serde quotes the offending value in its messages (`invalid type: string "seven"`); that value
/// is part of the body, which must not be echoed or logged, so each quoted string becomes `"…"`.
fn redact_strings(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '"' {
            continue;
        }
        // Skip to the closing quote, honouring backslash escapes.
        let mut escaped = false;
        for c in chars.by_ref() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => break,
                _ => {}
            }
        }
        out.push_str("…\"");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_never_prints_its_value() {
        let secret = Secret::new("hunter2".to_owned());
        assert_eq!(format!("{secret:?}"), "***");
        assert_eq!(secret.to_string(), "***");
        assert_eq!(format!("{:?}", vec![secret.clone()]), "[***]");
        assert_eq!(secret.expose(), "hunter2");
    }

    #[test]
    fn matches_any_finds_any_of_the_secrets() {
        let secrets = [Secret::new("old".to_owned()), Secret::new("new".to_owned())];
        assert!(matches_any(&secrets, b"old"));
        assert!(matches_any(&secrets, b"new"));
        assert!(!matches_any(&secrets, b"ne"));
        assert!(!matches_any(&secrets, b"newer"));
        assert!(!matches_any(&secrets, b""));
        assert!(!matches_any(&[], b"old"));
    }

    #[test]
    fn errors_have_a_status_and_a_label() {
        let unauthorized = WebhookError::Unauthorized {
            reason: "signature does not match",
        };
        assert_eq!(unauthorized.status(), 401);
        assert_eq!(unauthorized.reason_label(), "unauthorized");
        assert_eq!(unauthorized.to_string(), "signature does not match");

        let bad_header = WebhookError::BadHeader {
            header: "X-GitHub-Event",
            reason: "is empty".to_owned(),
        };
        assert_eq!(bad_header.status(), 400);
        assert_eq!(bad_header.reason_label(), "bad_header");
        assert_eq!(bad_header.to_string(), "X-GitHub-Event: is empty");

        let malformed = missing("issue");
        assert_eq!(malformed.status(), 400);
        assert_eq!(malformed.reason_label(), "malformed");
        assert_eq!(
            malformed.to_string(),
            "malformed payload at issue: missing field"
        );
    }

    #[test]
    fn from_json_names_the_path_and_hides_the_value() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Outer {
            issue: Inner,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            number: u64,
        }

        let err = from_json::<Outer>(br#"{"issue": {"number": "a \"secret\" value"}}"#)
            .expect_err("a string is not a number");
        let WebhookError::Malformed { path, message } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(path, "issue.number");
        assert!(
            message.starts_with("invalid type: string \"…\", expected u64"),
            "{message}"
        );
        assert!(!err.to_string().contains("secret"), "{err}");
    }

    #[test]
    fn from_json_refuses_what_is_not_one_json_value() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Any {}

        for body in [&b"not json"[..], b"", b"{} {}", b"{\"a\": 1"] {
            let err = from_json::<Any>(body).expect_err("not one JSON object");
            assert!(
                matches!(&err, WebhookError::Malformed { path, .. } if path == "."),
                "{err:?}"
            );
        }
    }

    #[test]
    fn ignored_labels_stay_short_and_plain() {
        assert_eq!(
            ignored("issues.opened"),
            Parsed::Ignored("issues.opened".to_owned())
        );
        assert_eq!(
            ignored("tag push\n"),
            Parsed::Ignored("tag_push_".to_owned())
        );
        let long = "x".repeat(200);
        assert_eq!(ignored(&long), Parsed::Ignored("x".repeat(MAX_LABEL_LEN)));
    }
}

/// Unwrapping parse results in the parsers' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Event, Parsed, WebhookError};

    pub fn event(name: &str, parsed: Result<Parsed, WebhookError>) -> Event {
        match parsed {
            Ok(Parsed::Event(event)) => event,
            other => panic!("{name}: expected an event, got {other:?}"),
        }
    }

    pub fn ignored(name: &str, parsed: Result<Parsed, WebhookError>) -> String {
        match parsed {
            Ok(Parsed::Ignored(label)) => label,
            other => panic!("{name}: expected it ignored, got {other:?}"),
        }
    }

    pub fn malformed_at(name: &str, parsed: Result<Parsed, WebhookError>) -> String {
        match parsed {
            Err(WebhookError::Malformed { path, .. }) => path,
            other => panic!("{name}: expected a malformed payload, got {other:?}"),
        }
    }
}
