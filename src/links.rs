//! Signed links to the job pages: who may look, for how long.
//!
//! The pages are not public. A link carries a token, `<expiry>.<mac>`: the expiry in Unix
//! seconds and an HMAC-SHA256, under the bot's link key, over the token's **scope** and that
//! expiry. The scope is what the link opens and comes from the URL, not from the token: one job
//! (`/jobs/42`, scope `job 42`) or the list of every job (`/jobs`, scope `jobs`). A job's token
//! opens that job's page and its log stream and nothing else; the list's token is the
//! operator's, since the list names every repository the bot works on, private ones included.
//!
//! The key is the contents of a file: `server.job_link_key_file`, or `job-link.key` in the data
//! directory, which the bot creates on first use (32 random bytes, hex, mode 0600). Several
//! `serve` processes behind one address share a key file. Changing the key revokes every link.
//!
//! Nothing here logs, prints or puts in an error a key or a token.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::store::JobId;

/// The key file's name in the data directory, when `server.job_link_key_file` names none.
pub const KEY_FILE_NAME: &str = "job-link.key";

/// The shortest key accepted, in bytes of the file (trimmed): HMAC-SHA256's own size. A
/// generated key is 32 random bytes written as 64 hex digits.
pub const MIN_KEY_LEN: usize = 32;

/// How long a link is good for unless `server.job_link_ttl` says otherwise: a week covers a
/// review that waits over a weekend, and a link that leaked stops working soon enough.
pub const DEFAULT_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// Expiries are rounded up to this many seconds: a status comment rendered twice in the same
/// minute carries the same link, so an edit that changes nothing else is not made.
const EXPIRY_GRAIN: i64 = 60;

/// What the MAC is over, besides the scope and the expiry: a version, so that a later format
/// cannot be mistaken for this one.
const DOMAIN: &[u8] = b"forgeward job link v1";

/// What a link opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One job's page and its log.
    Job(JobId),
    /// The list of jobs.
    Jobs,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Job(id) => write!(f, "job {id}"),
            Scope::Jobs => f.write_str("jobs"),
        }
    }
}

/// Why a link does not open its page. `Display` is what the person who followed it reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("this page needs a link from the bot: the address has no token")]
    Missing,
    /// Malformed, signed with another key, or for another page.
    #[error("this link is not valid for this page")]
    Invalid,
    /// Authentic, but past its expiry (Unix seconds).
    #[error("this link expired on {}", utc(*.0))]
    Expired(i64),
}

/// Why the key cannot be had. `Display` is one line and never shows the key.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the job link key {}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "the job link key {} is missing: `forgeward serve` creates it on first start, or name one with server.job_link_key_file",
        path.display()
    )]
    Missing { path: PathBuf },
    #[error(
        "the job link key {} is too short: at least {MIN_KEY_LEN} bytes (e.g. `openssl rand -hex 32`)",
        path.display()
    )]
    TooShort { path: PathBuf },
    #[error("cannot draw a random job link key: {0}")]
    Random(std::io::Error),
}

/// The key links are signed with. `Debug` shows nothing of it.
#[derive(Clone)]
pub struct LinkKey(Vec<u8>);

impl fmt::Debug for LinkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LinkKey(***)")
    }
}

impl LinkKey {
    /// A key from its bytes (tests, and the file's contents).
    pub fn from_bytes(bytes: &[u8]) -> Option<LinkKey> {
        (bytes.len() >= MIN_KEY_LEN).then(|| LinkKey(bytes.to_vec()))
    }

