//! The git check, for each configured forge: the base of the URLs the bot clones and pushes
//! with (`git_url`, by default the forge's web address) answers git, through the same transport
//! the bot fetches with.
//!
//! Over `https://` the probe is a fetch's first request for a repository the doctor makes up
//! under that base, with no credentials offered ([`forgeward::git::probe`]): GitHub and GitLab
//! answer it, as for any repository they do not show anonymously, with git's request for
//! credentials — which shows the TLS handshake (certificate verified) and the smart-HTTP
//! endpoint both work, without knowing a repository's name. Forgejo answers so only under an
//! account that exists (a made-up owner is a 404 page), so its probe goes under the bot's own
//! account, learned from `GET /api/v1/user` by the API check.
//!
//! The other URLs get their own lines: a `file://` URL or an absolute path is a directory of
//! repositories on this machine (nothing to reach over a network; the directory must exist);
//! `http://` is probed the same way, passes only on this machine's loopback, and fails
//! elsewhere, since git would send the bot's token over it unencrypted.

use std::time::Duration;

use forgeward::config::server::Settings;
use forgeward::forge::Forge;
use forgeward::git::probe::{Answer, Failure, probe};
use forgeward::git::{NetworkTimeouts, set_network_timeouts};

use super::{Context, Line, NETWORK_TIMEOUT, Pending, forge_name};

/// The made-up repository probed, under an account that does not matter (GitHub, GitLab).
const PROBE_REPO: &str = "forgeward-doctor/forgeward-doctor-probe.git";

pub(super) fn check(cx: &mut Context) -> Pending<'_> {
    Box::pin(async move {
        let settings = match cx.settings_or_skip("git") {
            Ok(settings) => settings.clone(),
            Err(skipped) => return skipped,
        };
        // git's socket timeouts, for every probe of this process.
        set_network_timeouts(NetworkTimeouts {
            connect: NETWORK_TIMEOUT / 2,
            stall: NETWORK_TIMEOUT,
        });
        let mut lines = Vec::new();
        for setup in cx.forges.iter().filter(|f| f.configured) {
            let login = cx.logins.get(&setup.forge).cloned();
            lines.push(one(&settings, setup.forge, login).await);
        }
        if lines.is_empty() {
            lines.push(Line::neutral("git", "not checked: no forge is configured"));
        }
        lines
    })
}

/// The base URL git uses for `forge`, and the setting that gives it.
fn base(settings: &Settings, forge: Forge) -> (String, &'static str) {
    let (git_url, fallback, setting) = match forge {
        Forge::GitHub => (
            &settings.github.git_url,
            &settings.github.web_url,
            "github.git_url (FORGEWARD_GITHUB_GIT_URL; by default github.web_url)",
        ),
        Forge::GitLab => (
            &settings.gitlab.git_url,
            &settings.gitlab.url,
            "gitlab.git_url (FORGEWARD_GITLAB_GIT_URL; by default gitlab.url)",
        ),
        Forge::Forgejo => (
            &settings.forgejo.git_url,
            &settings.forgejo.url,
            "forgejo.git_url (FORGEWARD_FORGEJO_GIT_URL; by default forgejo.url)",
        ),
    };
    let url = git_url.clone().unwrap_or_else(|| fallback.clone());
    (url.trim_end_matches('/').to_owned(), setting)
}

