//! SARIF 2.1.0, as GitHub code scanning accepts it: rule metadata, and a location per result.

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::detect::{Flag, Report, Rule, Severity};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Note => "note",
        Severity::Warning => "warning",
        Severity::Error => "error",
    }
}

/// The rules a log lists: the detector's, and any other rule a flag of this report has.
fn listed_rules(report: &Report) -> Vec<Rule> {
    Rule::all()
        .filter(|r| r.is_detector_rule() || report.flags.iter().any(|f| f.rule == *r))
        .collect()
}

fn result(f: &Flag, rules: &[Rule]) -> Value {
    let index = rules.iter().position(|r| *r == f.rule).unwrap_or(0);
    // A file-level flag points at the file's first line: code scanning wants a region.
    let line = f.line.unwrap_or(1);
    json!({
        "ruleId": f.rule.id(),
        "ruleIndex": index,
        "level": level(f.severity),
        "message": { "text": f.message },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": { "uri": super::encode_path(&f.path), "uriBaseId": "%SRCROOT%" },
                "region": { "startLine": line },
            }
        }],
    })
}

pub fn sarif_value(report: &Report) -> Value {
    let listed = listed_rules(report);
    let rules: Vec<Value> = listed
        .iter()
        .map(|r| {
            let info = r.info();
            json!({
                "id": info.id,
                "shortDescription": { "text": info.summary },
                "fullDescription": { "text": info.help },
                "defaultConfiguration": { "level": level(info.severity) },
                "help": { "text": format!("{} Reads: {}. A review flag, not a verdict: look before accepting. Allow a known case in .forgeward.toml with a reason, or set the rule's severity under [check.rules].", info.help, info.languages) },
                "properties": { "tags": ["testing", "review"] },
            })
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "forgeward",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules,
            }},
            "originalUriBaseIds": { "%SRCROOT%": { "uri": "file:///" } },
            "results": report.flags.iter().map(|f| result(f, &listed)).collect::<Vec<_>>(),
        }],
    })
}

pub fn write_sarif(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &sarif_value(report))?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use crate::detect::RepoPath;
    use crate::report::encode_path;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(encode_path(&RepoPath::from("a b/ü.py")), "a%20b/%C3%BC.py");
        assert_eq!(encode_path(&RepoPath::new(b"x\xff.py".to_vec())), "x%FF.py");
    }
}
