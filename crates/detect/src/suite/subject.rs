//! What a test file stands on: the literals a change's added lines write (the data a table
//! of cases holds, wherever it is written) and the modules a test file imports (its subject,
//! which may leave with it).
//!
//! Both are read from the text alone, with the lexer's mask saying where strings are; neither
//! resolves anything against a tree.

use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::lang::Language;
use crate::lexer::Lexed;

/// The string and number literals on `lines` (1-based, end exclusive, in order) of one
/// version, written as an assertion's operands are (`'x'` as `"x"`): the values of rows a
/// change wrote, whether in a `test.each` table, an array a loop runs over or a `parametrize`
/// list. Template literals give the literals inside their `${…}`.
pub(crate) fn literals(lexed: &Lexed<'_>, lines: &[Range<u32>]) -> Vec<String> {
    let (raw, masked) = (lexed.raw(), lexed.masked());
    let quotes: &[u8] = if lexed.lang() == Language::Rust {
        b"\""
    } else {
        b"\"'`"
    };
    let mut out = Vec::new();
    let mut line = 1u32;
    // The first of `lines` (sorted, as a change's are) not yet behind the scan.
    let mut next = 0;
    let mut i = 0;
    while i < masked.len() {
        let b = masked[i];
        if b == b'\n' {
            line += 1;
            i += 1;
            continue;
        }
        while lines.get(next).is_some_and(|r| r.end <= line) {
            next += 1;
        }
        let Some(range) = lines.get(next) else {
            break;
        };
        let wanted = range.contains(&line);
        if quotes.contains(&b) {
            let Some(len) = masked[i + 1..].iter().position(|&c| c == b) else {
                break;
            };
            let close = i + 1 + len;
            let content = &raw[i + 1..close.min(raw.len())];
            if wanted {
                if b == b'`' && memchr::memmem::find(content, b"${").is_some() {
                    out.extend(interpolated(content));
                } else {
                    out.push(format!("\"{}\"", String::from_utf8_lossy(content)));
                }
            }
            line +=
                u32::try_from(memchr::memchr_iter(b'\n', &masked[i..close]).count()).unwrap_or(0);
            i = close + 1;
            continue;
        }
        let starts_word =
            i == 0 || !(masked[i - 1].is_ascii_alphanumeric() || masked[i - 1] == b'_');
        if b.is_ascii_digit() && starts_word {
            let end = i + masked[i..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_')))
                .unwrap_or(masked.len() - i);
            if wanted {
                out.push(String::from_utf8_lossy(&masked[i..end]).into_owned());
            }
            i = end;
            continue;
        }
        i += 1;
    }
    out.sort_unstable();
    out.dedup();
    out
}

static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"'([^'\n]*)'|"([^"\n]*)"|\b(\d[\w.]*)"#).expect("a valid pattern")
});

/// The literals inside a template's `${…}`: an `it.each` table's cells.
fn interpolated(content: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = memchr::memmem::find(&content[from..], b"${") {
        let start = from + p + 2;
        let end = content[start..]
            .iter()
            .position(|&b| b == b'}')
            .map_or(content.len(), |e| start + e);
        for c in QUOTED.captures_iter(&content[start..end]) {
            if let Some(s) = c.get(1).or_else(|| c.get(2)) {
                out.push(format!("\"{}\"", String::from_utf8_lossy(s.as_bytes())));
            } else if let Some(n) = c.get(3) {
                out.push(String::from_utf8_lossy(n.as_bytes()).into_owned());
            }
        }
        from = end;
    }
    out
}

/// The literals written inside an assertion's operand, in the form [`literals`] gives them:
/// `fetchPath("/src/deny/.deny")` holds `"/src/deny/.deny"`, `add(1,2)` holds `1` and `2`.
pub(crate) fn literals_in(operand: &str) -> Vec<String> {
    QUOTED
        .captures_iter(operand.as_bytes())
        .filter_map(|c| {
            if let Some(s) = c.get(1).or_else(|| c.get(2)) {
                Some(format!("\"{}\"", String::from_utf8_lossy(s.as_bytes())))
            } else {
                c.get(3)
                    .map(|n| String::from_utf8_lossy(n.as_bytes()).into_owned())
            }
        })
        .collect()
}

static JS_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:\bfrom\s*|\bimport\s*|\brequire\s*\(\s*|\bimport\s*\(\s*)['"]([^'"\n]+)['"]"#)
        .expect("a valid pattern")
});
static PY_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w, \t]+)|import[ \t]+([\w.]+))",
    )
    .expect("a valid pattern")
});

