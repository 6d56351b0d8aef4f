//! What a detector is told about one repository: its own type, so that the detector does not
//! depend on how a configuration file spells it.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use super::flag::{Rule, Severity};

/// The detector's settings for one repository. `Default` is every ecosystem's conventions, every
/// rule at its default severity, nothing allowed.
#[derive(Debug, Clone)]
pub struct Options {
    /// Globs of test files beyond each ecosystem's conventions.
    pub test_paths: Vec<String>,
    /// Globs of files the detector leaves alone.
    pub ignore: Vec<String>,
    /// Flags accepted ahead of time.
    pub allow: Vec<AllowRule>,
    /// Rules whose setting differs from their default severity.
    pub rules: HashMap<Rule, RuleSetting>,
    /// The lowest severity that fails a check (`Note` below the default would fail on
    /// everything).
    pub fail_on: Severity,
    /// The largest changed file read as text, in bytes; a larger one is judged by its path
    /// only, and the report says it was skipped.
    pub max_file_size: u64,
}

/// A flag accepted ahead of time: the rule, the files (a glob) and the reason a reviewer reads.
#[derive(Debug, Clone)]
pub struct AllowRule {
    pub rule: Rule,
    pub path: String,
    pub reason: String,
}

/// A rule's setting: off, or on at a severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleSetting {
    Off,
    On(Severity),
}

impl FromStr for RuleSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<RuleSetting, String> {
        if s == "off" {
            return Ok(RuleSetting::Off);
        }
        s.parse()
            .map(RuleSetting::On)
            .map_err(|_| format!("unknown setting '{s}', expected error, warning, note or off"))
    }
}

impl fmt::Display for RuleSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleSetting::Off => f.write_str("off"),
            RuleSetting::On(s) => s.fmt(f),
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            test_paths: Vec::new(),
            ignore: Vec::new(),
            allow: Vec::new(),
            rules: HashMap::new(),
            fail_on: Severity::Warning,
            max_file_size: crate::MAX_TEXT_SIZE as u64,
        }
    }
}

impl Options {
    /// Every rule `which` picks at least at `floor`, on even where the repository turned it
    /// off, and the check failing at `floor` at the latest.
    pub fn floor(&mut self, which: impl Fn(Rule) -> bool, floor: Severity) {
        for rule in Rule::all().filter(|r| which(*r)) {
            match self.severity(rule) {
                Some(s) if s >= floor => {}
                _ => {
                    self.rules.insert(rule, RuleSetting::On(floor));
                }
            }
        }
        self.fail_on = self.fail_on.min(floor);
    }

    /// The severity `rule`'s flags get, or `None` where the rule is off.
    pub fn severity(&self, rule: Rule) -> Option<Severity> {
        match self.rules.get(&rule) {
            Some(RuleSetting::Off) => None,
            Some(RuleSetting::On(s)) => Some(*s),
            None => Some(rule.severity()),
        }
    }
}
