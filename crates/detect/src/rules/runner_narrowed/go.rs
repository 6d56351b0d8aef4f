//! Go build constraints on `_test.go` files: `//go:build ignore` (or `// +build ignore`) and
//! any constraint that is false whatever the platform, because it requires a tag nobody sets;
//! and, on an existing file, one that requires a tag a plain `go test` does not set
//! (`//go:build integration`): a platform's names, `cgo`, the compiler and the Go version may
//! hold there, so a file for some platforms still runs somewhere.
//! They live in comments, so they are read from the raw lines before the `package` clause.

use super::{Narrowed, numbered};

/// Tags that no build sets: a file that requires one is never compiled.
const NOBODY_SETS: &[&str] = &[
    "ignore", "ignored", "skip", "disabled", "disable", "never", "none", "exclude", "excluded",
    "broken", "manual", "off", "false", "todo", "wip", "tmp", "nobuild", "notest",
];

/// Three-valued: true, false, or depends on the platform / tags.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tri {
    True,
    False,
    Maybe,
}

impl Tri {
    fn not(self) -> Tri {
        match self {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            Tri::Maybe => Tri::Maybe,
        }
    }
    fn and(self, o: Tri) -> Tri {
        match (self, o) {
            (Tri::False, _) | (_, Tri::False) => Tri::False,
            (Tri::True, Tri::True) => Tri::True,
            _ => Tri::Maybe,
        }
    }
    fn or(self, o: Tri) -> Tri {
        match (self, o) {
            (Tri::True, _) | (_, Tri::True) => Tri::True,
            (Tri::False, Tri::False) => Tri::False,
            _ => Tri::Maybe,
        }
    }
}

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

/// A tag's value in every build (`plain` false), or in a plain `go test`, which sets only the
/// platform's tags (`plain` true): a custom tag (`integration`) is set by some runs only.
fn tag(name: &str, plain: bool) -> Tri {
    if NOBODY_SETS.contains(&name.to_ascii_lowercase().as_str()) {
        Tri::False
    } else if !plain
        || PLATFORM.contains(&name)
        || name.starts_with("go1.")
        || name.starts_with("goexperiment.")
    {
        Tri::Maybe
    } else {
        Tri::False
    }
}

/// A `//go:build` expression: `||`, `&&`, `!`, parentheses, tags.
fn eval(expr: &str, plain: bool) -> Option<Tri> {
    let mut toks: Vec<String> = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {}
            '(' | ')' | '!' => toks.push(c.to_string()),
            '&' | '|' => {
                if chars.next() != Some(c) {
                    return None;
                }
                toks.push(format!("{c}{c}"));
            }
            _ if c.is_alphanumeric() || c == '_' || c == '.' => {
                let mut w = c.to_string();
                while let Some(&d) = chars.peek() {
                    if d.is_alphanumeric() || d == '_' || d == '.' {
                        w.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                toks.push(w);
            }
            _ => return None,
        }
    }
    let mut i = 0;
    let v = or(&toks, &mut i, plain)?;
    (i == toks.len()).then_some(v)
}

fn or(t: &[String], i: &mut usize, plain: bool) -> Option<Tri> {
    let mut v = and(t, i, plain)?;
    while t.get(*i).map(String::as_str) == Some("||") {
        *i += 1;
        v = v.or(and(t, i, plain)?);
    }
    Some(v)
}

fn and(t: &[String], i: &mut usize, plain: bool) -> Option<Tri> {
    let mut v = unary(t, i, plain)?;
    while t.get(*i).map(String::as_str) == Some("&&") {
        *i += 1;
        v = v.and(unary(t, i, plain)?);
    }
    Some(v)
}

fn unary(t: &[String], i: &mut usize, plain: bool) -> Option<Tri> {
    let w = t.get(*i)?;
    *i += 1;
    match w.as_str() {
        "!" => Some(unary(t, i, plain)?.not()),
        "(" => {
            let v = or(t, i, plain)?;
            (t.get(*i).map(String::as_str) == Some(")")).then(|| {
                *i += 1;
                v
            })
        }
        ")" | "&&" | "||" => None,
        name => Some(tag(name, plain)),
    }
}

/// `// +build a,b c`: lines AND together, spaces OR, commas AND.
fn eval_plus_build(args: &str, plain: bool) -> Tri {
    args.split_whitespace()
        .map(|option| {
            option.split(',').fold(Tri::True, |acc, term| {
                let v = match term.strip_prefix('!') {
                    Some(name) => tag(name, plain).not(),
                    None => tag(term, plain),
                };
                acc.and(v)
            })
        })
        .fold(Tri::False, Tri::or)
}