async fn one(settings: &Settings, forge: Forge, login: Option<String>) -> Line {
    let name = forge_name(forge);
    let subject = format!("{name} git");
    let (base, setting) = base(settings, forge);
    let local = base
        .strip_prefix("file://")
        .or_else(|| base.starts_with('/').then_some(base.as_str()));
    if let Some(dir) = local {
        let dir = std::path::Path::new(if dir.is_empty() { "/" } else { dir });
        return if dir.is_dir() {
            Line::pass(
                subject,
                format!(
                    "{base}: repositories in a directory on this machine \
                     ({}/<owner>/<name>.git), nothing to reach over a network",
                    dir.display()
                ),
            )
        } else {
            Line::fail(
                subject,
                format!("{base}: {} is not a directory", dir.display()),
                format!("create it, or set {setting} to the forge's https:// address"),
            )
        };
    }
    let plain = base.starts_with("http://");
    if !plain && !base.starts_with("https://") {
        return Line::fail(
            subject,
            format!("{base}: the bot clones and pushes over https:// only"),
            format!("set {setting} to the forge's https:// address"),
        );
    }
    if plain && !loopback(&base) {
        return Line::fail(
            subject,
            format!(
                "{base} is plain HTTP: git would send the bot's token across the network \
                 unencrypted"
            ),
            format!("set {setting} to the forge's https:// address"),
        );
    }
    let probed = match forge {
        Forge::Forgejo => match &login {
            Some(login) => format!("{base}/{login}/forgeward-doctor-probe.git"),
            None => format!("{base}/{PROBE_REPO}"),
        },
        _ => format!("{base}/{PROBE_REPO}"),
    };
    let url = probed.clone();
    let ran = tokio::time::timeout(
        NETWORK_TIMEOUT + Duration::from_secs(5),
        tokio::task::spawn_blocking(move || probe(&url)),
    )
    .await;
    let answer = match ran {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) | Err(_) => Err(Failure::Timeout(format!(
            "no answer within {} s",
            NETWORK_TIMEOUT.as_secs()
        ))),
    };
    let how = if plain {
        "over plain HTTP on this machine"
    } else {
        "over HTTPS (TLS verified)"
    };
    match answer {
        Ok(Answer::Challenge) => Line::pass(
            subject,
            format!(
                "{base} answers git {how}: it asks for credentials for a repository it does not \
                 show anonymously, as a forge does"
            ),
        ),
        Ok(Answer::Refs(_)) => Line::pass(
            subject,
            format!("{base} answers git {how}: it lists a repository's refs"),
        ),
        Err(Failure::Status(404)) if forge == Forge::Forgejo && login.is_none() => Line::pass(
            subject,
            format!(
                "{base} answers {how}, with 404 for a made-up account (the doctor did not \
                     learn the bot's login to probe under it, so git's own answer is not shown)"
            ),
        ),
        Err(failure) => failed(&subject, &base, &probed, setting, &failure),
    }
}

fn failed(subject: &str, base: &str, probed: &str, setting: &str, failure: &Failure) -> Line {
    let host = host_of(base);
    match failure {
        Failure::Tls(message) => Line::fail(
            subject,
            format!("the TLS handshake with {host} fails: {message}"),
            format!(
                "check {setting}; a forge with a certificate from a private CA needs that CA in \
                 this machine's bundle (or SSL_CERT_FILE)"
            ),
        ),
        Failure::Connect(message) | Failure::Timeout(message) => Line::fail(
            subject,
            format!("{base} does not answer: {message}"),
            format!("check {setting} and that this machine reaches {host} (DNS, firewall, proxy)"),
        ),
        Failure::Status(code) => Line::fail(
            subject,
            format!(
                "{probed} answered HTTP {code} where a git server asks for credentials: {base} \
                 does not look like the forge's git address"
            ),
            format!(
                "set {setting} to the base of the forge's clone URLs (what `git clone` takes, \
                 without /<owner>/<name>.git)"
            ),
        ),
        Failure::NotGit(message) => Line::fail(
            subject,
            format!("{probed}: {message}: {base} is a web server, not the forge's git"),
            format!("set {setting} to the base of the forge's clone URLs"),
        ),
        Failure::Url(message) | Failure::Other(message) => Line::fail(
            subject,
            format!("{base}: {message}"),
            format!("check {setting}"),
        ),
    }
}

/// `host[:port]` of a URL.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest)
}

/// Whether an `http://` URL names this machine's loopback.
fn loopback(url: &str) -> bool {
    let host = host_of(url);
    let host = if let Some(bracketed) = host.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}
