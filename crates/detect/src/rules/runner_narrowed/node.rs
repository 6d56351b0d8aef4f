//! `package.json` (its test scripts and its `"jest"` key), `jest.config.*`,
//! `vitest.config.*` / `vite.config.*` (the `test` section) and `.nycrc`.
//!
//! JSON must parse (serde_json says so); its structure and lines, like those of a JS or TS
//! configuration, are read from the object literal's tokens, so every value keeps its line.

use super::Narrowed;
use super::command::{self, Shell};
use crate::change::RepoPath;
use crate::lang::Language;
use crate::rules::tokens::{Kind, Tokens};

/// A value of an object literal, with lines where a flag may point.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Obj(Vec<(String, u32, Val)>),
    Arr(Vec<(Val, u32)>),
    Str(String),
    Num(f64),
    Bool(bool),
    /// A spread, a call, a regex, a name: something the rule does not read.
    Other,
}

impl Val {
    fn get(&self, key: &str) -> Option<(&Val, u32)> {
        match self {
            Val::Obj(entries) => entries
                .iter()
                .rev()
                .find(|(k, _, _)| k == key)
                .map(|(_, l, v)| (v, *l)),
            _ => None,
        }
    }

    fn path(&self, keys: &[&str]) -> Option<(&Val, u32)> {
        let mut cur = (self, 0);
        for k in keys {
            cur = cur.0.get(k)?;
        }
        Some(cur)
    }

    fn truthy(&self) -> bool {
        match self {
            Val::Bool(b) => *b,
            Val::Num(n) => *n != 0.0,
            Val::Str(s) => !s.is_empty(),
            Val::Other | Val::Obj(_) | Val::Arr(_) => true,
        }
    }
}