/// The line of a constraint that keeps the file out of every build (`plain` false) or out of
/// a plain `go test` (`plain` true), if there is one.
fn excluded(text: &str, plain: bool) -> Option<(u32, String)> {
    for (n, raw) in numbered(text) {
        let l = raw.trim();
        if l.is_empty()
            || (l.starts_with("//") && !l.starts_with("//go:build") && !l.starts_with("// +build"))
        {
            continue;
        }
        if let Some(expr) = l.strip_prefix("//go:build") {
            if eval(expr.trim(), plain) == Some(Tri::False) {
                return Some((n, l.to_owned()));
            }
            continue;
        }
        if let Some(args) = l.strip_prefix("// +build") {
            if eval_plus_build(args, plain) == Tri::False {
                return Some((n, l.to_owned()));
            }
            continue;
        }
        // `package` or anything else: constraints end here.
        break;
    }
    None
}

pub(super) fn compare(base: &str, head: &str) -> Vec<Narrowed> {
    if let (None, Some((line, shown))) = (excluded(base, false), excluded(head, false)) {
        return vec![Narrowed {
            moved_from: None,
            line: Some(line),
            message: format!(
                "`{shown}` newly keeps this test file out of every build: `go test` no longer runs its tests"
            ),
        }];
    }
    // A tag only some runs set (`integration`): a new file behind one is a new suite of its
    // own; an existing one put behind it leaves the plain run.
    match (excluded(base, true), excluded(head, true)) {
        (None, Some((line, shown))) if !base.is_empty() => vec![Narrowed {
            moved_from: None,
            line: Some(line),
            message: format!(
                "`{shown}` newly keeps this test file out of a plain `go test`: its tests run only where its tags are set"
            ),
        }],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{Spec::*, lines, run};

    const OLD: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n";

    fn flagged(old: &str, new: &str) -> Vec<u32> {
        lines(
            &run(&[Modify("calc/add_test.go", old, new)]),
            Rule::RunnerNarrowed,
        )
    }

    #[test]
    fn excluding_constraints() {
        for new in [
            format!("//go:build ignore\n\n{OLD}"),
            format!("// Copyright 2024\n\n//go:build ignore && linux\n\n{OLD}"),
            format!("// +build ignore\n\n{OLD}"),
            format!("//go:build (skip || never) && !windows\n\n{OLD}"),
        ] {
            let line = new.lines().position(|l| l.contains("build")).unwrap_or(0) as u32 + 1;
            assert_eq!(flagged(OLD, &new), vec![line], "{new}");
        }
    }

    #[test]
    fn a_tag_a_plain_go_test_does_not_set_put_on_an_existing_file() {
        for new in [
            format!("//go:build integration\n\n{OLD}"),
            format!("// Copyright 2024\n\n//go:build e2e && linux\n\n{OLD}"),
            format!("// +build integration\n\n{OLD}"),
            format!("//go:build (integration || e2e) && !windows\n\n{OLD}"),
        ] {
            let line = new.lines().position(|l| l.contains("build")).unwrap_or(0) as u32 + 1;
            assert_eq!(flagged(OLD, &new), vec![line], "{new}");
        }
        let r = run(&[Modify(
            "calc/add_test.go",
            OLD,
            &format!("//go:build integration\n\n{OLD}"),
        )]);
        assert_eq!(
            r.flags[0].message,
            "`//go:build integration` newly keeps this test file out of a plain `go test`: its tests run only where its tags are set"
        );
    }

    #[test]
    fn constraints_a_build_can_meet() {
        for new in [
            format!("//go:build linux || ignore\n\n{OLD}"),
            format!("//go:build !windows && cgo\n\n{OLD}"),
            format!("//go:build !integration\n\n{OLD}"),
            format!("//go:build integration || unix\n\n{OLD}"),
            format!("//go:build go1.21\n\n{OLD}"),
            format!("//go:buildx integration\n\n{OLD}"),
            format!("//go:build !ignore\n\n{OLD}"),
            format!("// +build linux darwin\n\n{OLD}"),
            format!("{OLD}\n//go:build ignore\n"),
        ] {
            assert!(flagged(OLD, &new).is_empty(), "{new}");
        }
        // Already excluded at the base: not new.
        let old = format!("//go:build ignore\n\n{OLD}");
        let new = format!("//go:build ignore\n\n{OLD}// more\n");
        assert!(flagged(&old, &new).is_empty());
        // Behind a custom tag at the base already, or a new file behind one: a suite of its own.
        let tagged = format!("//go:build integration\n\n{OLD}");
        assert!(flagged(&tagged, &tagged.replace("integration", "e2e")).is_empty());
        let r = run(&[Add("calc/db_test.go", &tagged)]);
        assert!(r.flags.is_empty(), "{:?}", r.flags);
        // Production Go files are not test files.
        let r = run(&[Modify(
            "calc/add.go",
            "package calc\n",
            "//go:build ignore\n\npackage calc\n",
        )]);
        assert!(r.flags.is_empty());
    }
}
