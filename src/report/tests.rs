//! Snapshots of every format on one report: what a user reads must not change by accident.

use super::*;
use crate::detect::{Flag, RepoPath, Rule};

fn flag(rule: Rule, path: &[u8], line: Option<u32>, message: &str, snippet: Option<&str>) -> Flag {
    Flag {
        rule,
        severity: rule.severity(),
        path: RepoPath::new(path.to_vec()),
        line,
        removed_line: None,
        message: message.to_owned(),
        snippet: snippet.map(str::to_owned),
    }
}

fn report() -> Report {
    Report {
        flags: vec![
            flag(
                Rule::StubbedImport,
                b"src/app.py",
                Some(5),
                "newly carries on when `yaml` fails to import: `except ImportError` closes a `try` that only imports",
                Some("except ImportError:"),
            ),
            flag(
                Rule::ShadowModule,
                b"sqlglot.py",
                None,
                "new module `sqlglot.py` is named like the dependency `sqlglot` (declared in requirements.txt) and would be imported instead of it",
                None,
            ),
            flag(
                Rule::SkipMarker,
                b"tests/test \xc3\xbcnicode, 100%.py",
                Some(12),
                "newly marks a test skipped: `pytest.mark.skip`",
                Some("@pytest.mark.skip(reason=\"flaky\")"),
            ),
            flag(
                Rule::ExpectationChanged,
                b"tests/test_calc.py",
                Some(9),
                "`test_add` now expects `-1` where it expected `5`",
                Some("assert add(2, 3) == -1"),
            ),
            Flag {
                removed_line: Some(14),
                ..flag(
                    Rule::TestDeleted,
                    b"tests/test_calc.py",
                    None,
                    "test `test_mul` (line 14 at the base) is deleted and found nowhere else in the change",
                    None,
                )
            },
        ],
        allowed: vec![(
            flag(
                Rule::StrayBackup,
                b"fixtures/db.sql.bak",
                None,
                "new file `fixtures/db.sql.bak` looks like a backup copy (`.bak`)",
                None,
            ),
            "a fixture of the backup importer".to_owned(),
        )],
        files: 7,
        added_lines: 41,
        removed_lines: 3,
        warnings: vec![],
        fail_on: crate::detect::Severity::Warning,
    }
}

fn render(format: Format) -> String {
    let range = Range {
        base: "1111111111111111111111111111111111111111".to_owned(),
        head: "2222222222222222222222222222222222222222".to_owned(),
        spelled: "origin/main...HEAD".to_owned(),
        commits: 3,
    };
    let mut out = Vec::new();
    write(&mut out, format, &report(), &range, false).expect("writing to a Vec");
    String::from_utf8(out).expect("UTF-8 here")
}

#[test]
fn text() {
    insta::assert_snapshot!(render(Format::Text));
}

#[test]
fn json() {
    insta::assert_snapshot!(render(Format::Json));
}

#[test]
fn sarif() {
    insta::assert_snapshot!(render(Format::Sarif));
}

#[test]
fn github() {
    insta::assert_snapshot!(render(Format::Github));
}

#[test]
fn codequality() {
    insta::assert_snapshot!(render(Format::CodeQuality));
}

#[test]
fn text_keeps_the_real_bytes_of_a_name() {
    let mut r = report();
    r.flags = vec![flag(
        Rule::SkipMarker,
        b"tests/test_\xff.py",
        Some(1),
        "m",
        None,
    )];
    let mut out = Vec::new();
    write_text(&mut out, &r, false).expect("writing to a Vec");
    assert!(out.starts_with(b"tests/test_\xff.py:1: skip-marker: m\n"));
}
