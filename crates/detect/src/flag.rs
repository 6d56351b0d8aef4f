//! What the detector says: a review flag on a file, or on one line of it.

use super::change::RepoPath;
pub use super::registry::{Rule, Severity};

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
