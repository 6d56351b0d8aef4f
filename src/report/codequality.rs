//! GitLab Code Quality: a JSON array of issues (`description`, `check_name`, `fingerprint`,
//! `severity`, `location.path`, `location.lines.begin`), which a job's `codequality` report
//! artifact shows on the merge request.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::detect::{Flag, Report, Severity};

/// Code Quality's scale has five steps; a flag's three sit where GitLab's own analyzers put
/// theirs: a note informs, a warning is worth a look, an error fails the check.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Note => "info",
        Severity::Warning => "major",
        Severity::Error => "critical",
    }
}

/// What names one flag across runs: its rule, its file and what it flags (the snippet, else the
/// message), not its line, so a flag that only moves down the file keeps its fingerprint and
/// GitLab does not report it fixed and new at once. `nth` tells apart flags alike in all three.
fn fingerprint(f: &Flag, nth: usize) -> String {
    let mut hash = Sha256::new();
    hash.update(f.rule.id().as_bytes());
    hash.update([0]);
    hash.update(f.path.as_bytes());
    hash.update([0]);
    hash.update(f.snippet.as_deref().unwrap_or(&f.message).trim().as_bytes());
    hash.update([0]);
    hash.update(nth.to_string().as_bytes());
    hex::encode(&hash.finalize()[..16])
}

pub fn codequality_value(report: &Report) -> Value {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let issues: Vec<Value> = report
        .flags
        .iter()
        .map(|f| {
            let nth = seen.entry(fingerprint(f, 0)).or_default();
            let print = fingerprint(f, *nth);
            *nth += 1;
            // A flag on a whole file, or on what the change removed, points at the file's
            // first line: Code Quality wants a line.
            json!({
                "type": "issue",
                "description": f.message,
                "check_name": f.rule.id(),
                "categories": ["Bug Risk"],
                "fingerprint": print,
                "severity": severity(f.severity),
                "location": {
                    "path": f.path.display(),
                    "lines": { "begin": f.line.unwrap_or(1) },
                },
            })
        })
        .collect();
    Value::Array(issues)
}

pub fn write_codequality(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &codequality_value(report))?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{RepoPath, Rule};

    fn flag(line: Option<u32>) -> Flag {
        Flag {
            rule: Rule::SkipMarker,
            severity: Severity::Warning,
            path: RepoPath::from("tests/test_x.py"),
            line,
            removed_line: None,
            message: "newly marks a test skipped".to_owned(),
            snippet: Some("@pytest.mark.skip".to_owned()),
        }
    }

    #[test]
    fn a_flag_keeps_its_fingerprint_when_it_moves_and_twins_get_their_own() {
        let report = |flags| Report {
            flags,
            ..Report::default()
        };
        let before = codequality_value(&report(vec![flag(Some(3))]));
        let moved = codequality_value(&report(vec![flag(Some(9))]));
        let twins = codequality_value(&report(vec![flag(Some(3)), flag(Some(9))]));

        assert_eq!(before[0]["fingerprint"], moved[0]["fingerprint"]);
        assert_eq!(twins[0]["fingerprint"], before[0]["fingerprint"]);
        assert_ne!(twins[0]["fingerprint"], twins[1]["fingerprint"]);
    }
}
