//! The sections of `forgeward.toml` that say how a job runs: `[worker]` (what runs), `[sandbox]`
//! (where, and within which limits) and `[git]` (how the result is committed).
//!
//! Like every section, each key can be set by `FORGEWARD_<SECTION>_<KEY>`; lists from the
//! environment are written as TOML arrays (`FORGEWARD_WORKER_COMMAND='["my-agent", "--yes"]'`).

use std::fmt;
use std::time::Duration;

use serde::Deserialize;

use super::duration::HumanDuration;

/// Which sandbox runs the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// bubblewrap: the host's toolchains, read-only, in namespaces of their own.
    Bwrap,
    /// A container of the Docker Engine, started by image ID.
    Docker,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Bwrap => "bwrap",
            Backend::Docker => "docker",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;

    fn from_str(s: &str) -> Result<Backend, String> {
        match s {
            "bwrap" => Ok(Backend::Bwrap),
            "docker" => Ok(Backend::Docker),
            _ => Err(format!("unknown sandbox '{s}', expected bwrap or docker")),
        }
    }
}

/// Whether the worker may reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// No interface but its own loopback: the default.
    None,
    /// The host's network, all of it.
    Full,
    /// Only the hosts of `sandbox.allow`, through the bot's egress gateway (for agents that
    /// call a model's API from inside; `[[worker.secrets]]` keeps the key itself outside).
    Allowlist,
}

/// A size written for people: `512M`, `4G`, `1024K`, or bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => Ok(ByteSize(n)),
            Raw::Text(s) => parse_size(&s)
                .map(ByteSize)
                .map_err(serde::de::Error::custom),
        }
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(&str, u64); 3] = [("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)];
        for (unit, size) in UNITS {
            if self.0 >= size && self.0.is_multiple_of(size) {
                return write!(f, "{}{unit}", self.0 / size);
            }
        }
        write!(f, "{}", self.0)
    }
}

/// Parses `512M`, `4G`, `64K`, `1024` (bytes). Units are powers of 1024.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || format!("invalid size '{s}', expected e.g. 512M, 4G or a number of bytes");
    let t = s.trim();
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(bad()),
    };
    n.checked_mul(1 << shift).ok_or_else(bad)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxSection {
    pub backend: Backend,
    /// Wall-clock time a worker may run; then its whole process tree is killed.
    pub timeout: HumanDuration,
    /// CPU time a worker may use.
    pub cpu: HumanDuration,
    pub memory: ByteSize,
    /// Processes and threads at once: enough for a test suite, not for a fork bomb.
    pub pids: u32,
    /// The largest single file a worker may write.
    pub file_size: ByteSize,
    /// What the workspace, `/tmp` and `$HOME` may grow by in all.
    pub disk: ByteSize,
    pub network: Network,
    /// With `network = "allowlist"`: what the worker may reach (`host:port`, `*.suffix:port`,
    /// an address or a network), through the egress gateway only.
    pub allow: Vec<crate::egress::AllowEntry>,
    /// More CA certificates (PEM) the gateway trusts for the hosts it injects secrets for,
    /// besides the system's.
    pub upstream_ca_file: Option<std::path::PathBuf>,
    /// The image the Docker backend's sandbox images are built on.
    pub docker_base: String,
}

