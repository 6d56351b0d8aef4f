//! `suppression` in configuration: a lint rule turned off for the whole project, or the type
//! checker told to ignore errors, on lines a change added to an existing file.
//!
//! - ESLint (`.eslintrc*`, `eslint.config.*`): a rule set to `"off"` or `0` (also `["off", …]`)
//!   that the base did not already turn off;
//! - mypy (`mypy.ini`, `.mypy.ini`, and a `mypy` section of `setup.cfg` or `pyproject.toml`):
//!   `ignore_errors = true`, `disable_error_code = …`.
//!
//! A new configuration file is a project's first choice of rules, not a suppression.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::super::code::re;
use crate::change::{Change, ChangeKind};
use crate::flag::{Flag, Rule};

/// The kind under which the engine keeps these findings.
pub(crate) const KIND: &str = "suppression-config";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Eslint,
    Mypy,
    /// `setup.cfg`, `pyproject.toml`: only in a `mypy` section.
    MypySection,
}

fn format(name: &[u8]) -> Option<Format> {
    let name = std::str::from_utf8(name).ok()?;
    if name == ".eslintrc" || name.starts_with(".eslintrc.") || name.starts_with("eslint.config.") {
        Some(Format::Eslint)
    } else if name == "mypy.ini" || name == ".mypy.ini" {
        Some(Format::Mypy)
    } else if name == "setup.cfg" || name == "pyproject.toml" {
        Some(Format::MypySection)
    } else {
        None
    }
}

/// `"no-unused-vars": "off"`, `'react/prop-types': 0`, `no-console: ["off"]` (YAML too).
static ESLINT_OFF: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"["']?(@?[\w-]+(?:/[\w-]+)*)["']?[ \t]*:[ \t]*\[?[ \t]*(?:"off"|'off'|off\b|0\b)"#)
});
static MYPY_IGNORE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^[ \t]*(?:ignore_errors[ \t]*=[ \t]*(?:[Tt]rue|1)\b|disable_error_code[ \t]*=)")
});
static SECTION: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*\[\[?([^\]\n]*)\]"));

fn text_lines(raw: &[u8]) -> Vec<&[u8]> {
    raw.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect()
}