    /// The key in `path`, which must exist: the file's contents, surrounding whitespace trimmed.
    pub fn load(path: &Path) -> Result<LinkKey, KeyError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(KeyError::Missing {
                    path: path.to_owned(),
                });
            }
            Err(error) => {
                return Err(KeyError::Io {
                    path: path.to_owned(),
                    error,
                });
            }
        };
        warn_if_readable_by_others(path);
        LinkKey::from_bytes(bytes.trim_ascii()).ok_or_else(|| KeyError::TooShort {
            path: path.to_owned(),
        })
    }

    /// The key in `path`, made there first when there is none: 32 random bytes as hex, mode
    /// 0600. The key is written whole to a file of its own beside `path` and then linked into
    /// place, so a process reading `path` meanwhile never sees half a key, and of two
    /// processes creating it at once one key wins and both use it. Returns whether it was
    /// created.
    pub fn load_or_create(path: &Path) -> Result<(LinkKey, bool), KeyError> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let io = |error| KeyError::Io {
            path: path.to_owned(),
            error,
        };
        match LinkKey::load(path) {
            Err(KeyError::Missing { .. }) => {}
            loaded => return loaded.map(|key| (key, false)),
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut bytes = [0u8; 32];
        random(&mut bytes).map_err(KeyError::Random)?;
        let text = hex::encode(bytes);
        let mut nonce = [0u8; 8];
        random(&mut nonce).map_err(KeyError::Random)?;
        let name = path.file_name().map_or_else(
            || KEY_FILE_NAME.into(),
            |n| n.to_string_lossy().into_owned(),
        );
        let draft = path.with_file_name(format!(".{name}.{}.new", hex::encode(nonce)));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&draft)
            .and_then(|mut file| {
                file.write_all(format!("{text}\n").as_bytes())?;
                file.sync_all()
            })
            .and_then(|()| std::fs::hard_link(&draft, path));
        let _ = std::fs::remove_file(&draft);
        match written {
            Ok(()) => Ok((LinkKey(text.into_bytes()), true)),
            // Another process made it first: its key is the one.
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                LinkKey::load(path).map(|key| (key, false))
            }
            Err(error) => Err(io(error)),
        }
    }

    fn mac(&self, scope: Scope, expires_at: i64) -> Hmac<Sha256> {
        // A key of any length is accepted by HMAC.
        let mut mac = match Hmac::<Sha256>::new_from_slice(&self.0) {
            Ok(mac) => mac,
            Err(_) => unreachable!("HMAC takes keys of any length"),
        };
        mac.update(DOMAIN);
        mac.update(b"\0");
        mac.update(scope.to_string().as_bytes());
        mac.update(b"\0");
        mac.update(expires_at.to_string().as_bytes());
        mac
    }

    /// The token for `scope`, good until `expires_at` (Unix seconds).
    pub fn sign(&self, scope: Scope, expires_at: i64) -> String {
        let tag = self.mac(scope, expires_at).finalize().into_bytes();
        let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tag);
        format!("{expires_at}.{tag}")
    }

    /// Whether `token` opens `scope` at `now` (Unix seconds); the expiry when it does. The tag
    /// is compared in constant time, and only an authentic token is told it expired.
    pub fn verify(&self, scope: Scope, token: &str, now: i64) -> Result<i64, LinkError> {
        let (expiry, tag) = token.split_once('.').ok_or(LinkError::Invalid)?;
        if expiry.is_empty() || expiry.len() > 12 || !expiry.bytes().all(|b| b.is_ascii_digit()) {
            return Err(LinkError::Invalid);
        }
        let expires_at: i64 = expiry.parse().map_err(|_| LinkError::Invalid)?;
        let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| LinkError::Invalid)?;
        // `verify_slice` compares in constant time (and refuses a tag of another length).
        self.mac(scope, expires_at)
            .verify_slice(&tag)
            .map_err(|_| LinkError::Invalid)?;
        if now >= expires_at {
            return Err(LinkError::Expired(expires_at));
        }
        Ok(expires_at)
    }
}

/// How the bot makes links to its pages: the key, how long a link lasts, and the address people
/// reach the bot at (`server.public_url`), without which no link is put in a comment.
#[derive(Clone, Debug)]
pub struct JobLinks {
    pub key: LinkKey,
    pub ttl: Duration,
    /// `https://forgeward.example.com`, no trailing slash.
    pub public_url: Option<String>,
}

