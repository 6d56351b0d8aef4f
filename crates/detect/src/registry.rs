//! The rules (`Rule`), their severities (`Severity`) and who raises them (`Source`).
//!
//! Each rule's registry entry (id, default severity, languages, summary, help) is declared in
//! its own file under [`super::rules`], and `rules::RULES` lists them in the order of the
//! [`Rule`] enum, so a rule finds its entry by index: what SARIF lists, what `.forgeward.toml`
//! names in `[check.rules]`, and where each rule's default severity is chosen.
//!
//! Default severities are chosen so that a reviewer of an ordinary human pull request is not
//! flooded and still sees every weakened test of a worker:
//! - `error`: something that is almost never right to merge (a focused test silently stops the
//!   rest of the suite from running);
//! - `warning`: a sign that a test now checks less or no longer runs; the pull request check posts
//!   it as a line comment;
//! - `note`: a change that is routine in honest work but worth a glance on a worker's change
//!   (an expected value edited along with the behaviour it checks); a pull request check lists it
//!   in its summary only, while a worker job shows it like any other flag.

use std::fmt;
use std::str::FromStr;

/// A rule of the detector. The ids are stable: JSON, SARIF and configuration use them, and a
/// later rule gets a new id rather than a renamed one. What each rule is (its id, default
/// severity, languages and help) is its entry in `rules::RULES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    SkipMarker,
    StubbedImport,
    ShadowModule,
    StrayBackup,
    /// A change edits `.forgeward.toml`: raised by every check (the configuration in force is
    /// always the base's), not by the detector, which knows no configuration files.
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
    FailureSwallowed,
    UnitMocked,
    /// The bot's own flag: a test protected as read-only at the base changed all the same.
    ProtectedTestChanged,
    /// The bot's verification: a test fails on the base's tests and passes on the worker's.
    BaseTestsFail,
    /// The bot's verification: fewer tests collected than at the base.
    TestsLost,
    /// The bot's verification: a test that still fails with its base version on the change,
    /// and passes only with the change's rewrite of it.
    TestRewritten,
    /// The bot's verification: a new or changed test that passes on the base's code as well,
    /// so shows nothing about the change's fix.
    TestsVacuous,
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

/// Who raises a rule's flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The detector, on any change (`forgeward check`, pull request checks, worker jobs).
    Detector,
    /// The bot, on a worker's change only.
    Bot,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RULES;

    #[test]
    fn rows_follow_the_enum_and_ids_are_unique() {
        for (i, info) in RULES.iter().enumerate() {
            assert_eq!(info.rule as usize, i, "{} is out of order", info.id);
            assert_eq!(info.rule.id(), info.id);
            assert!(!info.summary.is_empty() && !info.help.is_empty());
        }
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    #[test]
    fn ids_parse_back() {
        for rule in Rule::all() {
            assert_eq!(rule.id().parse::<Rule>(), Ok(rule));
        }
        assert!("skip".parse::<Rule>().is_err());
        assert_eq!("note".parse::<Severity>(), Ok(Severity::Note));
        assert!("loud".parse::<Severity>().is_err());
    }
}
