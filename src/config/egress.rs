//! The egress settings checked as a whole: `sandbox.network = "allowlist"`, `sandbox.allow`,
//! `sandbox.upstream_ca_file` and `[[worker.secrets]]`.
//!
//! Each entry is checked against the file's text, so an error names its line and column (the
//! settings themselves are read from a merged table, which has no places); then what the
//! entries say together: a secret only for hosts the allow list names, never
//! also handed to the worker as it is (`worker.env`), never configured twice.

use std::ops::Range;

use serde::Deserialize;

use super::pipeline::{Network, SandboxSection, WorkerSection};
use crate::egress::{AllowEntry, Policy, SecretRule};

/// The egress keys of the file, each with where it is written.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Placed {
    sandbox: PlacedSandbox,
    worker: PlacedWorker,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct PlacedSandbox {
    network: Option<toml::Spanned<toml::Value>>,
    allow: Option<toml::Spanned<Vec<toml::Spanned<toml::Value>>>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct PlacedWorker {
    secrets: Vec<toml::Spanned<toml::Value>>,
}

/// Where each egress key of `text` is, once each entry has been found well-formed: an error is
/// the entry's own message with its place.
pub(super) struct Places {
    network: Option<Range<usize>>,
    allow: Option<Range<usize>>,
    secrets: Vec<Range<usize>>,
}

/// Checks each `sandbox.allow` entry and `[[worker.secrets]]` table of `text` on its own.
/// A file whose shape is wrong elsewhere is left to the settings' own parse to report.
pub(super) fn check_entries(text: &str) -> Result<Places, (Option<Range<usize>>, String)> {
    let Ok(placed) = toml::from_str::<Placed>(text) else {
        return Ok(Places {
            network: None,
            allow: None,
            secrets: Vec::new(),
        });
    };
    if let Some(allow) = &placed.sandbox.allow {
        for entry in allow.get_ref() {
            let result = match entry.get_ref() {
                toml::Value::String(s) => s.parse::<AllowEntry>().map(drop),
                other => Err(format!(
                    "an allow entry is a string like \"pypi.example.com:443\", not {}",
                    other.type_str()
                )),
            };
            result.map_err(|message| (Some(entry.span()), message))?;
        }
    }
    for secret in &placed.worker.secrets {
        SecretRule::deserialize(secret.get_ref().clone())
            .map_err(|e| (Some(secret.span()), crate::text::one_line(e.message())))?;
    }
    Ok(Places {
        network: placed.sandbox.network.map(|n| n.span()),
        allow: placed.sandbox.allow.map(|a| a.span()),
        secrets: placed
            .worker
            .secrets
            .iter()
            .map(toml::Spanned::span)
            .collect(),
    })
}

/// What the egress settings say together, checked once the settings are read.
pub(super) fn check_together(
    sandbox: &SandboxSection,
    worker: &WorkerSection,
    places: &Places,
) -> Result<(), (Option<Range<usize>>, String)> {
    let secrets = &worker.secrets;
    if sandbox.network != Network::Allowlist {
        if sandbox.upstream_ca_file.is_some() {
            return Err((
                places.network.clone(),
                "sandbox.upstream_ca_file is set, but only sandbox.network = \"allowlist\" reads it"
                    .into(),
            ));
        }
        if !sandbox.allow.is_empty() {
            return Err((
                places.allow.clone().or(places.network.clone()),
                "sandbox.allow is set, but only sandbox.network = \"allowlist\" reads it".into(),
            ));
        }
        if let Some(first) = secrets.first() {
            return Err((
                places.secrets.first().cloned(),
                format!(
                    "[[worker.secrets]] {} needs sandbox.network = \"allowlist\": only the \
                     egress gateway can put a secret into a request",
                    first.env
                ),
            ));
        }
        return Ok(());
    }
    let policy = Policy::new(sandbox.allow.clone());
    for (index, secret) in secrets.iter().enumerate() {
        let at = places.secrets.get(index).cloned();
        if let Some(why) = reserved(&secret.env) {
            return Err((at, format!("[[worker.secrets]] {}: {why}", secret.env)));
        }
        if worker.env.contains(&secret.env) {
            return Err((
                at,
                format!(
                    "{} is both in worker.env and in [[worker.secrets]]: worker.env would hand \
                     the worker the real value",
                    secret.env
                ),
            ));
        }
        if secrets[..index].iter().any(|s| s.env == secret.env) {
            return Err((
                at,
                format!("[[worker.secrets]] {} is configured twice", secret.env),
            ));
        }
        let listed = |host: &str| {
            policy
                .entries()
                .iter()
                .any(|entry| policy.allows_name(host, entry.port()))
        };
        if let Some(host) = secret.hosts.iter().find(|h| !listed(h)) {
            return Err((
                at,
                format!(
                    "[[worker.secrets]] {} is for {host}, which sandbox.allow does not list",
                    secret.env
                ),
            ));
        }
    }
    Ok(())
}

/// Why a secret cannot be named `name`, if it cannot: the worker's variable of that name is
/// the sandbox's or the gateway's own, or the bot's value under it is one of the bot's own
/// settings or secrets (its forge token, say), which no request of the worker's may carry.
fn reserved(name: &str) -> Option<&'static str> {
    if name.starts_with("FORGEWARD_") {
        return Some("FORGEWARD_ variables are the bot's own settings and secrets");
    }
    if name.starts_with("DOCKER_") {
        return Some("DOCKER_ variables steer the Docker CLI the sandbox runs");
    }
    if crate::sandbox::RESERVED_ENV.contains(&name)
        || name == "HOSTNAME"
        || crate::sandbox::egress::is_gateway_variable(name)
    {
        return Some("the sandbox sets this variable itself");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::server::Settings;

    fn load(text: &str) -> Result<Settings, String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("forgeward.toml");
        std::fs::write(&path, text).expect("write");
        Settings::load_without_secrets(Some(&path), Vec::new())
            .map(|(settings, _)| settings)
            .map_err(|e| {
                e.to_string()
                    .replace(&path.display().to_string(), "forgeward.toml")
            })
    }

    const GOOD: &str = r#"
[sandbox]
network = "allowlist"
allow = ["api.anthropic.com:443", "*.pkg-files.example.net:443", "pypi.example.com:443"]

[[worker.secrets]]
env = "ANTHROPIC_API_KEY"
hosts = ["api.anthropic.com"]
header = "x-api-key"
"#;

    #[test]
    fn an_allow_list_with_a_secret_reads() {
        let settings = load(GOOD).expect("valid");
        assert_eq!(settings.sandbox.allow.len(), 3);
        assert_eq!(settings.worker.secrets[0].env, "ANTHROPIC_API_KEY");
    }

    #[test]
    fn an_entry_without_a_port_is_named_with_its_place() {
        let text = GOOD.replace("\"pypi.example.com:443\"", "\"pypi.example.com\"");
        let err = load(&text).unwrap_err();
        assert!(err.starts_with("forgeward.toml:4:66: "), "{err}");
        assert!(err.contains("pypi.example.com"), "{err}");
        assert!(err.contains("port"), "{err}");
    }

    #[test]
    fn a_secret_with_no_host_is_named_with_its_place() {
        let text = GOOD.replace("hosts = [\"api.anthropic.com\"]", "hosts = []");
        let err = load(&text).unwrap_err();
        assert!(err.starts_with("forgeward.toml:6:1: "), "{err}");
        assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
        assert!(err.contains("hosts"), "{err}");
    }

    #[test]
    fn a_secret_for_a_host_the_list_refuses_is_an_error() {
        let text = GOOD.replace("\"api.anthropic.com:443\", ", "");
        let err = load(&text).unwrap_err();
        assert!(err.starts_with("forgeward.toml:6:1: "), "{err}");
        assert!(err.contains("does not list"), "{err}");
    }

    #[test]
    fn a_secret_also_in_worker_env_is_an_error() {
        let text = GOOD.replace(
            "[[worker.secrets]]",
            "[worker]\nenv = [\"ANTHROPIC_API_KEY\"]\n\n[[worker.secrets]]",
        );
        let err = load(&text).unwrap_err();
        assert!(err.contains("worker.env would hand"), "{err}");
    }

    #[test]
    fn a_secret_may_not_take_a_name_the_bot_or_the_sandbox_owns() {
        for name in [
            "FORGEWARD_GITHUB_TOKEN",
            "HTTPS_PROXY",
            "SSL_CERT_FILE",
            "PATH",
            "DOCKER_HOST",
        ] {
            let text = GOOD.replace("ANTHROPIC_API_KEY", name);
            let err = load(&text).unwrap_err();
            assert!(err.starts_with("forgeward.toml:6:1: "), "{err}");
            assert!(err.contains(name), "{err}");
        }
    }

    #[test]
    fn an_upstream_ca_without_the_allowlist_network_is_an_error() {
        let text = "[sandbox]\nupstream_ca_file = \"/etc/ca.pem\"\n";
        let err = load(text).unwrap_err();
        assert!(
            err.contains("only sandbox.network = \"allowlist\""),
            "{err}"
        );
    }

    #[test]
    fn allow_entries_without_the_allowlist_network_are_an_error() {
        let text = GOOD.replace("network = \"allowlist\"", "network = \"full\"");
        let err = load(&text).unwrap_err();
        assert!(err.starts_with("forgeward.toml:4:"), "{err}");
        assert!(
            err.contains("only sandbox.network = \"allowlist\""),
            "{err}"
        );
    }
}