impl Default for SandboxSection {
    fn default() -> Self {
        SandboxSection {
            backend: Backend::Bwrap,
            timeout: HumanDuration(Duration::from_secs(30 * 60)),
            cpu: HumanDuration(Duration::from_secs(60 * 60)),
            memory: ByteSize(4 << 30),
            pids: 512,
            file_size: ByteSize(1 << 30),
            disk: ByteSize(10 << 30),
            network: Network::None,
            allow: Vec::new(),
            upstream_ca_file: None,
            docker_base: "debian:bookworm-slim".to_owned(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkerSection {
    /// The worker's program and arguments, as seen inside the sandbox.
    pub command: Vec<String>,
    /// The image the Docker backend runs the worker in. Empty: an image built from the
    /// repository's dependency files (Python, Node, Go, Rust) on the sandbox base.
    pub image: Option<String>,
    /// Names of variables of the bot's environment the worker receives (a model's API key, say).
    /// Nothing else of the bot's environment reaches it, and never a forge token.
    pub env: Vec<String>,
    /// What the status comment calls the worker; by default its program's file name.
    pub name: Option<String>,
    /// Whether the worker may change the tests the base has, for every repository whose
    /// `.forgeward.toml` does not say (`[job] tests`).
    pub tests: TestsAccess,
    /// Secrets the worker holds only as placeholders (`[[worker.secrets]]`): the egress gateway
    /// puts the value, read from the bot's environment, into requests to their hosts.
    pub secrets: Vec<crate::egress::SecretRule>,
}

/// `[verify]` of the bot: whether it runs each repository's own tests on a worker's change (a
/// repository's `[verify] enabled` decides for itself), and for how long a run may go.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VerifySection {
    pub enabled: bool,
    /// One run of a suite; a repository's `[verify] timeout` overrides it.
    pub timeout: HumanDuration,
}

impl Default for VerifySection {
    fn default() -> Self {
        VerifySection {
            enabled: true,
            timeout: HumanDuration(Duration::from_secs(10 * 60)),
        }
    }
}

/// `[environment]` of the bot: how each repository's environment is prepared before its
/// worker and its tests run (the repository's `[environment] setup`, else the setup its files
/// call for), what the setup may reach, and how long a prepared environment is kept.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnvironmentSection {
    /// `true` (the default) prepares each repository's environment before its worker and its
    /// tests; `false` gives them the bare checkout, and the phase is not run. A derived setup
    /// (the repository names none) runs only when `allow` lists a registry; without one the
    /// job says so and goes on with the bare checkout, its declared toolchains still checked.
    pub enabled: bool,
    /// What the setup may reach (`host:port`, `*.suffix:port`, an address or a network): the
    /// package registries and mirrors the operator uses, through the egress gateway only.
    /// Empty: the setup has no network.
    pub allow: Vec<crate::egress::AllowEntry>,
    /// Variables the setup receives: a name, whose value is the bot's own (a mirror's address:
    /// `PIP_INDEX_URL`, `npm_config_registry`, `GOPROXY`), or `NAME=value`. Never a secret:
    /// the setup's output is shown to people.
    pub env: Vec<String>,
    /// The whole setup (every step) may take this long.
    pub timeout: HumanDuration,
    /// A prepared environment no job used for this long is removed.
    pub keep_for: HumanDuration,
    /// The prepared environments kept may take this much disk in all; the least recently
    /// used go first.
    pub max_size: ByteSize,
}

impl Default for EnvironmentSection {
    fn default() -> Self {
        EnvironmentSection {
            enabled: true,
            allow: Vec::new(),
            env: Vec::new(),
            timeout: HumanDuration(Duration::from_secs(20 * 60)),
            keep_for: HumanDuration(Duration::from_secs(14 * 24 * 3600)),
            max_size: ByteSize(20 << 30),
        }
    }
}

/// Which pull requests the bot verifies (runs their repository's tests on, in the sandbox)
/// besides checking their diff: `[review] verify` of the bot, which a repository's own
/// `[review] verify` may narrow but never widen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewVerify {
    /// None: every pull request gets the static check only.
    Off,
    /// Those an agent wrote ([`crate::agents::authorship`]).
    #[default]
    Agents,
    /// Every pull request.
    All,
}

impl ReviewVerify {
    /// The narrower of the bot's setting and a repository's.
    pub fn narrowed(self, by: Option<ReviewVerify>) -> ReviewVerify {
        by.map_or(self, |repo| self.min(repo))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ReviewVerify::Off => "off",
            ReviewVerify::Agents => "agents",
            ReviewVerify::All => "all",
        }
    }
}

