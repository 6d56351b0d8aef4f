//! The per-repository configuration, `.forgeward.toml`.
//!
//! Parsing only: the caller decides which revision the file is read from (the bot reads the
//! base, never what a worker wrote). Unknown keys and bad values are errors that name the line
//! and column, never silently ignored.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use serde::Deserialize;

use crate::config::pipeline::{ByteSize, TestsAccess};
use crate::detect::paths::compile_glob;
use crate::detect::{AllowRule, Options, Rule, RuleSetting, Severity};
use crate::text::line_column;

/// The configuration file's name, at the repository's root.
pub const FILE_NAME: &str = ".forgeward.toml";

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoConfig {
    #[serde(default)]
    pub check: CheckConfig,
    #[serde(default)]
    pub job: JobConfig,
    #[serde(default)]
    pub verify: VerifyConfig,
    #[serde(default)]
    pub environment: EnvironmentConfig,
    #[serde(default)]
    pub review: ReviewConfig,
}

/// `[review]`: how the bot checks this repository's pull requests that it did not make.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewConfig {
    /// Which pull requests are verified: `off`, `agents` or `all`. It narrows the bot's
    /// `[review] verify` and never widens it (the bot's operator pays for the runs).
    pub verify: Option<crate::config::pipeline::ReviewVerify>,
}

/// `[environment]`: how this repository's environment is prepared before its worker and its
/// tests run.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentConfig {
    /// Commands run in `/workspace` at the base commit, in order (`["pip install -e .[test]"]`);
    /// they replace the setup the repository's files call for. `[]`: no setup at all.
    pub setup: Option<toml::Spanned<Vec<String>>>,
    /// Toolchain versions the repository needs (`go = "1.22"`, `python = ">=3.10"`,
    /// `node = "20"`, `rust = "1.80"`): they win over what its files declare.
    #[serde(default)]
    pub toolchains: BTreeMap<toml::Spanned<String>, String>,
}

/// The tools `[environment.toolchains]` may name.
pub const TOOLCHAINS: [&str; 4] = ["python", "node", "go", "rust"];

/// `[verify]`: how the bot runs this repository's own tests to check a worker's change.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyConfig {
    /// `false` turns verification off for this repository; unset, the bot's setting decides.
    pub enabled: Option<bool>,
    /// The test command, run in `/workspace`; unset, the usual one is detected.
    pub command: Option<toml::Spanned<Vec<String>>>,
    /// How long one run may take.
    pub timeout: Option<crate::config::server::HumanDuration>,
    /// What the command reports, and where: required with `command`.
    pub results: Option<toml::Spanned<ResultsConfig>>,
}

/// `results = { format = "junit", path = "/job-out/verify/junit.xml" }`, or
/// `{ format = "go-test-json" }` / `{ format = "libtest" }` / `{ format = "jest-json", path = … }`
/// (the first two read from the command's output).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultsConfig {
    pub format: ResultsFormat,
    /// A file (or a glob, for one file per suite) the command writes inside the sandbox.
    pub path: Option<toml::Spanned<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResultsFormat {
    Junit,
    JestJson,
    GoTestJson,
    Libtest,
}

impl ResultsFormat {
    /// Whether the results are a file the command writes (else its output).
    pub fn is_file(self) -> bool {
        matches!(self, ResultsFormat::Junit | ResultsFormat::JestJson)
    }
}

/// `[job]`: what a worker's job on this repository may do.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    /// `read-only` mounts the base's tests read-only in the sandbox; without it, the bot's own
    /// `worker.tests` decides (by default `writable`).
    pub tests: Option<TestsAccess>,
}

/// `[check]`: how the detector treats this repository.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    /// Extra globs of test files, on top of each ecosystem's conventions.
    #[serde(default)]
    pub test_paths: Vec<toml::Spanned<String>>,
    /// Globs of files the detector leaves alone.
    #[serde(default)]
    pub ignore: Vec<toml::Spanned<String>>,
    /// Flags accepted ahead of time, each with its reason.
    #[serde(default)]
    pub allow: Vec<Allow>,
    /// `block` refuses a flagged push (exit 1); `warn` reports and lets it through.
    pub mode: Option<Mode>,
    /// The lowest severity that makes a check fail in `block` mode (default `warning`).
    #[serde(default, deserialize_with = "severity")]
    pub fail_on: Option<Severity>,
    /// Per rule: a severity, or `off`.
    #[serde(default)]
    pub rules: BTreeMap<toml::Spanned<String>, toml::Spanned<String>>,
    /// The largest changed file read as text (`"16M"`; default 4 MiB); a larger one is judged
    /// by its path, and the report says it was skipped.
    pub max_file_size: Option<ByteSize>,
}

