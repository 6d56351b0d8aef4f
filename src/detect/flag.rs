//! What the detector says: a review flag on a file, or on one line of it.

use std::fmt;
use std::str::FromStr;

use super::change::RepoPath;
use super::registry::{RULES, RuleInfo, Source};

/// A rule of the detector. The ids are stable: JSON, SARIF and configuration use them, and a
/// later rule gets a new id rather than a renamed one. What each rule is (its id, default
/// severity, languages and help) is one row of [`super::registry::RULES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    SkipMarker,
    StubbedImport,
    ShadowModule,
    StrayBackup,
    /// The bot's own flag on a worker's change: the detector never raises it, since a person
    /// editing `.forgeward.toml` is doing their job.
    ConfigEdit,
    TestWeakened,
    ExpectationChanged,
    TestDeleted,
    FocusedTest,
    ForcedExit,
    AlwaysEqual,
    OutcomePatched,
    Suppression,
    SpecialCase,
    RunnerNarrowed,
    /// The bot's own flag: a test protected as read-only at the base changed all the same.
    ProtectedTestChanged,
    /// The bot's verification: a test fails on the base's tests and passes on the worker's.
    BaseTestsFail,
    /// The bot's verification: fewer tests collected than at the base.
    TestsLost,
}

impl Rule {
    /// Every rule, in the registry's order.
    pub fn all() -> impl Iterator<Item = Rule> {
        RULES.iter().map(|r| r.rule)
    }

    /// The rule's row in the registry.
    pub fn info(self) -> &'static RuleInfo {
        // The registry lists the rules in the enum's order (a unit test holds it to that).
        &RULES[self as usize]
    }

    /// Whether the detector raises it (`forgeward check`); the others are the bot's own.
    pub fn is_detector_rule(self) -> bool {
        self.info().source == Source::Detector
    }

    pub fn id(self) -> &'static str {
        self.info().id
    }

    /// One sentence for rule listings (SARIF rule metadata, line comments).
    pub fn description(self) -> &'static str {
        self.info().summary
    }

    /// The severity its flags have unless the repository says otherwise.
    pub fn severity(self) -> Severity {
        self.info().severity
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
        Rule::all().find(|r| r.id() == s).ok_or_else(|| {
            let ids: Vec<&str> = Rule::all().map(Rule::id).collect();
            format!("unknown rule '{s}', expected one of {}", ids.join(", "))
        })
    }
}

/// How much a flag matters. Ordered: `Note < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Note, Severity::Warning, Severity::Error];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = String;

    fn from_str(s: &str) -> Result<Severity, String> {
        Severity::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| format!("unknown severity '{s}', expected error, warning or note"))
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
    /// For a flag about something the change removed (a deleted test), where it was: the line
    /// in the base version of `path`. Such a flag has no `line`.
    pub removed_line: Option<u32>,
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