impl std::fmt::Display for ReviewVerify {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[review]` of the bot: what its check of a pull request it did not make does beyond the
/// static detector.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReviewSection {
    /// Which pull requests are verified: `agents` (the default), `all` or `off`.
    pub verify: ReviewVerify,
    /// Pull-request checks one runner works on at once, apart from its worker jobs
    /// (`[jobs] concurrency`): a burst of pushes cannot keep a worker job waiting.
    pub concurrency: usize,
    /// More accounts, commit e-mails and branch prefixes that mean an agent wrote the pull
    /// request, beside the agents forgeward knows ([`crate::agents::KNOWN`]).
    pub agent_logins: Vec<String>,
    pub agent_emails: Vec<String>,
    pub agent_branch_prefixes: Vec<String>,
}

impl ReviewSection {
    /// The operator's additions to the agents forgeward knows.
    pub fn agents(&self) -> crate::agents::AgentList {
        crate::agents::AgentList {
            logins: self.agent_logins.clone(),
            emails: self.agent_emails.clone(),
            branch_prefixes: self.agent_branch_prefixes.clone(),
        }
    }
}

impl Default for ReviewSection {
    fn default() -> Self {
        ReviewSection {
            verify: ReviewVerify::Agents,
            concurrency: 1,
            agent_logins: Vec::new(),
            agent_emails: Vec::new(),
            agent_branch_prefixes: Vec::new(),
        }
    }
}

/// What the worker may do to the files that are tests at the base.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestsAccess {
    /// Edit them like any file (the detector still judges what it did).
    #[default]
    Writable,
    /// Read them only: the sandbox mounts them read-only, so an edit fails inside it.
    ReadOnly,
}

impl std::fmt::Display for TestsAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TestsAccess::Writable => "writable",
            TestsAccess::ReadOnly => "read-only",
        })
    }
}

impl WorkerSection {
    /// The worker's name for people.
    pub fn display_name(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        self.command
            .first()
            .map(|program| program.rsplit('/').next().unwrap_or(program).to_owned())
            .unwrap_or_else(|| "worker".to_owned())
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GitSection {
    /// The author and committer of the bot's commits; the person who triggered the job is
    /// credited with a `Co-authored-by` trailer.
    pub author_name: String,
    pub author_email: String,
    /// Branches for issue jobs are `<prefix><issue number>`.
    pub branch_prefix: String,
}

impl Default for GitSection {
    fn default() -> Self {
        GitSection {
            author_name: "forgeward".to_owned(),
            author_email: "forgeward@users.noreply.localhost".to_owned(),
            branch_prefix: "forgeward/issue-".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("4gib"), Ok(4 << 30));
        assert_eq!(parse_size("1024"), Ok(1024));
        assert!(parse_size("4X").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("-1G").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(ByteSize(4 << 30).to_string(), "4G");
        assert_eq!(ByteSize(1000).to_string(), "1000");
    }

    #[test]
    fn the_worker_is_named_after_its_program() {
        let worker = WorkerSection {
            command: vec!["/usr/local/bin/my-agent".to_owned(), "--yes".to_owned()],
            ..WorkerSection::default()
        };
        assert_eq!(worker.display_name(), "my-agent");
        assert_eq!(WorkerSection::default().display_name(), "worker");
    }

    #[test]
    fn the_operators_default_for_tests() {
        let worker: WorkerSection = toml::from_str("tests = \"read-only\"").expect("valid");
        assert_eq!(worker.tests, TestsAccess::ReadOnly);
        assert_eq!(WorkerSection::default().tests, TestsAccess::Writable);
        let err = toml::from_str::<WorkerSection>("tests = \"locked\"")
            .expect_err("not a value")
            .to_string();
        assert!(err.contains("expected `writable` or `read-only`"), "{err}");
    }
}