impl JobLinks {
    /// When a link made at `now` (Unix seconds) expires: `ttl` later, rounded up to the minute.
    pub fn expiry(&self, now: i64) -> i64 {
        let ttl = i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX / 2);
        let at = now.saturating_add(ttl);
        at.saturating_add(EXPIRY_GRAIN - 1) / EXPIRY_GRAIN * EXPIRY_GRAIN
    }

    /// The path (and query) of `scope`'s page with a token expiring at `expires_at`.
    pub fn path(&self, scope: Scope, expires_at: i64) -> String {
        let token = self.key.sign(scope, expires_at);
        match scope {
            Scope::Job(id) => format!("/jobs/{id}?t={token}"),
            Scope::Jobs => format!("/jobs?t={token}"),
        }
    }

    /// The full link to `scope`'s page made at `now`, when the bot's public address is known.
    pub fn url(&self, scope: Scope, now: i64) -> Option<String> {
        let base = self.public_url.as_deref()?;
        Some(format!("{base}{}", self.path(scope, self.expiry(now))))
    }
}

/// `server.public_url` checked: an `http://` or `https://` URL with a host, without a query or
/// fragment; returned without its trailing slashes.
pub fn check_public_url(url: &str) -> Result<String, String> {
    let url = url.trim().trim_end_matches('/');
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| format!("server.public_url '{url}' is not an http:// or https:// URL"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("server.public_url '{url}' has no host"));
    }
    if rest.contains(['?', '#', ' ', '"', '<', '>', '\'']) || rest.chars().any(char::is_control) {
        return Err(format!(
            "server.public_url '{url}' must be a plain address, without a query or a fragment"
        ));
    }
    Ok(url.to_owned())
}

/// Where the key is: `server.job_link_key_file`, else [`KEY_FILE_NAME`] in the data directory.
pub fn key_path(configured: Option<&Path>, data_dir: &Path) -> PathBuf {
    configured.map_or_else(|| data_dir.join(KEY_FILE_NAME), Path::to_path_buf)
}

/// Now, in Unix seconds.
pub fn now_secs() -> i64 {
    crate::store::now_ms() / 1000
}

/// `2025-01-31 14:05 UTC`.
pub fn utc(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0).map_or_else(
        || format!("{secs} (Unix time)"),
        |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
    )
}

/// Fills `buf` from the kernel's random source.
fn random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: `rest` is valid for writes of its length.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        filled += n as usize;
    }
    Ok(())
}

