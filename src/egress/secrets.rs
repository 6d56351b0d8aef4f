//! Secrets by placeholder: the operator's `[[worker.secrets]]` rules ([`SecretRule`]), and a
//! job's [`Secret`]s, each a real value the worker never sees and the random placeholder its
//! environment holds instead.
//!
//! This module owns the rule's validation and the two operations on a request head the
//! gateway performs: putting the real value in place of the placeholder in the one configured
//! header ([`Secret::inject`]) and finding any placeholder anywhere else ([`Secret::found_in`]).
//! It never logs; nothing here formats a value.

use std::fmt;

/// Where a secret goes in a request to one of its hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Injection {
    /// A header (lower-cased name) whose whole value is the placeholder: `x-api-key`.
    Header(String),
    /// `Authorization: <scheme> <placeholder>`, the scheme as configured (`Bearer`) and
    /// compared case-insensitively.
    Authorization(String),
}

impl Injection {
    /// The header this injection writes, lower-cased.
    pub fn header(&self) -> &str {
        match self {
            Injection::Header(name) => name,
            Injection::Authorization(_) => "authorization",
        }
    }
}

impl fmt::Display for Injection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Injection::Header(name) => f.write_str(name),
            Injection::Authorization(scheme) => write!(f, "authorization ({scheme})"),
        }
    }
}

/// One `[[worker.secrets]]` table: which variable, for which hosts, in which header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRule {
    /// The variable the worker sees (holding the placeholder) and the bot reads the value from.
    pub env: String,
    /// The exact host names (lower-cased) the value is sent to.
    pub hosts: Vec<String>,
    pub injection: Injection,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    env: String,
    hosts: Vec<String>,
    header: Option<String>,
    authorization: Option<String>,
}

impl<'de> serde::Deserialize<'de> for SecretRule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SecretRule, D::Error> {
        // Checked inside the visitor, so that toml puts the table's own line on the error.
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = SecretRule;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table with env, hosts, and header or authorization")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<SecretRule, A::Error> {
                use serde::de::Error;
                let raw = <RawRule as serde::Deserialize>::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                SecretRule::new(raw.env, raw.hosts, raw.header, raw.authorization)
                    .map_err(A::Error::custom)
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// Headers the gateway itself frames or routes by: a secret in one of them would change where
/// or how a request goes rather than authenticate it.
const RESERVED_HEADERS: [&str; 12] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
    "expect",
];

impl SecretRule {
    /// Checks a rule as written: a portable variable name, at least one exact host name, and
    /// exactly one of `header` and `authorization`.
    pub fn new(
        env: String,
        hosts: Vec<String>,
        header: Option<String>,
        authorization: Option<String>,
    ) -> Result<SecretRule, String> {
        let portable = env
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && env.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !portable {
            return Err(format!(
                "secret env {env:?} is not a portable variable name (letters, digits and _, \
                 not starting with a digit)"
            ));
        }
        if hosts.is_empty() {
            return Err(format!(
                "secret {env} has no hosts: list the hosts its value may be sent to"
            ));
        }
        let mut names = Vec::with_capacity(hosts.len());
        for host in &hosts {
            if host.contains('*') {
                return Err(format!(
                    "secret {env}: host {host:?} has a wildcard; list each host by its exact name"
                ));
            }
            let name = super::allow::normalize_name(host)
                .map_err(|why| format!("secret {env}: host {host:?} {why}"))?;
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let injection = match (header, authorization) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "secret {env} has both header and authorization: give one"
                ));
            }
            (None, None) => {
                return Err(format!(
                    "secret {env} says neither where its value goes: give header = \"x-api-key\" \
                     or authorization = \"Bearer\""
                ));
            }
            (Some(header), None) => {
                let name = header.to_ascii_lowercase();
                if !is_token(&name) {
                    return Err(format!(
                        "secret {env}: header {header:?} is not a valid header name"
                    ));
                }
                if RESERVED_HEADERS.contains(&name.as_str()) || name.starts_with("proxy-") {
                    return Err(format!(
                        "secret {env}: header {header:?} is one the gateway frames requests \
                         with; a secret cannot go there"
                    ));
                }
                Injection::Header(name)
            }
            (None, Some(scheme)) => {
                if !is_token(&scheme) {
                    return Err(format!(
                        "secret {env}: authorization scheme {scheme:?} is not a single word \
                         such as Bearer"
                    ));
                }
                Injection::Authorization(scheme)
            }
        };
        Ok(SecretRule {
            env,
            hosts: names,
            injection,
        })
    }

    /// Whether `host` (a normalized name) is one of this rule's hosts.
    pub fn is_for(&self, host: &str) -> bool {
        self.hosts.iter().any(|h| h == host)
    }
}