impl CheckConfig {
    /// The severity at which a check fails in `block` mode.
    pub fn fail_on(&self) -> Severity {
        self.fail_on.unwrap_or(Severity::Warning)
    }

    /// The largest changed file read as text, in bytes.
    pub fn max_file_size(&self) -> u64 {
        self.max_file_size
            .map_or(crate::detect::MAX_TEXT_SIZE as u64, |s| s.0)
    }

    /// What the detector is told: the globs, the allows and each rule's setting. The
    /// configuration was validated when parsed, so a value that does not read here cannot
    /// occur; it is passed over rather than trusted.
    pub fn options(&self) -> Options {
        let rules = self
            .rules
            .iter()
            .filter_map(|(rule, setting)| {
                Some((
                    rule.get_ref().parse().ok()?,
                    setting.get_ref().parse().ok()?,
                ))
            })
            .collect();
        Options {
            test_paths: self.test_paths().map(str::to_owned).collect(),
            ignore: self.ignore().map(str::to_owned).collect(),
            allow: self
                .allow
                .iter()
                .map(|a| AllowRule {
                    rule: a.rule,
                    path: a.path.get_ref().clone(),
                    reason: a.reason.get_ref().clone(),
                })
                .collect(),
            rules,
            fail_on: self.fail_on(),
            max_file_size: self.max_file_size(),
        }
    }

    pub fn test_paths(&self) -> impl Iterator<Item = &str> {
        self.test_paths.iter().map(|s| s.get_ref().as_str())
    }

    pub fn ignore(&self) -> impl Iterator<Item = &str> {
        self.ignore.iter().map(|s| s.get_ref().as_str())
    }
}

/// `{ rule = "skip-marker", path = "tests/legacy/**", reason = "…" }`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allow {
    #[serde(deserialize_with = "rule")]
    pub rule: Rule,
    pub path: toml::Spanned<String>,
    pub reason: toml::Spanned<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Block,
    Warn,
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "block" => Ok(Mode::Block),
            "warn" => Ok(Mode::Warn),
            _ => Err(format!("unknown mode '{s}', expected block or warn")),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Block => "block",
            Mode::Warn => "warn",
        })
    }
}

fn rule<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Rule, D::Error> {
    let s = String::deserialize(d)?;
    s.parse().map_err(serde::de::Error::custom)
}

fn severity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Severity>, D::Error> {
    let s = String::deserialize(d)?;
    s.parse().map(Some).map_err(serde::de::Error::custom)
}

