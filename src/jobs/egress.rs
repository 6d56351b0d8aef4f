//! A job's way out, as the bot is set up (`sandbox.network`): nothing, the host's network, or
//! the egress gateway with its allow list. For an allow list, each job gets a gateway of its
//! own: its directory beside the job's files (the socket, the forwarder and, with secrets, the
//! CA bundle), a CA made for this job only, a fresh placeholder per secret in the worker's
//! environment, and every connection written to the job's log.
//!
//! The real values of `[[worker.secrets]]` are read from the bot's environment when the bot
//! starts; they live in the gateway's memory and nowhere the worker can read.

use std::path::Path;
use std::sync::Arc;

use crate::config::pipeline::Network;
use crate::config::server::Settings;
use crate::egress::{EgressLog, Gateway, GatewayConfig, JobCa, Policy, Secret, SecretRule, Totals};
use crate::sandbox::{GatewayMount, JobLog, LogSink, Stream};

use super::error::JobError;

/// What a worker may reach, as the bot is set up.
#[derive(Clone, Default)]
pub enum NetworkPolicy {
    /// Nothing but its own loopback.
    #[default]
    None,
    /// The host's network.
    Full,
    /// The hosts of the allow list, through a gateway per job.
    Allowlist(Arc<Allowlist>),
}

/// `sandbox.allow` and `[[worker.secrets]]`, read once.
pub struct Allowlist {
    pub policy: Arc<Policy>,
    /// Each secret's rule and its value in the bot's environment (`None`: not set there).
    pub secrets: Vec<(SecretRule, Option<String>)>,
    /// The roots the gateway trusts for the hosts it injects secrets for, besides the system's
    /// (`sandbox.upstream_ca_file`).
    pub extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    /// What the worker trusts when a secret is injected (its clients are then told to trust
    /// the job's CA, and this with it, for every host): the system's roots and the operator's,
    /// in PEM, read once.
    pub roots_pem: String,
}