/// The notes for one changed configuration file.
pub(crate) fn check(change: &Change, old: Option<&[u8]>, new: Option<&[u8]>) -> Vec<Flag> {
    let path = change.path();
    let (Some(format), Some(old), Some(new)) = (format(path.file_name()), old, new) else {
        return Vec::new();
    };
    if change.binary || change.kind != ChangeKind::Modified {
        return Vec::new();
    }
    let lines = text_lines(new);
    let mut out = Vec::new();
    let mut note = |line: u32, message: String| {
        out.push(Flag {
            rule: Rule::Suppression,
            severity: Rule::Suppression.severity(),
            path: path.clone(),
            line: Some(line),
            removed_line: None,
            message,
            snippet: None,
        });
    };
    for range in &change.added {
        for line in range.clone() {
            let Some(l) = lines.get(line as usize - 1) else {
                continue;
            };
            match format {
                Format::Eslint => {
                    for c in ESLINT_OFF.captures_iter(l) {
                        let Some(rule) = c.get(1) else {
                            continue;
                        };
                        let rule = String::from_utf8_lossy(rule.as_bytes());
                        let was_off = ESLINT_OFF
                            .captures_iter(old)
                            .any(|b| b.get(1).is_some_and(|r| r.as_bytes() == rule.as_bytes()));
                        if !was_off {
                            note(
                                line,
                                format!(
                                    "newly turns the lint rule `{rule}` off in the ESLint configuration instead of fixing what it reports"
                                ),
                            );
                        }
                    }
                }
                Format::Mypy | Format::MypySection => {
                    if !MYPY_IGNORE.is_match(l) {
                        continue;
                    }
                    let in_mypy = format == Format::Mypy
                        || lines[..line as usize - 1].iter().rev().find_map(|h| {
                            SECTION
                                .captures(h)
                                .and_then(|c| c.get(1))
                                .map(|s| s.as_bytes().windows(4).any(|w| w == b"mypy"))
                        }) == Some(true);
                    if in_mypy {
                        let shown = String::from_utf8_lossy(l.trim_ascii()).into_owned();
                        note(
                            line,
                            format!("newly makes mypy ignore type errors: `{shown}`"),
                        );
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{Spec::*, run};

    fn notes(path: &str, old: &str, new: &str) -> Vec<(u32, String)> {
        run(&[Modify(path, old, new)])
            .flags
            .into_iter()
            .filter(|f| f.rule == Rule::Suppression)
            .map(|f| (f.line.unwrap_or(0), f.message))
            .collect()
    }

    #[test]
    fn eslint_rule_turned_off() {
        let old = "{ \"rules\": { \"no-unused-vars\": \"error\" } }\n";
        let new = "{ \"rules\": { \"no-unused-vars\": \"off\" } }\n";
        assert_eq!(
            notes(".eslintrc.json", old, new),
            vec![(
                1,
                "newly turns the lint rule `no-unused-vars` off in the ESLint configuration instead of fixing what it reports".to_owned()
            )]
        );
        let old = "export default [\n  {\n    rules: {\n      eqeqeq: 'error',\n    },\n  },\n];\n";
        let new = "export default [\n  {\n    rules: {\n      eqeqeq: 'error',\n      '@typescript-eslint/no-explicit-any': 0,\n      'react/prop-types': ['off'],\n    },\n  },\n];\n";
        let lines: Vec<u32> = notes("eslint.config.mjs", old, new)
            .into_iter()
            .map(|(l, _)| l)
            .collect();
        assert_eq!(lines, vec![5, 6]);
        let yaml_old = "rules:\n  no-console: error\n";
        let yaml_new = "rules:\n  no-console: off\n";
        assert_eq!(notes(".eslintrc.yml", yaml_old, yaml_new).len(), 1);
        // Turned on, moved, already off, or another file: nothing.
        for (path, old, new) in [
            (
                ".eslintrc.json",
                "{ \"rules\": { \"a\": \"off\" } }\n",
                "{ \"rules\": { \"a\": \"error\" } }\n",
            ),
            (
                ".eslintrc.json",
                "{ \"rules\": { \"a\": \"off\", \"b\": 2 } }\n",
                "{ \"rules\": { \"b\": 2,\n  \"a\": \"off\" } }\n",
            ),
            (
                "src/config.json",
                "{ \"a\": \"on\" }\n",
                "{ \"a\": \"off\" }\n",
            ),
        ] {
            assert!(notes(path, old, new).is_empty(), "{new}");
        }
        // A new configuration is the project's first choice of rules.
        let r = run(&[Add(".eslintrc.json", "{ \"rules\": { \"a\": \"off\" } }\n")]);
        assert!(r.flags.iter().all(|f| f.rule != Rule::Suppression));
    }

    #[test]
    fn mypy_told_to_ignore_errors() {
        let old =
            "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n\n[tool.mypy]\nstrict = true\n";
        let new =
            format!("{old}\n[[tool.mypy.overrides]]\nmodule = \"calc.*\"\nignore_errors = true\n");
        assert_eq!(
            notes("pyproject.toml", old, &new),
            vec![(
                9,
                "newly makes mypy ignore type errors: `ignore_errors = true`".to_owned()
            )]
        );
        let ini_old = "[mypy]\nstrict = True\n";
        let ini_new = "[mypy]\nstrict = True\ndisable_error_code = arg-type, return-value\n";
        assert_eq!(notes("mypy.ini", ini_old, ini_new).len(), 1);
        // Another tool's section, or mypy made stricter: nothing.
        let cfg_old = "[tool:pytest]\naddopts = -q\n";
        let cfg_new = "[tool:pytest]\naddopts = -q\nignore_errors = true\n";
        assert!(notes("setup.cfg", cfg_old, cfg_new).is_empty());
        let stricter = format!("{old}warn_unused_ignores = true\n");
        assert!(notes("pyproject.toml", old, &stricter).is_empty());
    }
}