/// RFC 9110's `token`: what a header name or an auth scheme may be made of.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A job's secret: the rule, the real value (only ever written into the one header of a
/// request to one of the rule's hosts) and the placeholder the worker holds instead.
#[derive(Clone)]
pub struct Secret {
    pub rule: SecretRule,
    /// Never printed: `Debug` shows its length only.
    pub value: String,
    /// `fwph_` and 40 random hex digits: what the worker's variable holds.
    pub placeholder: String,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secret")
            .field("rule", &self.rule)
            .field(
                "value",
                &format_args!("<{} bytes, redacted>", self.value.len()),
            )
            .field("placeholder", &self.placeholder)
            .finish()
    }
}

/// What the worker's placeholders start with.
pub const PLACEHOLDER_PREFIX: &str = "fwph_";

impl Secret {
    /// The secret `value` for `rule`, with a fresh placeholder from the system's generator.
    ///
    /// # Panics
    /// When the operating system's random source fails (getrandom(2) is missing), which no
    /// supported kernel does; a predictable placeholder is never made instead.
    pub fn new(rule: SecretRule, value: String) -> Secret {
        let mut bytes = [0u8; 20];
        getrandom::getrandom(&mut bytes).expect("the system's random source is unavailable");
        Secret {
            rule,
            value,
            placeholder: format!("{PLACEHOLDER_PREFIX}{}", hex::encode(bytes)),
        }
    }

    /// Why the value cannot go in a header, if it cannot: empty, or holding a control
    /// character (a trailing newline from a file, say), which would split the request.
    pub fn value_problem(&self) -> Option<String> {
        if self.value.is_empty() {
            return Some(format!("the value of {} is empty", self.rule.env));
        }
        if self.value.bytes().any(|b| b.is_ascii_control()) {
            return Some(format!(
                "the value of {} holds a control character (a trailing newline?) and cannot \
                 go in a header",
                self.rule.env
            ));
        }
        None
    }

    /// Whether the placeholder occurs in `bytes`.
    pub fn found_in(&self, bytes: &[u8]) -> bool {
        memchr::memmem::find(bytes, self.placeholder.as_bytes()).is_some()
    }