impl NetworkPolicy {
    /// The policy the settings describe; the secrets' values are read from `env`. A CA file
    /// that cannot be read is an error naming it.
    pub fn from_settings(
        settings: &Settings,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<NetworkPolicy> {
        Ok(match settings.sandbox.network {
            Network::None => NetworkPolicy::None,
            Network::Full => NetworkPolicy::Full,
            Network::Allowlist => {
                let (extra_roots, extra_pem) = match &settings.sandbox.upstream_ca_file {
                    Some(path) => read_roots(path)?,
                    None => (Vec::new(), String::new()),
                };
                let roots_pem = if settings.worker.secrets.is_empty() {
                    String::new()
                } else {
                    let mut pem = crate::egress::system_bundle_pem();
                    if !pem.ends_with('\n') && !pem.is_empty() {
                        pem.push('\n');
                    }
                    pem.push_str(&extra_pem);
                    pem
                };
                NetworkPolicy::Allowlist(Arc::new(Allowlist {
                    policy: Arc::new(Policy::new(settings.sandbox.allow.clone())),
                    secrets: settings
                        .worker
                        .secrets
                        .iter()
                        .map(|rule| (rule.clone(), env(&rule.env)))
                        .collect(),
                    extra_roots,
                    roots_pem,
                }))
            }
        })
    }

    /// The real values the gateway holds, for the redactor (no log, comment or page may show
    /// one, even one an upstream echoed).
    pub fn secret_values(&self) -> Vec<String> {
        match self {
            NetworkPolicy::Allowlist(list) => {
                list.secrets.iter().filter_map(|(_, v)| v.clone()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The policy in a few words, for the status comment: `none`, `the host's network`, or the
    /// allow list (the first few entries) and the secrets put in on the way.
    pub fn describe(&self) -> String {
        match self {
            NetworkPolicy::None => "none".to_owned(),
            NetworkPolicy::Full => "the host's network".to_owned(),
            NetworkPolicy::Allowlist(list) => {
                const SHOWN: usize = 4;
                let entries = list.policy.entries();
                let mut text = if entries.is_empty() {
                    "allow list (empty: nothing)".to_owned()
                } else {
                    let shown: Vec<String> = entries
                        .iter()
                        .take(SHOWN)
                        .map(|e| format!("`{e}`"))
                        .collect();
                    let mut t = format!("allow list: {}", shown.join(", "));
                    if entries.len() > SHOWN {
                        t.push_str(&format!(" and {} more", entries.len() - SHOWN));
                    }
                    t
                };
                if !list.secrets.is_empty() {
                    let names: Vec<String> = list
                        .secrets
                        .iter()
                        .map(|(r, _)| format!("`{}`", r.env))
                        .collect();
                    text.push_str(&format!("; {} by placeholder", names.join(", ")));
                }
                text
            }
        }
    }
}

/// `sandbox.upstream_ca_file`'s certificates, and the file's text as PEM (for the worker's
/// bundle); an error names the file. The doctor reads it the same way.
pub fn read_roots(
    path: &Path,
) -> anyhow::Result<(Vec<rustls::pki_types::CertificateDer<'static>>, String)> {
    let named = |e: &dyn std::fmt::Display| {
        anyhow::anyhow!("sandbox.upstream_ca_file {}: {e}", path.display())
    };
    let pem = std::fs::read(path).map_err(|e| named(&e))?;
    let certs = crate::egress::parse_pem_certs(&pem).map_err(|e| named(&e))?;
    let mut text = String::from_utf8(pem).map_err(|e| named(&e))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok((certs, text))
}

/// A job's gateway, made with its sandbox's spec and started with the worker.
pub struct JobEgress {
    listener: std::os::unix::net::UnixListener,
    policy: Arc<Policy>,
    secrets: Vec<Secret>,
    ca: Arc<JobCa>,
    extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
}

impl std::fmt::Debug for JobEgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JobEgress")
    }
}

/// What preparing a job's gateway gives: the sandbox's mount, the placeholders for the
/// worker's environment, and the gateway to start.
#[derive(Debug)]
pub struct PreparedEgress {
    pub mount: GatewayMount,
    pub placeholders: Vec<(String, String)>,
    pub gateway: JobEgress,
}

impl JobEgress {
    /// Makes the gateway's directory `dir` for one job: the CA (constrained to the secrets'
    /// hosts), the bundle when a secret needs it, the socket. A secret whose value the bot does
    /// not have, or cannot put in a header, is an error naming it.
    pub fn prepare(list: &Allowlist, dir: &Path) -> Result<PreparedEgress, JobError> {
        let mut secrets = Vec::new();
        for (rule, value) in &list.secrets {
            let Some(value) = value else {
                return Err(JobError::fatal(format!(
                    "[[worker.secrets]] {0}: {0} is not set in the bot's environment",
                    rule.env
                )));
            };
            let secret = Secret::new(rule.clone(), value.clone());
            if let Some(problem) = secret.value_problem() {
                return Err(JobError::fatal(format!("[[worker.secrets]] {problem}")));
            }
            secrets.push(secret);
        }
        let hosts: Vec<String> = secrets
            .iter()
            .flat_map(|s| s.rule.hosts.iter().cloned())
            .collect();
        let ca = JobCa::generate_for(&hosts)
            .map_err(|e| JobError::transient(format!("the job's CA: {e}")))?;
        let bundle = (!secrets.is_empty()).then(|| format!("{}{}", list.roots_pem, ca.cert_pem()));
        let io = |what: &str, e: std::io::Error| {
            JobError::transient(format!("the egress gateway's {what}: {e}"))
        };
        let mount = GatewayMount::create(dir, bundle.as_deref()).map_err(|e| io("directory", e))?;
        let listener = mount.bind().map_err(|e| io("socket", e))?;
        let placeholders = secrets
            .iter()
            .map(|s| (s.rule.env.clone(), s.placeholder.clone()))
            .collect();
        Ok(PreparedEgress {
            mount,
            placeholders,
            gateway: JobEgress {
                listener,
                policy: list.policy.clone(),
                secrets,
                ca: Arc::new(ca),
                extra_roots: list.extra_roots.clone(),
            },
        })
    }

    /// Starts the gateway, writing each connection to `log`.
    pub fn start(self, log: Arc<JobLog>) -> Result<RunningEgress, JobError> {
        let mut config = GatewayConfig::new(
            self.policy,
            self.secrets,
            self.ca,
            Arc::new(ToJobLog(log.clone())),
        );
        config.extra_roots = self.extra_roots;
        let gateway = Gateway::start_std(self.listener, config)
            .map_err(|e| JobError::transient(format!("the egress gateway's socket: {e}")))?;
        Ok(RunningEgress { gateway, log })
    }
}

/// The gateway while the worker runs.
pub struct RunningEgress {
    gateway: Gateway,
    log: Arc<JobLog>,
}

impl RunningEgress {
    /// Stops the gateway once the worker has ended, and writes what it let through and what it
    /// refused as the log's last egress line.
    pub async fn finish(self) -> Totals {
        let totals = self.gateway.shutdown().await;
        self.log.line(Stream::Stderr, &totals.to_string());
        totals
    }
}

/// What the worker reached, in a few words for the status comment: `reached pypi.example.com:443;
/// 2 refused`.
pub fn reached(totals: &Totals) -> String {
    let mut text = match totals.reached.len() {
        0 => "reached nothing".to_owned(),
        1..=3 => format!(
            "reached {}",
            totals
                .reached
                .iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        n => format!("reached {n} hosts"),
    };
    if totals.refused > 0 {
        text.push_str(&format!("; {} refused", totals.refused));
    }
    if totals.failed > 0 {
        text.push_str(&format!("; {} failed", totals.failed));
    }
    text
}

/// The gateway's lines, into the job's log (redacted and capped like the worker's own).
struct ToJobLog(Arc<JobLog>);

impl EgressLog for ToJobLog {
    fn connection(&self, connection: &crate::egress::Connection) {
        self.0.line(Stream::Stderr, &connection.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egress::AllowEntry;

    fn list(entries: &[&str], secrets: &[&str]) -> NetworkPolicy {
        let entries: Vec<AllowEntry> = entries.iter().map(|e| e.parse().unwrap()).collect();
        let secrets = secrets
            .iter()
            .map(|env| {
                let rule = SecretRule::new(
                    (*env).to_owned(),
                    vec!["api.example.com".to_owned()],
                    Some("x-api-key".to_owned()),
                    None,
                )
                .unwrap();
                (rule, Some("real_value".to_owned()))
            })
            .collect();
        NetworkPolicy::Allowlist(Arc::new(Allowlist {
            policy: Arc::new(Policy::new(entries)),
            secrets,
            extra_roots: Vec::new(),
            roots_pem: "-----BEGIN CERTIFICATE-----\nc3lzdGVt\n-----END CERTIFICATE-----\n"
                .to_owned(),
        }))
    }

    #[test]
    fn the_policy_reads_in_a_few_words() {
        assert_eq!(NetworkPolicy::None.describe(), "none");
        assert_eq!(NetworkPolicy::Full.describe(), "the host's network");
        assert_eq!(
            list(&["api.example.com:443"], &["MODEL_KEY"]).describe(),
            "allow list: `api.example.com:443`; `MODEL_KEY` by placeholder"
        );
        let many = list(
            &[
                "a.example:443",
                "b.example:443",
                "c.example:443",
                "d.example:443",
                "e.example:80",
            ],
            &[],
        );
        assert_eq!(
            many.describe(),
            "allow list: `a.example:443`, `b.example:443`, `c.example:443`, `d.example:443` and 1 more"
        );
        assert_eq!(list(&[], &[]).describe(), "allow list (empty: nothing)");
        assert_eq!(list(&[], &["MODEL_KEY"]).secret_values(), ["real_value"]);
    }

    #[test]
    fn what_was_reached_reads_in_a_few_words() {
        let mut totals = Totals::default();
        assert_eq!(reached(&totals), "reached nothing");
        totals.reached.insert("pypi.example.com:443".to_owned());
        totals.refused = 2;
        totals.failed = 1;
        assert_eq!(
            reached(&totals),
            "reached `pypi.example.com:443`; 2 refused; 1 failed"
        );
        for host in ["a:1", "b:1", "c:1"] {
            totals.reached.insert(host.to_owned());
        }
        assert!(reached(&totals).starts_with("reached 4 hosts"));
    }

    #[test]
    fn a_secret_the_bot_does_not_have_fails_the_job_by_name() {
        let NetworkPolicy::Allowlist(allow) = list(&["api.example.com:443"], &["MODEL_KEY"]) else {
            unreachable!()
        };
        let mut missing = Allowlist {
            policy: allow.policy.clone(),
            secrets: vec![(allow.secrets[0].0.clone(), None)],
            extra_roots: Vec::new(),
            roots_pem: allow.roots_pem.clone(),
        };
        let tmp = tempfile::tempdir().unwrap();
        let err = JobEgress::prepare(&missing, &tmp.path().join("egress")).unwrap_err();
        assert!(err.message.contains("MODEL_KEY is not set"), "{err:?}");
        assert!(!err.retry, "a missing secret is the operator's to fix");
        missing.secrets[0].1 = Some("real_value\n".to_owned());
        let err = JobEgress::prepare(&missing, &tmp.path().join("egress")).unwrap_err();
        assert!(err.message.contains("control character"), "{err:?}");
        // With the value: a directory with the bundle, and the placeholder for the worker.
        let prepared = JobEgress::prepare(&allow, &tmp.path().join("egress")).unwrap();
        assert!(prepared.mount.ca_bundle);
        let env = &prepared.placeholders;
        assert_eq!(env.len(), 1);
        assert_eq!(env[0].0, "MODEL_KEY");
        assert!(env[0].1.starts_with("fwph_"));
        // The bundle: the roots read at start, then the job's CA; never the value (`_` is not
        // in PEM's alphabet, so no certificate can hold it by chance).
        let bundle = std::fs::read_to_string(prepared.mount.dir.join("ca.pem")).unwrap();
        assert!(bundle.starts_with(&allow.roots_pem), "{bundle}");
        assert_eq!(bundle.matches("BEGIN CERTIFICATE").count(), 2, "{bundle}");
        assert!(!bundle.contains("real_value"));
    }
}
