//! Go's build constraints on a test file: `//go:build integration` put on an existing
//! `_test.go` file keeps all its tests out of a plain `go test`, which sets no custom tag.
//!
//! The constraint is evaluated against what a plain run may have: the platform's names
//! (`linux`, `amd64`, `unix`), `cgo`, the compiler and the Go version (`go1.21`) may hold, so a
//! file for some platforms still runs somewhere; any other tag (`integration`, `e2e`, `ignore`)
//! is unset. Only a file whose constraint can hold nowhere in a plain run, and could at the
//! base, is flagged: a new test file behind a tag is a new integration suite, not tests hidden.
//! `// +build` lines (the form before Go 1.17) are read the same way when no `//go:build`
//! line is there.

use crate::detect::flag::Rule;
use crate::detect::scan::Occurrence;

/// Operating systems and architectures Go knows, and the tags a plain run may set.
const PLATFORM: &[&str] = &[
    "aix",
    "android",
    "darwin",
    "dragonfly",
    "freebsd",
    "hurd",
    "illumos",
    "ios",
    "js",
    "linux",
    "nacl",
    "netbsd",
    "openbsd",
    "plan9",
    "solaris",
    "wasip1",
    "windows",
    "zos",
    "386",
    "amd64",
    "amd64p32",
    "arm",
    "armbe",
    "arm64",
    "arm64be",
    "loong64",
    "mips",
    "mipsle",
    "mips64",
    "mips64le",
    "mips64p32",
    "mips64p32le",
    "ppc",
    "ppc64",
    "ppc64le",
    "riscv",
    "riscv64",
    "s390",
    "s390x",
    "sparc",
    "sparc64",
    "wasm",
    "unix",
    "cgo",
    "gc",
    "gccgo",
    "race",
    "msan",
    "asan",
    "purego",
    "boringcrypto",
];

/// The flag for a test file a change newly keeps out of a plain `go test`, if it does.
pub(crate) fn newly_excluded(old: &[u8], new: &[u8]) -> Option<Occurrence> {
    let (line, expr) = constraint(new)?;
    if runs(&expr) != Some(false) {
        return None;
    }
    if constraint(old).is_some_and(|(_, e)| runs(&e) == Some(false)) {
        return None;
    }
    let shown = format!("//go:build {}", expr.trim());
    Some(Occurrence {
        rule: Rule::SkipMarker,
        kind: "go-build-constraint",
        first: line,
        last: line,
        line,
        key: crate::detect::suite::hash(&shown),
        message: format!(
            "newly keeps this file's tests out of a plain `go test` (`{shown}`): they run only when its tags are set"
        ),
    })
}

/// The file's constraint, as (line, expression): the `//go:build` line before the `package`
/// clause, else its `// +build` lines joined with `&&`.
fn constraint(text: &[u8]) -> Option<(u32, String)> {
    let mut legacy: Vec<String> = Vec::new();
    let mut legacy_line = None;
    for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
        let l = String::from_utf8_lossy(raw);
        let l = l.trim();
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        if let Some(expr) = l.strip_prefix("//go:build") {
            if expr.starts_with([' ', '\t']) {
                return Some((n, expr.trim().to_owned()));
            }
        } else if let Some(rest) = l.strip_prefix("// +build") {
            // Space: or; comma: and.
            let any: Vec<String> = rest
                .split_whitespace()
                .map(|term| format!("({})", term.replace(',', " && ")))
                .collect();
            if !any.is_empty() {
                legacy.push(format!("({})", any.join(" || ")));
                legacy_line.get_or_insert(n);
            }
        } else if l.starts_with("package ") || (!l.is_empty() && !l.starts_with("//")) {
            break;
        }
    }
    Some((legacy_line?, legacy.join(" && ")))
}

/// Whether a plain run builds the file: `Some(false)` never, `Some(true)` always, `None` on
/// some platforms. `None` too for an expression that does not parse.
fn runs(expr: &str) -> Option<bool> {
    let tokens = tokens(expr);
    let mut p = Parser { tokens, at: 0 };
    let v = p.or()?;
    (p.at == p.tokens.len()).then_some(v)?
}

fn tokens(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        match c {
            '!' | '(' | ')' => out.push(c.to_string()),
            '&' | '|' if chars.peek() == Some(&c) => {
                chars.next();
                out.push(format!("{c}{c}"));
            }
            c if c.is_whitespace() => {}
            // Anything else: no expression.
            _ => out.push(String::from("?")),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Three-valued: `Some(Some(b))` a value, `Some(None)` unknown, `None` a syntax error.
struct Parser {
    tokens: Vec<String>,
    at: usize,
}

type Value = Option<Option<bool>>;

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.at).map(String::as_str)
    }

    fn or(&mut self) -> Value {
        let mut v = self.and()?;
        while self.peek() == Some("||") {
            self.at += 1;
            let r = self.and()?;
            v = match (v, r) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            };
        }
        Some(v)
    }

    fn and(&mut self) -> Value {
        let mut v = self.not()?;
        while self.peek() == Some("&&") {
            self.at += 1;
            let r = self.not()?;
            v = match (v, r) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
        }
        Some(v)
    }

    fn not(&mut self) -> Value {
        match self.peek()? {
            "!" => {
                self.at += 1;
                Some(self.not()?.map(|b| !b))
            }
            "(" => {
                self.at += 1;
                let v = self.or()?;
                (self.peek()? == ")").then_some(())?;
                self.at += 1;
                Some(v)
            }
            word if word
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.') =>
            {
                let known = PLATFORM.contains(&word)
                    || word.starts_with("go1.")
                    || word.starts_with("goexperiment.");
                self.at += 1;
                Some(if known { None } else { Some(false) })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "package wordcount\n\nimport \"testing\"\n";

    fn flagged(old: &str, new: &str) -> Option<(u32, String)> {
        newly_excluded(old.as_bytes(), new.as_bytes()).map(|o| (o.line, o.message))
    }

    #[test]
    fn a_custom_tag_put_on_an_existing_test_file() {
        for header in [
            "//go:build integration\n\n",
            "// Copyright 2024\n\n//go:build e2e && linux\n\n",
            "//go:build ignore\n",
            "// +build integration\n\n",
            "//go:build (integration || e2e) && !windows\n\n",
        ] {
            let got = flagged(BASE, &format!("{header}{BASE}"));
            assert!(got.is_some(), "{header}");
        }
        let (line, message) =
            flagged(BASE, &format!("//go:build integration\n\n{BASE}")).expect("flagged");
        assert_eq!(line, 1);
        assert_eq!(
            message,
            "newly keeps this file's tests out of a plain `go test` (`//go:build integration`): they run only when its tags are set"
        );
    }

    #[test]
    fn a_platform_or_a_negated_tag_still_runs_somewhere() {
        for header in [
            "//go:build linux\n\n",
            "//go:build !windows && cgo\n\n",
            "//go:build !integration\n\n",
            "//go:build go1.21\n\n",
            "//go:build integration || unix\n\n",
            "// +build linux darwin\n\n",
            // Not a constraint: a comment after the package clause, or no space after `build`.
            "package x\n//go:build integration\n",
            "//go:buildx integration\n",
        ] {
            assert_eq!(flagged(BASE, &format!("{header}{BASE}")), None, "{header}");
        }
        // Already behind the tag at the base, the tag renamed.
        let tagged = format!("//go:build integration\n\n{BASE}");
        assert_eq!(
            flagged(&tagged, &tagged.replace("integration", "e2e")),
            None
        );
    }
}