/// A key others can read is said in the log (once per load), as ssh does for its keys.
fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{:o}", meta.permissions().mode() & 0o777),
            "the job link key can be read by other users: anyone who reads it can open every job page"
        );
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn key() -> LinkKey {
        LinkKey::from_bytes(b"0123456789abcdef0123456789abcdef").expect("long enough")
    }

    const NOW: i64 = 1_750_000_000;

    #[test]
    fn a_token_opens_its_own_page_until_it_expires() {
        let key = key();
        let token = key.sign(Scope::Job(JobId(42)), NOW + 60);
        assert_eq!(key.verify(Scope::Job(JobId(42)), &token, NOW), Ok(NOW + 60));
        assert_eq!(
            key.verify(Scope::Job(JobId(42)), &token, NOW + 59),
            Ok(NOW + 60)
        );
        assert_eq!(
            key.verify(Scope::Job(JobId(42)), &token, NOW + 60),
            Err(LinkError::Expired(NOW + 60))
        );
        let expired = LinkError::Expired(NOW + 60).to_string();
        assert_eq!(expired, "this link expired on 2025-06-15 15:07 UTC");
    }

    #[test]
    fn a_token_opens_no_other_page() {
        let key = key();
        let token = key.sign(Scope::Job(JobId(42)), NOW + 60);
        assert_eq!(
            key.verify(Scope::Job(JobId(43)), &token, NOW),
            Err(LinkError::Invalid)
        );
        assert_eq!(
            key.verify(Scope::Jobs, &token, NOW),
            Err(LinkError::Invalid)
        );
        // Job 4's token is not job 42's with a digit moved into the expiry.
        let four = key.sign(Scope::Job(JobId(4)), 2 * 10i64.pow(9));
        assert_eq!(
            key.verify(Scope::Job(JobId(42)), &four, NOW),
            Err(LinkError::Invalid)
        );
        let list = key.sign(Scope::Jobs, NOW + 60);
        assert!(key.verify(Scope::Jobs, &list, NOW).is_ok());
        assert_eq!(
            key.verify(Scope::Job(JobId(1)), &list, NOW),
            Err(LinkError::Invalid)
        );
    }

    #[test]
    fn a_tampered_token_is_invalid_and_never_told_it_expired() {
        let key = key();
        let scope = Scope::Job(JobId(7));
        let token = key.sign(scope, NOW - 3600);
        let (expiry, tag) = token.split_once('.').expect("two parts");
        // A later expiry with the old tag: invalid, not "expired" and not valid.
        let later = format!("{}.{tag}", NOW + 3600);
        assert_eq!(key.verify(scope, &later, NOW), Err(LinkError::Invalid));
        let mut flipped = tag.as_bytes().to_vec();
        flipped[3] = if flipped[3] == b'A' { b'B' } else { b'A' };
        let flipped = format!("{expiry}.{}", String::from_utf8(flipped).expect("ascii"));
        assert_eq!(
            key.verify(scope, &flipped, NOW - 7200),
            Err(LinkError::Invalid)
        );
        for bad in [
            "",
            ".",
            "abc",
            "123.",
            ".abc",
            &format!("-5.{tag}"),
            &format!("{expiry}.{tag}x"),
            &format!("{expiry}.{}", &tag[..tag.len() - 1]),
            &format!("{expiry}.{tag}.{tag}"),
            &format!("99999999999999999999.{tag}"),
            &format!(
                "{expiry}.{}",
                tag.replace(|c: char| c.is_alphanumeric(), "+")
            ),
        ] {
            assert_eq!(
                key.verify(scope, bad, NOW),
                Err(LinkError::Invalid),
                "{bad:?}"
            );
        }
        // Authentic but old: expired.
        assert_eq!(
            key.verify(scope, &token, NOW),
            Err(LinkError::Expired(NOW - 3600))
        );
    }

    #[test]
    fn another_key_signs_other_tokens() {
        let other = LinkKey::from_bytes(b"another key, also thirty-two bytes").expect("long");
        let token = other.sign(Scope::Jobs, NOW + 60);
        assert_eq!(
            key().verify(Scope::Jobs, &token, NOW),
            Err(LinkError::Invalid)
        );
        assert!(LinkKey::from_bytes(b"too short").is_none());
    }

    #[test]
    fn a_generated_key_is_private_and_read_back_the_same() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("data").join(KEY_FILE_NAME);
        let (first, created) = LinkKey::load_or_create(&path).expect("created");
        assert!(created);
        let meta = std::fs::metadata(&path).expect("the key file");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let text = std::fs::read_to_string(&path).expect("readable");
        assert_eq!(text.trim().len(), 64, "32 bytes as hex");
        assert!(text.trim().bytes().all(|b| b.is_ascii_hexdigit()));

        let (again, created) = LinkKey::load_or_create(&path).expect("read back");
        assert!(!created);
        let token = first.sign(Scope::Job(JobId(1)), NOW + 60);
        assert!(again.verify(Scope::Job(JobId(1)), &token, NOW).is_ok());
        let loaded = LinkKey::load(&path).expect("loaded");
        assert!(loaded.verify(Scope::Job(JobId(1)), &token, NOW).is_ok());

        // Two bots starting together: one key between them.
        let other = dir.path().join("other.key");
        let keys: Vec<LinkKey> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| LinkKey::load_or_create(&other).expect("a key").0))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("joined"))
                .collect()
        });
        let token = keys[0].sign(Scope::Jobs, NOW + 60);
        for key in &keys {
            assert!(key.verify(Scope::Jobs, &token, NOW).is_ok());
        }
        assert_ne!(
            LinkKey::load_or_create(&dir.path().join("third.key"))
                .expect("a third")
                .0
                .sign(Scope::Jobs, NOW + 60),
            token,
            "each generated key is new"
        );
    }

    #[test]
    fn a_key_from_the_operators_file_is_its_trimmed_contents() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("link.key");
        std::fs::write(&path, "  a shared key of thirty-two bytes or more \n").expect("write");
        let key = LinkKey::load(&path).expect("loaded");
        let expected =
            LinkKey::from_bytes(b"a shared key of thirty-two bytes or more").expect("long");
        let token = expected.sign(Scope::Jobs, NOW + 60);
        assert!(key.verify(Scope::Jobs, &token, NOW).is_ok());
        // The file given is used as it is, never replaced.
        let (again, created) = LinkKey::load_or_create(&path).expect("loaded");
        assert!(!created);
        assert!(again.verify(Scope::Jobs, &token, NOW).is_ok());

        std::fs::write(&path, "short\n").expect("write");
        let err = LinkKey::load(&path).expect_err("too short");
        assert!(err.to_string().contains("too short"), "{err}");
        assert!(!err.to_string().contains("short\n"), "{err}");
        let missing = LinkKey::load(&dir.path().join("nope.key")).expect_err("missing");
        assert!(matches!(missing, KeyError::Missing { .. }), "{missing}");
    }

    #[test]
    fn a_key_never_shows() {
        let key = key();
        assert_eq!(format!("{key:?}"), "LinkKey(***)");
        let links = JobLinks {
            key,
            ttl: DEFAULT_TTL,
            public_url: None,
        };
        assert!(!format!("{links:?}").contains("0123456789"), "{links:?}");
    }

    #[test]
    fn links_expire_a_ttl_after_they_are_made_rounded_up_to_the_minute() {
        let links = JobLinks {
            key: key(),
            ttl: Duration::from_secs(3600),
            public_url: Some("https://bot.example".to_owned()),
        };
        assert_eq!(links.expiry(NOW), NOW + 3600 + 20);
        assert_eq!(links.expiry(NOW + 20), NOW + 3600 + 20);
        assert_eq!(links.expiry(NOW + 21), NOW + 3600 + 80);
        let url = links.url(Scope::Job(JobId(9)), NOW).expect("a public url");
        let token = url
            .strip_prefix("https://bot.example/jobs/9?t=")
            .expect("the job's page");
        assert!(links.key.verify(Scope::Job(JobId(9)), token, NOW).is_ok());
        let list = links.path(Scope::Jobs, NOW + 60);
        assert!(list.starts_with("/jobs?t="), "{list}");
        let none = JobLinks {
            public_url: None,
            ..links
        };
        assert_eq!(none.url(Scope::Job(JobId(9)), NOW), None);
    }

    #[test]
    fn the_public_url_is_a_plain_address() {
        assert_eq!(
            check_public_url("https://bot.example.com/"),
            Ok("https://bot.example.com".to_owned())
        );
        assert_eq!(
            check_public_url("http://10.0.0.1:8080/forgeward"),
            Ok("http://10.0.0.1:8080/forgeward".to_owned())
        );
        for bad in [
            "bot.example.com",
            "ftp://x",
            "https://",
            "https:///x",
            "https://x?y=1",
            "https://x#f",
            "javascript:alert(1)",
            "https://x\"onload=",
        ] {
            assert!(check_public_url(bad).is_err(), "{bad}");
        }
    }
}