/// A module a test file imports, as a path without its extension: relative to the
/// repository's root for a relative JavaScript import (`src/migrations/0001_users`), or the
/// dotted Python module written as a path (`app/migrations/m0001`), which a file's path ends
/// with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Import {
    /// Resolved from the importing file's directory.
    Path(String),
    /// A Python module, matched by the end of a path.
    Module(String),
}

/// The modules the file at `path` imports (`raw`: its text).
pub(crate) fn imports(lang: Language, path: &str, raw: &[u8]) -> Vec<Import> {
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    match lang {
        Language::JavaScript => JS_IMPORT
            .captures_iter(raw)
            .filter_map(|c| c.get(1))
            .filter_map(|m| std::str::from_utf8(m.as_bytes()).ok())
            .filter(|s| s.starts_with('.'))
            .filter_map(|s| join(dir, s))
            .map(|p| Import::Path(strip_extension(&p).to_owned()))
            .collect(),
        Language::Python => {
            let mut out = Vec::new();
            for c in PY_IMPORT.captures_iter(raw) {
                let text = |i: usize| {
                    c.get(i)
                        .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
                        .map(str::to_owned)
                };
                let Some(module) = text(1).or_else(|| text(3)) else {
                    continue;
                };
                if module.starts_with('.') || !module.contains('.') && text(2).is_none() {
                    continue;
                }
                let path = module.replace('.', "/");
                // `from app.migrations import m0001`: the names may be modules themselves.
                for name in text(2).iter().flat_map(|n| n.split(',')) {
                    let name = name.split_whitespace().next().unwrap_or_default();
                    if !name.is_empty() {
                        out.push(Import::Module(format!("{path}/{name}")));
                    }
                }
                if path.contains('/') {
                    out.push(Import::Module(path));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// `dir` joined with a relative specifier, `..` resolved; `None` above the root.
fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// A path without its last extension, and without a trailing `/index` or `/__init__` (a
/// package is imported by its directory).
pub(crate) fn strip_extension(path: &str) -> &str {
    let name_at = path.rfind('/').map_or(0, |k| k + 1);
    let stem = match path[name_at..].rfind('.') {
        Some(dot) if dot > 0 => &path[..name_at + dot],
        _ => path,
    };
    stem.strip_suffix("/index")
        .or_else(|| stem.strip_suffix("/__init__"))
        .unwrap_or(stem)
}

impl Import {
    /// Whether `stem` (a path without its extension) is this module.
    pub(crate) fn is(&self, stem: &str) -> bool {
        match self {
            Import::Path(p) => p == stem,
            Import::Module(m) => {
                stem == m
                    || stem
                        .strip_suffix(m.as_str())
                        .is_some_and(|s| s.ends_with('/'))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_resolve_relative_paths_and_python_modules() {
        let js = b"import * as m from '../20230101_add_nickname'\nimport { db } from '../../test/db'\nimport x from 'knex'\nconst y = require('./y.js')\n";
        assert_eq!(
            imports(
                Language::JavaScript,
                "src/migrations/__tests__/a.spec.ts",
                js
            ),
            vec![
                Import::Path("src/migrations/20230101_add_nickname".into()),
                Import::Path("src/test/db".into()),
                Import::Path("src/migrations/__tests__/y".into()),
            ]
        );
        let py = b"import pytest\nfrom app.migrations import m0001\nimport app.util as u\n";
        assert_eq!(
            imports(Language::Python, "tests/test_m.py", py),
            vec![
                Import::Module("app/migrations/m0001".into()),
                Import::Module("app/migrations".into()),
                Import::Module("app/util".into()),
            ]
        );
        assert!(Import::Module("app/util".into()).is("src/app/util"));
        assert!(!Import::Module("app/util".into()).is("src/myapp/util"));
        assert_eq!(strip_extension("src/a/index.ts"), "src/a");
        assert_eq!(strip_extension("app/pkg/__init__.py"), "app/pkg");
    }
}