/// A configuration file that cannot be used, with the place it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl RepoConfig {
    /// Parses the text of `.forgeward.toml` (`file` names it in errors).
    pub fn parse(file: &str, text: &str) -> Result<RepoConfig, ConfigError> {
        let at = |span: Option<Range<usize>>, message: String| {
            let (line, column) = line_column(text, span.map_or(0, |s| s.start));
            ConfigError {
                file: file.to_owned(),
                line,
                column,
                message,
            }
        };
        let config: RepoConfig = toml::from_str(text)
            .map_err(|e| at(e.span(), e.message().replace('\n', " ").trim().to_owned()))?;
        let check = &config.check;
        for glob in check.test_paths.iter().chain(&check.ignore) {
            compile_glob(glob.get_ref()).map_err(|e| at(Some(glob.span()), e.to_string()))?;
        }
        for (rule, setting) in &check.rules {
            rule.get_ref()
                .parse::<Rule>()
                .map_err(|e| at(Some(rule.span()), e))?;
            setting
                .get_ref()
                .parse::<RuleSetting>()
                .map_err(|e| at(Some(setting.span()), e))?;
        }
        let verify = &config.verify;
        if let Some(command) = &verify.command
            && command
                .get_ref()
                .first()
                .is_none_or(|p| p.trim().is_empty())
        {
            return Err(at(
                Some(command.span()),
                "[verify] command needs a program to run".to_owned(),
            ));
        }
        match (&verify.command, &verify.results) {
            (Some(command), None) => {
                return Err(at(
                    Some(command.span()),
                    "[verify] command needs `results`, saying what the command reports and where"
                        .to_owned(),
                ));
            }
            (_, Some(spanned)) => {
                match (&spanned.get_ref().path, spanned.get_ref().format.is_file()) {
                    (None, true) => {
                        return Err(at(
                            Some(spanned.span()),
                            "[verify] results of this format are a file: give its `path`"
                                .to_owned(),
                        ));
                    }
                    (Some(path), _)
                        if !path.get_ref().starts_with("/job-out/")
                            && !path.get_ref().starts_with("/workspace/") =>
                    {
                        return Err(at(
                        Some(path.span()),
                        "[verify] results.path must be under /job-out/ or /workspace/, where the bot can read it"
                            .to_owned(),
                    ));
                    }
                    _ => {}
                }
            }
            (None, None) => {}
        }
        let environment = &config.environment;
        if let Some(setup) = &environment.setup
            && setup.get_ref().iter().any(|c| c.trim().is_empty())
        {
            return Err(at(
                Some(setup.span()),
                "[environment] setup has an empty command".to_owned(),
            ));
        }
        for tool in environment.toolchains.keys() {
            if !TOOLCHAINS.contains(&tool.get_ref().as_str()) {
                return Err(at(
                    Some(tool.span()),
                    format!(
                        "[environment.toolchains] knows {}, not `{}`",
                        TOOLCHAINS.join(", "),
                        tool.get_ref()
                    ),
                ));
            }
        }
        for allow in &check.allow {
            compile_glob(allow.path.get_ref())
                .map_err(|e| at(Some(allow.path.span()), e.to_string()))?;
            if allow.reason.get_ref().trim().is_empty() {
                return Err(at(
                    Some(allow.reason.span()),
                    "an allow needs a reason a reviewer can read".to_owned(),
                ));
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        RepoConfig::parse(".forgeward.toml", text)
            .expect_err("should be rejected")
            .to_string()
    }

    #[test]
    fn full_config() {
        let c = RepoConfig::parse(
            ".forgeward.toml",
            r#"
[check]
mode = "warn"
test_paths = ["qa/**"]
ignore = ["vendor/**", "*.generated.py"]
allow = [
  { rule = "skip-marker", path = "tests/legacy/**", reason = "quarantined, see #12" },
]
"#,
        )
        .expect("valid");
        assert_eq!(c.check.mode, Some(Mode::Warn));
        assert_eq!(c.check.test_paths().collect::<Vec<_>>(), vec!["qa/**"]);
        assert_eq!(c.check.allow[0].rule, Rule::SkipMarker);
    }

    #[test]
    fn rule_settings_and_fail_on() {
        let c = RepoConfig::parse(
            ".forgeward.toml",
            "[check]\nfail_on = \"error\"\n[check.rules]\nexpectation-changed = \"warning\"\nskip-marker = \"off\"\n",
        )
        .expect("valid");
        assert_eq!(c.check.fail_on(), Severity::Error);
        let o = c.check.options();
        assert_eq!(
            o.rules.get(&Rule::ExpectationChanged),
            Some(&RuleSetting::On(Severity::Warning))
        );
        assert_eq!(o.rules.get(&Rule::SkipMarker), Some(&RuleSetting::Off));
        assert_eq!(
            RepoConfig::default().check.fail_on(),
            Severity::Warning,
            "warnings fail by default"
        );
        let e = err("[check.rules]\nexpectation-changd = \"note\"\n");
        assert!(
            e.starts_with(".forgeward.toml:2:1: unknown rule 'expectation-changd'"),
            "{e}"
        );
        let e = err("[check.rules]\ntest-deleted = \"loud\"\n");
        assert!(
            e.starts_with(
                ".forgeward.toml:2:16: unknown setting 'loud', expected error, warning, note or off"
            ),
            "{e}"
        );
        let e = err("[check]\nfail_on = \"all\"\n");
        assert!(
            e.starts_with(".forgeward.toml:2:11: unknown severity 'all'"),
            "{e}"
        );
    }

    #[test]
    fn empty_file_is_the_default() {
        let c = RepoConfig::parse(".forgeward.toml", "").expect("valid");
        assert!(c.check.mode.is_none() && c.check.allow.is_empty());
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        assert_eq!(
            err("[check]\nmode = \"warn\"\n  tset_paths = []\n"),
            ".forgeward.toml:3:3: unknown field `tset_paths`, expected one of `test_paths`, `ignore`, `allow`, `mode`, `fail_on`, `rules`, `max_file_size`"
        );
        let e = err("[chek]\n");
        assert!(
            e.starts_with(".forgeward.toml:1:2: unknown field `chek`"),
            "{e}"
        );
    }

    #[test]
    fn job_tests_access() {
        let c =
            RepoConfig::parse(".forgeward.toml", "[job]\ntests = \"read-only\"\n").expect("valid");
        assert_eq!(c.job.tests, Some(TestsAccess::ReadOnly));
        assert_eq!(RepoConfig::default().job.tests, None);
        assert_eq!(
            err("[job]\ntests = \"readonly\"\n"),
            ".forgeward.toml:2:9: unknown variant `readonly`, expected `writable` or `read-only`"
        );
        assert!(
            err("[job]\ntest = \"read-only\"\n")
                .starts_with(".forgeward.toml:2:1: unknown field `test`")
        );
    }

    #[test]
    fn verify_section() {
        let c = RepoConfig::parse(
            ".forgeward.toml",
            "[verify]\ncommand = [\"make\", \"test\"]\ntimeout = \"10m\"\nresults = { format = \"junit\", path = \"/job-out/verify/junit.xml\" }\n",
        )
        .expect("valid");
        let v = &c.verify;
        assert_eq!(
            v.command.as_ref().map(|c| c.get_ref().clone()),
            Some(vec!["make".to_owned(), "test".to_owned()])
        );
        assert_eq!(v.timeout.map(|t| t.0.as_secs()), Some(600));
        assert_eq!(
            v.results.as_ref().map(|r| r.get_ref().format),
            Some(ResultsFormat::Junit)
        );
        let off =
            RepoConfig::parse(".forgeward.toml", "[verify]\nenabled = false\n").expect("valid");
        assert_eq!(off.verify.enabled, Some(false));
        for (text, expected) in [
            (
                "[verify]\ncommand = [\"make\", \"test\"]\n",
                ".forgeward.toml:2:11: [verify] command needs `results`",
            ),
            (
                "[verify]\ncommand = []\nresults = { format = \"libtest\" }\n",
                ".forgeward.toml:2:11: [verify] command needs a program",
            ),
            (
                "[verify]\ncommand = [\"t\"]\nresults = { format = \"junit\" }\n",
                ".forgeward.toml:3:11: [verify] results of this format are a file",
            ),
            (
                "[verify]\ncommand = [\"t\"]\nresults = { format = \"junit\", path = \"/tmp/j.xml\" }\n",
                ".forgeward.toml:3:38: [verify] results.path must be under /job-out/",
            ),
            (
                "[verify]\nresults = { format = \"tap\" }\n",
                ".forgeward.toml:2:22: unknown variant `tap`",
            ),
            (
                "[verify]\ntimeout = \"soon\"\n",
                ".forgeward.toml:2:11: invalid duration 'soon'",
            ),
            (
                "[verify]\nenable = true\n",
                ".forgeward.toml:2:1: unknown field `enable`",
            ),
        ] {
            let e = err(text);
            assert!(e.starts_with(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn bad_values_name_line_and_column() {
        let e = err("[check]\nmode = \"loud\"\n");
        assert!(
            e.starts_with(".forgeward.toml:2:8: unknown variant `loud`"),
            "{e}"
        );
        let e = err("[check]\nallow = [{ rule = \"skip\", path = \"x\", reason = \"r\" }]\n");
        assert!(
            e.starts_with(".forgeward.toml:2:19: unknown rule 'skip'"),
            "{e}"
        );
        let e = err("[check]\nignore = [\"a/[b\"]\n");
        assert!(
            e.starts_with(".forgeward.toml:2:11: invalid glob 'a/[b'"),
            "{e}"
        );
        let e =
            err("[check]\nallow = [{ rule = \"stray-backup\", path = \"x\", reason = \" \" }]\n");
        assert!(e.contains("needs a reason"), "{e}");
        let e = err("[check]\nallow = [{ rule = \"stray-backup\", path = \"x\" }]\n");
        assert!(e.contains("missing field `reason`"), "{e}");
        let e = err("[check\n");
        assert!(e.starts_with(".forgeward.toml:1:"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}
