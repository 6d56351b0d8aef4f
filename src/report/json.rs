//! The JSON contract: one object, `version` 1.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::Range;
use crate::detect::{Flag, Report};

fn flag(f: &Flag) -> Value {
    let mut v = json!({
        "rule": f.rule.id(),
        "severity": f.severity.as_str(),
        "path": f.path.display(),
        "line": f.line,
        "message": f.message,
        "snippet": f.snippet,
    });
    // Something the change removed (a deleted test) is placed in the base version.
    if let Some(line) = f.removed_line {
        v["base_line"] = Value::from(line);
    }
    v
}

pub fn json_value(report: &Report, range: &Range) -> Value {
    json!({
        "version": 1,
        "base": range.base,
        "head": range.head,
        "range": range.spelled,
        "commits": range.commits,
        "flags": report.flags.iter().map(flag).collect::<Vec<_>>(),
        "allowed": report.allowed.iter().map(|(f, reason)| {
            let mut v = flag(f);
            v["reason"] = Value::from(reason.as_str());
            v
        }).collect::<Vec<_>>(),
        "warnings": report.warnings,
        "summary": {
            "files": report.files,
            "added_lines": report.added_lines,
            "flags": report.flags.len(),
        },
    })
}

pub fn write_json(out: &mut dyn Write, report: &Report, range: &Range) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &json_value(report, range))?;
    writeln!(out)
}