fn unescape(s: &[u8]) -> String {
    let s = String::from_utf8_lossy(s);
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// The value of tokens `a..b`.
fn value(t: &Tokens<'_>, a: usize, b: usize) -> Val {
    let mut a = a;
    let mut b = b;
    while a < b && t.is_newline(a) {
        a += 1;
    }
    while b > a && t.is_newline(b - 1) {
        b -= 1;
    }
    // `defineConfig({...})`, `{...} satisfies Config`, `({...})`.
    if a + 1 < b
        && t.kind(a) == Some(Kind::Ident)
        && t.is(a + 1, "(")
        && t.pair(a + 1) == Some(b - 1)
    {
        return value(t, a + 2, b - 1);
    }
    if a >= b {
        return Val::Other;
    }
    if t.is(a, "(") && t.pair(a) == Some(b - 1) {
        return value(t, a + 1, b - 1);
    }
    if let Some(close) = t.pair(a).filter(|_| t.is(a, "{") || t.is(a, "["))
        && close < b
    {
        let parts = t.split(a + 1, close, |k| t.is(k, ","));
        if t.is(a, "[") {
            let mut items = Vec::new();
            for (x, y) in parts {
                let Some(x) = (x..y).find(|&k| !t.is_newline(k)) else {
                    continue;
                };
                items.push((value(t, x, y), t.line(x)));
            }
            return Val::Arr(items);
        }
        let mut entries = Vec::new();
        for (x, y) in parts {
            let Some(x) = (x..y).find(|&k| !t.is_newline(k)) else {
                continue;
            };
            let Some(colon) = t.find(x, y, |k| t.is(k, ":")) else {
                continue;
            };
            let key = match t.kind(x) {
                Some(Kind::Str) => unescape(t.content(x)),
                Some(Kind::Ident) => String::from_utf8_lossy(t.text(x)).into_owned(),
                _ => continue,
            };
            entries.push((key, t.line(x), value(t, colon + 1, y)));
        }
        return Val::Obj(entries);
    }
    if b == a + 1 {
        return match t.kind(a) {
            Some(Kind::Str) if t.toks[a].plain => Val::Str(unescape(t.content(a))),
            Some(Kind::Num) => String::from_utf8_lossy(t.text(a))
                .replace('_', "")
                .parse()
                .map_or(Val::Other, Val::Num),
            Some(Kind::Ident) if t.is(a, "true") => Val::Bool(true),
            Some(Kind::Ident) if t.is(a, "false") => Val::Bool(false),
            _ => Val::Other,
        };
    }
    Val::Other
}

/// The configuration object of a JS/TS or JSON file: what `export default`, `module.exports =`
/// or `defineConfig(` is given, or else the first object literal.
fn config_object(text: &str) -> Val {
    let t = Tokens::new(Language::JavaScript, text.as_bytes());
    let n = t.len();
    let end_of = |i: usize| t.find(i, n, |k| t.is(k, ";")).unwrap_or(n);
    for i in 0..n {
        let start = if t.is(i, "export") && t.is(i + 1, "default") {
            Some(i + 2)
        } else if t.is(i, "module")
            && t.is(i + 1, ".")
            && t.is(i + 2, "exports")
            && t.is(i + 3, "=")
        {
            Some(i + 4)
        } else {
            None
        };
        if let Some(s) = start {
            let v = value(&t, s, end_of(s));
            if matches!(v, Val::Obj(_)) {
                return v;
            }
        }
    }
    if let Some(i) = (0..n).find(|&i| t.is(i, "{"))
        && let Some(c) = t.pair(i)
    {
        return value(&t, i, c + 1);
    }
    Val::Obj(Vec::new())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Runner {
    Jest,
    Vitest,
}

/// Strings of an array value, with their lines.
fn strings(v: Option<(&Val, u32)>) -> Vec<(String, u32)> {
    match v {
        Some((Val::Arr(items), _)) => items
            .iter()
            .filter_map(|(v, l)| match v {
                Val::Str(s) => Some((s.clone(), *l)),
                _ => None,
            })
            .collect(),
        Some((Val::Str(s), l)) => vec![(s.clone(), l)],
        _ => Vec::new(),
    }
}

/// Numbers under a value, by dotted path.
fn numbers(v: &Val, prefix: &str, out: &mut Vec<(String, f64, u32)>, line: u32) {
    match v {
        Val::Num(n) => out.push((prefix.to_owned(), *n, line)),
        Val::Obj(entries) => {
            for (k, l, v) in entries {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                numbers(v, &p, out, *l);
            }
        }
        _ => {}
    }
}

/// New entries of an ignore list, leaving out the defaults everyone ignores.
fn new_ignores(
    base: Option<(&Val, u32)>,
    head: Option<(&Val, u32)>,
    key: &str,
    out: &mut Vec<Narrowed>,
) {
    let had = strings(base);
    let now = strings(head);
    for (p, line) in now.clone() {
        let routine = [
            "node_modules",
            "dist",
            "build",
            "coverage",
            ".git",
            "fixtures",
            "__fixtures__",
            "cypress",
            "playwright",
        ]
        .iter()
        .any(|d| p.contains(d));
        if routine || had.iter().any(|(q, _)| *q == p) {
            continue;
        }
        let gone = had
            .iter()
            .filter(|(q, _)| !now.iter().any(|(n, _)| n == q))
            .map(|(q, _)| q.as_str());
        let moved_from = super::repathed(&p, gone).map(|q| (q, p.clone()));
        out.push(Narrowed {
            moved_from,
            line: Some(line),
            message: format!("`{key}` newly ignores `{p}`: the tests it matches no longer run"),
        });
    }
}

/// Thresholds lowered or removed.
fn thresholds(
    base: Option<(&Val, u32)>,
    head: Option<(&Val, u32)>,
    key: &str,
    out: &mut Vec<Narrowed>,
) {
    let Some((b, bl)) = base else {
        return;
    };
    let mut bn = Vec::new();
    numbers(b, "", &mut bn, bl);
    if bn.is_empty() {
        return;
    }
    let mut hn = Vec::new();
    if let Some((h, hl)) = head {
        numbers(h, "", &mut hn, hl);
    }
    if head.is_none() {
        out.push(Narrowed {
            moved_from: None,
            line: None,
            message: format!("`{key}` was removed: coverage is no longer checked"),
        });
        return;
    }
    for (path, n, _) in &bn {
        let shown = if path.is_empty() {
            key.to_owned()
        } else {
            format!("{key}.{path}")
        };
        match hn.iter().find(|(p, _, _)| p == path) {
            Some((_, h, line)) if h < n => out.push(Narrowed {
                moved_from: None,
                line: Some(*line),
                message: format!(
                    "`{shown}` lowered from {n} to {h}: the coverage check demands less"
                ),
            }),
            None => out.push(Narrowed {
                moved_from: None,
                line: head.map(|(_, l)| l),
                message: format!("`{shown}` ({n}) was removed: the coverage check demands less"),
            }),
            _ => {}
        }
    }
}

fn flag_new_true(
    base: Option<(&Val, u32)>,
    head: Option<(&Val, u32)>,
    key: &str,
    does: &str,
    out: &mut Vec<Narrowed>,
) {
    if let Some((h, line)) = head
        && h.truthy()
        && !base.is_some_and(|(b, _)| b.truthy())
    {
        out.push(Narrowed {
            moved_from: None,
            line: Some(line),
            message: format!("`{key}` is newly set: {does}"),
        });
    }
}

const PASS_EMPTY: &str = "the run passes even when it finds no test";
const BAIL: &str = "the run stops at the first failures, and the tests after them no longer run";

fn jest(base: &Val, head: &Val, out: &mut Vec<Narrowed>) {
    new_ignores(
        base.get("testPathIgnorePatterns"),
        head.get("testPathIgnorePatterns"),
        "testPathIgnorePatterns",
        out,
    );
    flag_new_true(
        base.get("passWithNoTests"),
        head.get("passWithNoTests"),
        "passWithNoTests",
        PASS_EMPTY,
        out,
    );
    flag_new_true(base.get("bail"), head.get("bail"), "bail", BAIL, out);
    thresholds(
        base.get("coverageThreshold"),
        head.get("coverageThreshold"),
        "coverageThreshold",
        out,
    );
    // Multi-project configurations: the same settings per project, matched by position.
    if let (Some((Val::Arr(b), _)), Some((Val::Arr(h), _))) =
        (base.get("projects"), head.get("projects"))
    {
        for ((bv, _), (hv, _)) in b.iter().zip(h) {
            if matches!(hv, Val::Obj(_)) {
                jest(bv, hv, out);
            }
        }
    }
}

/// The part of a glob before its first wildcard: `test/` of `test/**/*.spec.js`.
fn glob_root(p: &str) -> &str {
    let p = p.trim_start_matches("./");
    p.find(['*', '?', '[', '{']).map_or(p, |k| &p[..k])
}

/// True when the mocha `spec` entry `h` runs what `b` did: the same entry, a glob whose fixed
/// start `b` begins with, or a directory holding it.
fn spec_covers(h: &str, b: &str) -> bool {
    let (h, b) = (h.trim_start_matches("./"), b.trim_start_matches("./"));
    if h == b {
        return true;
    }
    if glob_root(h).len() < h.len() {
        return glob_root(b).starts_with(glob_root(h));
    }
    command::covers(h, glob_root(b).trim_end_matches('/'))
}

/// Mocha (`.mocharc.*`, `package.json` `"mocha"`): `spec` entries no longer covered, a new
/// `grep`/`fgrep` or `ignore` entry, `forbid-only` turned off.
fn mocha(base: &Val, head: &Val, out: &mut Vec<Narrowed>) {
    let (bs, hs) = (strings(base.get("spec")), strings(head.get("spec")));
    if !hs.is_empty() {
        for (b, _) in &bs {
            if !hs.iter().any(|(h, _)| spec_covers(h, b)) {
                let shown: Vec<String> = hs.iter().map(|(h, _)| format!("`{h}`")).collect();
                out.push(Narrowed {
                    moved_from: None,
                    line: hs.first().map(|(_, l)| *l),
                    message: format!(
                        "mocha's `spec` no longer covers `{b}`: only {} runs",
                        shown.join(", ")
                    ),
                });
            }
        }
    }
    for key in ["grep", "fgrep"] {
        if let Some((Val::Str(g), line)) = head.get(key)
            && !matches!(base.get(key), Some((Val::Str(o), _)) if o == g)
        {
            out.push(Narrowed {
 moved_from: None,
                line: Some(line),
                message: format!(
                    "mocha's `{key}` newly selects only the tests matching `{g}`: the others no longer run"
                ),
            });
        }
    }
    new_ignores(base.get("ignore"), head.get("ignore"), "ignore", out);
    if base.get("forbid-only").is_some_and(|(v, _)| v.truthy())
        && !head.get("forbid-only").is_some_and(|(v, _)| v.truthy())
    {
        out.push(Narrowed {
 moved_from: None,
            line: head.get("forbid-only").map(|(_, l)| l),
            message: "`forbid-only` is newly off: a test left focused with `.only` no longer fails the run, and the others do not run".to_owned(),
        });
    }
}

/// `.mocharc.json`, `.mocharc.jsonc`, `.mocharc.js`, `.mocharc.cjs`.
pub(super) fn mocharc(base: &str, head: &str) -> Result<Vec<Narrowed>, String> {
    let mut out = Vec::new();
    mocha(&config_object(base), &config_object(head), &mut out);
    Ok(out)
}

fn vitest(base: &Val, head: &Val, out: &mut Vec<Narrowed>) {
    let (Some((h, _)), b) = (head.get("test"), base.get("test").map(|(v, _)| v)) else {
        return;
    };
    let empty = Val::Obj(Vec::new());
    let b = b.unwrap_or(&empty);
    new_ignores(b.get("exclude"), h.get("exclude"), "test.exclude", out);
    flag_new_true(
        b.get("passWithNoTests"),
        h.get("passWithNoTests"),
        "test.passWithNoTests",
        PASS_EMPTY,
        out,
    );
    flag_new_true(b.get("bail"), h.get("bail"), "test.bail", BAIL, out);
    if let Some((Val::Str(p), line)) = h.get("testNamePattern")
        && b.get("testNamePattern").is_none()
    {
        out.push(Narrowed {
            moved_from: None,
            line: Some(line),
            message: format!(
                "`test.testNamePattern` newly set to `{p}`: only the tests it matches run"
            ),
        });
    }
    thresholds(
        b.path(&["coverage", "thresholds"]),
        h.path(&["coverage", "thresholds"]),
        "test.coverage.thresholds",
        out,
    );
    for key in ["lines", "functions", "branches", "statements"] {
        let bv = b.path(&["coverage", key]);
        if bv.is_some() {
            thresholds(
                bv,
                h.path(&["coverage", key])
                    .or(h.path(&["coverage", "thresholds", key])),
                &format!("test.coverage.{key}"),
                out,
            );
        }
    }
}

fn json_checked(text: &str) -> Result<Val, String> {
    serde_json::from_str::<serde_json::Value>(text).map_err(|e| e.to_string())?;
    Ok(config_object(text))
}

pub(super) fn package_json(base: &str, head: &str) -> Result<Vec<Narrowed>, String> {
    let h = json_checked(head)?;
    let Ok(b) = json_checked(base) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    if let (Some((Val::Obj(hs), _)), Some((Val::Obj(bs), _))) = (h.get("scripts"), b.get("scripts"))
    {
        for (name, line, script) in hs {
            let (Val::Str(hs), true) = (script, command::is_test_name(name)) else {
                continue;
            };
            let Some((_, _, Val::Str(bs))) = bs.iter().find(|(n, _, _)| n == name) else {
                continue;
            };
            let what = format!("the `{name}` script");
            out.extend(command::compare_scopes(
                &command::invocations(&command::one_line(bs, Some(*line))),
                &command::invocations(&command::one_line(hs, Some(*line))),
                Shell::LastStatus,
                &what,
                Some(*line),
                true,
            ));
        }
    }
    if let Some((hm, _)) = h.get("mocha") {
        let empty = Val::Obj(Vec::new());
        mocha(b.get("mocha").map_or(&empty, |(v, _)| v), hm, &mut out);
    }
    if let Some((hj, _)) = h.get("jest") {
        let empty = Val::Obj(Vec::new());
        let bj = b.get("jest").map_or(&empty, |(v, _)| v);
        jest(bj, hj, &mut out);
    }
    Ok(out)
}

pub(super) fn js_config(
    base: &str,
    head: &str,
    path: &RepoPath,
    runner: Runner,
) -> Result<Vec<Narrowed>, String> {
    let json = path.file_name().ends_with(b".json");
    let (b, h) = if json {
        let h = json_checked(head)?;
        let Ok(b) = json_checked(base) else {
            return Ok(Vec::new());
        };
        (b, h)
    } else {
        (config_object(base), config_object(head))
    };
    let mut out = Vec::new();
    match runner {
        Runner::Jest => jest(&b, &h, &mut out),
        Runner::Vitest => vitest(&b, &h, &mut out),
    }
    Ok(out)
}

pub(super) fn nycrc(base: &str, head: &str) -> Result<Vec<Narrowed>, String> {
    let h = json_checked(head)?;
    let Ok(b) = json_checked(base) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for key in ["lines", "branches", "functions", "statements"] {
        if let Some((Val::Num(_), _)) = b.get(key) {
            thresholds(b.get(key), h.get(key), key, &mut out);
        }
    }
    if b.get("check-coverage").is_some_and(|(v, _)| v.truthy())
        && let Some((v, line)) = h.get("check-coverage")
        && !v.truthy()
    {
        out.push(Narrowed {
            moved_from: None,
            line: Some(line),
            message: "`check-coverage` is newly off: coverage is no longer checked".to_owned(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{self, Spec::*, lines, run};

    fn flagged(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::RunnerNarrowed)
    }

    fn messages(path: &str, old: &str, new: &str) -> Vec<String> {
        testing::messages(&run(&[Modify(path, old, new)]), Rule::RunnerNarrowed)
    }

    fn pkg(test: &str, jest: &str) -> String {
        format!(
            "{{\n  \"name\": \"web\",\n  \"scripts\": {{\n    \"build\": \"tsc\",\n    \"test\": {test}\n  }},\n  \"jest\": {jest}\n}}\n"
        )
    }

    #[test]
    fn mocha_configuration() {
        let old = "{ \"spec\": \"test/**/*.spec.js\", \"forbid-only\": true }\n";
        assert_eq!(
            messages(".mocharc.json", old, "{ \"spec\": \"test/a.spec.js\" }\n"),
            vec![
                "`forbid-only` is newly off: a test left focused with `.only` no longer fails the run, and the others do not run",
                "mocha's `spec` no longer covers `test/**/*.spec.js`: only `test/a.spec.js` runs",
            ]
        );
        let old = "module.exports = {\n  spec: ['test/unit/**/*.js', 'test/e2e/**/*.js'],\n};\n";
        let new = "module.exports = {\n  spec: ['test/unit/**/*.js'],\n  grep: 'parser',\n};\n";
        assert_eq!(flagged(".mocharc.js", old, new), vec![2, 3]);
        let pkg_old = "{\n  \"name\": \"x\",\n  \"mocha\": { \"spec\": [\"test\"] }\n}\n";
        let pkg_new = "{\n  \"name\": \"x\",\n  \"mocha\": { \"spec\": [\"test/one.js\"] }\n}\n";
        assert_eq!(flagged("package.json", pkg_old, pkg_new), vec![3]);
        // Wider, reordered or unchanged selections, and new strictness, are not narrower.
        for (old, new) in [
            (
                "{ \"spec\": \"test/unit/*.js\" }",
                "{ \"spec\": \"test/**/*.js\", \"forbid-only\": true }",
            ),
            (
                "{ \"spec\": [\"a/*.js\", \"b/*.js\"] }",
                "{ \"spec\": [\"b/*.js\", \"a/*.js\"], \"timeout\": 5000 }",
            ),
            (
                "{ \"spec\": \"test\" }",
                "{ \"spec\": \"./test\", \"recursive\": true }",
            ),
            (
                "{ \"spec\": \"test/a.js\" }",
                "{ \"spec\": \"test/**/*.js\" }",
            ),
        ] {
            assert!(flagged(".mocharc.json", old, new).is_empty(), "{new}");
        }
    }

    #[test]
    fn package_json_test_script() {
        let old = pkg("\"jest --coverage\"", "{}");
        for new in [
            pkg("\"jest --coverage || true\"", "{}"),
            pkg("\"jest --coverage; exit 0\"", "{}"),
            pkg("\"echo \\\"all tests pass\\\"\"", "{}"),
            pkg("\"jest --coverage --passWithNoTests\"", "{}"),
            pkg("\"jest --coverage -t login\"", "{}"),
        ] {
            assert_eq!(flagged("package.json", &old, &new), vec![5], "{new}");
        }
        assert_eq!(
            messages(
                "package.json",
                &old,
                &pkg("\"jest --coverage || true\"", "{}")
            ),
            vec!["the `test` script can no longer fail: `jest` is followed by `|| true`"]
        );
        for new in [
            pkg("\"jest --coverage --ci --verbose\"", "{}"),
            pkg("\"vitest run --coverage\"", "{}"),
            pkg("\"jest --coverage && echo done\"", "{}"),
            pkg("\"jest --coverage\"", "{\"verbose\": true}"),
        ] {
            assert!(flagged("package.json", &old, &new).is_empty(), "{new}");
        }
        // Other scripts are not test scripts.
        let new = old.replace("\"tsc\"", "\"tsc || true\"");
        assert!(flagged("package.json", &old, &new).is_empty());
    }

    #[test]
    fn package_json_jest_key() {
        let old = pkg(
            "\"jest\"",
            "{\n    \"testPathIgnorePatterns\": [\"/node_modules/\"],\n    \"coverageThreshold\": {\"global\": {\"lines\": 90, \"branches\": 80}}\n  }",
        );
        let new = pkg(
            "\"jest\"",
            "{\n    \"testPathIgnorePatterns\": [\"/node_modules/\", \"<rootDir>/src/parser/\"],\n    \"coverageThreshold\": {\"global\": {\"lines\": 50, \"branches\": 80}},\n    \"bail\": true\n  }",
        );
        assert_eq!(flagged("package.json", &old, &new), vec![8, 9, 10]);
        let new = pkg(
            "\"jest\"",
            "{\n    \"testPathIgnorePatterns\": [\"/node_modules/\", \"/dist/\"],\n    \"coverageThreshold\": {\"global\": {\"lines\": 95, \"branches\": 80}}\n  }",
        );
        assert!(flagged("package.json", &old, &new).is_empty());
    }

    #[test]
    fn jest_config_files() {
        let old = "/** @type {import('jest').Config} */\nmodule.exports = {\n  testEnvironment: 'node',\n  coverageThreshold: { global: { lines: 90 } },\n};\n";
        let new = "/** @type {import('jest').Config} */\nmodule.exports = {\n  testEnvironment: 'node',\n  testPathIgnorePatterns: ['/node_modules/', 'payment.test.ts'],\n  passWithNoTests: true,\n  coverageThreshold: { global: { lines: 60 } },\n};\n";
        assert_eq!(flagged("jest.config.js", old, new), vec![4, 5, 6]);
        let new_ts = "import type { Config } from 'jest';\n\nconst config: Config = {\n  testEnvironment: 'node',\n  coverageThreshold: { global: { lines: 90 } },\n  verbose: true,\n};\n\nexport default config;\n";
        assert!(flagged("jest.config.ts", old, new_ts).is_empty());
        // In a comment, nothing.
        let new = "module.exports = {\n  testEnvironment: 'node',\n  // passWithNoTests: true,\n  coverageThreshold: { global: { lines: 90 } },\n};\n";
        assert!(flagged("jest.config.js", old, new).is_empty());
    }

    #[test]
    fn vitest_config_files() {
        let old = "import { defineConfig, configDefaults } from 'vitest/config';\n\nexport default defineConfig({\n  test: {\n    exclude: [...configDefaults.exclude],\n    coverage: { thresholds: { lines: 80, branches: 70 } },\n  },\n});\n";
        let new = "import { defineConfig, configDefaults } from 'vitest/config';\n\nexport default defineConfig({\n  test: {\n    exclude: [...configDefaults.exclude, 'src/parser/**'],\n    passWithNoTests: true,\n    coverage: { thresholds: { lines: 40, branches: 70 } },\n  },\n});\n";
        assert_eq!(flagged("vitest.config.ts", old, new), vec![5, 6, 7]);
        assert!(
            messages("vitest.config.ts", old, new)[0]
                .contains("`test.exclude` newly ignores `src/parser/**`"),
            "{:?}",
            messages("vitest.config.ts", old, new)
        );
        // Vite's own `exclude` lists (optimizeDeps) are not tests.
        let vite_old = "export default defineConfig({\n  plugins: [react()],\n});\n";
        let vite_new = "export default defineConfig({\n  plugins: [react()],\n  optimizeDeps: { exclude: ['lodash'] },\n});\n";
        assert!(flagged("vite.config.ts", vite_old, vite_new).is_empty());
        let raised = old.replace("lines: 80", "lines: 90");
        assert!(flagged("vitest.config.ts", old, &raised).is_empty());
    }

    #[test]
    fn nycrc() {
        let old = "{\n  \"check-coverage\": true,\n  \"lines\": 90\n}\n";
        assert_eq!(
            flagged(
                ".nycrc",
                old,
                "{\n  \"check-coverage\": true,\n  \"lines\": 50\n}\n"
            ),
            vec![3]
        );
        assert_eq!(
            flagged(
                ".nycrc.json",
                old,
                "{\n  \"check-coverage\": false,\n  \"lines\": 90\n}\n"
            ),
            vec![2]
        );
        assert!(
            flagged(
                ".nycrc",
                old,
                "{\n  \"check-coverage\": true,\n  \"lines\": 95\n}\n"
            )
            .is_empty()
        );
    }
}