    /// The header value to send instead of `value` (a value of this secret's header in a
    /// request to one of its hosts), when it carries the placeholder in the configured form.
    pub fn inject(&self, value: &[u8]) -> Option<Vec<u8>> {
        let trimmed = value.trim_ascii();
        match &self.rule.injection {
            Injection::Header(_) => {
                (trimmed == self.placeholder.as_bytes()).then(|| self.value.as_bytes().to_vec())
            }
            Injection::Authorization(scheme) => {
                let space = trimmed.iter().position(|&b| b == b' ')?;
                let (sent_scheme, rest) = trimmed.split_at(space);
                if !sent_scheme.eq_ignore_ascii_case(scheme.as_bytes())
                    || rest.trim_ascii() != self.placeholder.as_bytes()
                {
                    return None;
                }
                let mut out = Vec::with_capacity(sent_scheme.len() + 1 + self.value.len());
                out.extend_from_slice(sent_scheme);
                out.push(b' ');
                out.extend_from_slice(self.value.as_bytes());
                Some(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(toml_text: &str) -> Result<SecretRule, String> {
        toml::from_str::<SecretRule>(toml_text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_header_rule_and_an_authorization_rule_parse() {
        let header = rule(
            "env = \"ANTHROPIC_API_KEY\"\nhosts = [\"API.anthropic.com\"]\nheader = \"X-Api-Key\"\n",
        )
        .unwrap();
        assert_eq!(header.env, "ANTHROPIC_API_KEY");
        assert_eq!(header.hosts, ["api.anthropic.com"]);
        assert_eq!(header.injection, Injection::Header("x-api-key".into()));
        let auth = rule("env = \"GH\"\nhosts = [\"api.github.com\"]\nauthorization = \"Bearer\"\n")
            .unwrap();
        assert_eq!(auth.injection, Injection::Authorization("Bearer".into()));
        assert_eq!(auth.injection.header(), "authorization");
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        let cases = [
            (
                "env = \"K\"\nhosts = [\"a.com\"]\n",
                "neither where its value goes",
            ),
            (
                "env = \"K\"\nhosts = [\"a.com\"]\nheader = \"x\"\nauthorization = \"Bearer\"\n",
                "both header and authorization",
            ),
            ("env = \"K\"\nhosts = []\nheader = \"x\"\n", "has no hosts"),
            (
                "env = \"1K\"\nhosts = [\"a.com\"]\nheader = \"x\"\n",
                "not a portable variable name",
            ),
            (
                "env = \"K-EY\"\nhosts = [\"a.com\"]\nheader = \"x\"\n",
                "not a portable variable name",
            ),
            (
                "env = \"K\"\nhosts = [\"*.a.com\"]\nheader = \"x\"\n",
                "has a wildcard",
            ),
            (
                "env = \"K\"\nhosts = [\"a.com\"]\nheader = \"host\"\n",
                "a secret cannot go there",
            ),
            (
                "env = \"K\"\nhosts = [\"a.com\"]\nheader = \"x y\"\n",
                "not a valid header name",
            ),
            (
                "env = \"K\"\nhosts = [\"a.com\"]\nauthorization = \"Bearer token\"\n",
                "not a single word",
            ),
            (
                "env = \"K\"\nhosts = [\"a.com\"]\nheader = \"x\"\nvalue = \"inline\"\n",
                "unknown field `value`",
            ),
            (
                "env = \"K\"\nhosts = [\"bücher.de\"]\nheader = \"x\"\n",
                "xn-- form",
            ),
        ];
        for (text, want) in cases {
            let err = rule(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_bad_rule_in_a_file_names_its_line() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Worker {
            secrets: Vec<SecretRule>,
        }
        let text = "[[secrets]]\nenv = \"A\"\nhosts = [\"a.com\"]\nheader = \"x-a\"\n\n\
                    [[secrets]]\nenv = \"B\"\nhosts = [\"b.com\"]\n";
        let err = toml::from_str::<Worker>(text).unwrap_err().to_string();
        assert!(err.contains("line 6"), "{err}");
        assert!(err.contains("secret B says neither"), "{err}");
    }

    fn secret(injection: Injection) -> Secret {
        Secret::new(
            SecretRule {
                env: "K".into(),
                hosts: vec!["a.com".into()],
                injection,
            },
            "real-value".into(),
        )
    }

    #[test]
    fn placeholders_are_random_and_shaped() {
        let a = secret(Injection::Header("x".into()));
        let b = secret(Injection::Header("x".into()));
        assert_ne!(a.placeholder, b.placeholder);
        assert_eq!(a.placeholder.len(), 45);
        assert!(a.placeholder.starts_with("fwph_"));
        assert!(a.placeholder[5..].bytes().all(|c| c.is_ascii_hexdigit()));
        let debug = format!("{a:?}");
        assert!(!debug.contains("real-value"), "{debug}");
    }

    #[test]
    fn inject_replaces_only_the_configured_form() {
        let h = secret(Injection::Header("x-api-key".into()));
        let ph = h.placeholder.clone();
        assert_eq!(h.inject(ph.as_bytes()).unwrap(), b"real-value");
        assert_eq!(
            h.inject(format!(" {ph} ").as_bytes()).unwrap(),
            b"real-value"
        );
        assert!(h.inject(format!("x{ph}").as_bytes()).is_none());
        assert!(h.inject(b"other").is_none());

        let a = secret(Injection::Authorization("Bearer".into()));
        let ph = a.placeholder.clone();
        assert_eq!(
            a.inject(format!("bearer {ph}").as_bytes()).unwrap(),
            b"bearer real-value"
        );
        assert!(a.inject(ph.as_bytes()).is_none());
        assert!(a.inject(format!("Basic {ph}").as_bytes()).is_none());
        assert!(a.found_in(format!("GET /?k={ph} HTTP/1.1").as_bytes()));
    }

    #[test]
    fn values_that_would_split_a_header_are_named() {
        let mut s = secret(Injection::Header("x".into()));
        assert!(s.value_problem().is_none());
        s.value = "abc\n".into();
        let why = s.value_problem().unwrap();
        assert!(
            why.contains("control character") && !why.contains("abc"),
            "{why}"
        );
        s.value = String::new();
        assert!(s.value_problem().unwrap().contains("empty"));
    }
}
