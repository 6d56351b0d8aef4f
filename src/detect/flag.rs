//! What the detector says: a review flag on a file, or on one line of it.

use std::fmt;
use std::str::FromStr;

use super::change::RepoPath;

/// A rule of the detector. The ids are stable: JSON, SARIF and configuration use them, and a
/// later rule gets a new id rather than a renamed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    SkipMarker,
    StubbedImport,
    ShadowModule,
    StrayBackup,
    /// The bot's own flag on a worker's change: the detector never raises it, since a person
    /// editing `.forgeward.toml` is doing their job.
    ConfigEdit,
}

impl Rule {
    pub const ALL: [Rule; 5] = [
        Rule::SkipMarker,
        Rule::StubbedImport,
        Rule::ShadowModule,
        Rule::StrayBackup,
        Rule::ConfigEdit,
    ];

    /// Whether the detector raises it (`forgeward check`); the others are the bot's own.
    pub fn is_detector_rule(self) -> bool {
        self != Rule::ConfigEdit
    }

    pub fn id(self) -> &'static str {
        match self {
            Rule::SkipMarker => "skip-marker",
            Rule::StubbedImport => "stubbed-import",
            Rule::ShadowModule => "shadow-module",
            Rule::StrayBackup => "stray-backup",
            Rule::ConfigEdit => "config-edit",
        }
    }

    /// One sentence for rule listings (SARIF rule metadata, `--help`).
    pub fn description(self) -> &'static str {
        match self {
            Rule::SkipMarker => {
                "A test is newly marked skipped, ignored, expected to fail or disabled."
            }
            Rule::StubbedImport => {
                "Production code newly carries on without a dependency instead of failing to import it."
            }
            Rule::ShadowModule => {
                "A new local module is named like a declared dependency and would be imported instead of it."
            }
            Rule::StrayBackup => "A new file or directory is a backup copy left behind.",
            Rule::ConfigEdit => {
                "The worker edited .forgeward.toml, the configuration that decides what is flagged."
            }
        }
    }

    pub fn severity(self) -> Severity {
        Severity::Warning
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Rule {
    type Err = String;

    fn from_str(s: &str) -> Result<Rule, String> {
        Rule::ALL.into_iter().find(|r| r.id() == s).ok_or_else(|| {
            let ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
            format!("unknown rule '{s}', expected one of {}", ids.join(", "))
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One review flag. `line` is the exact line in the new file, for a line comment; a flag about a
/// whole file (a shadowing module, a backup copy) has none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flag {
    pub rule: Rule,
    pub severity: Severity,
    pub path: RepoPath,
    pub line: Option<u32>,
    pub message: String,
    /// The flagged line as it reads in the new file, trimmed.
    pub snippet: Option<String>,
}

impl Flag {
    /// The order flags are reported in: by path, then line, then rule.
    pub fn sort_key(&self) -> (&RepoPath, u32, Rule) {
        (&self.path, self.line.unwrap_or(0), self.rule)
    }
}
