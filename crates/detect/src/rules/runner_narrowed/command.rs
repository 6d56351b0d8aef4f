//! Test commands in shell text (a `package.json` script, a Makefile recipe, a CI `run:` step,
//! a tox `commands` line): which runner each command invokes, and what a head version of the
//! same scripts newly runs or demands less of than the base version.
//!
//! Compared per *scope* (one script, one target, one CI job): a runner the base ran that the
//! head no longer runs (and no other runner of its ecosystem replaces), a selection option the
//! head adds (`-k`, `--deselect`, `-run`, `--testNamePattern`, `-DskipTests`, …), a path no
//! command of the head passes to that runner any more (the union over the scope: one command
//! split into several is not narrower), a failure the head swallows (`|| true`, `; exit 0`, `set +e`), and a
//! coverage threshold lowered (`--cov-fail-under`). More output, more strictness, a wider
//! selection and other changes of options are not narrowing.

use super::Narrowed;
use super::runners::{IGNORES, Runner, SELECTS, VALUED, Word, runner, table};
pub(super) use super::runners::{is_test_job, is_test_name};

/// What a script is run by: the shell's exit status decides (`sh -c` of a package.json script
/// or a Makefile line), or `bash -e` stops at the first failure (a CI step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shell {
    LastStatus,
    ErrExit,
}

/// Splits shell text into words and operators, with the line of each (text given as lines).
fn shell_words(lines: &[(String, Option<u32>)]) -> Vec<Word> {
    let mut out = Vec::new();
    for (text, line) in lines {
        let mut cur = String::new();
        let mut in_word = false;
        let mut chars = text.chars().peekable();
        let push = |cur: &mut String, in_word: &mut bool, out: &mut Vec<Word>| {
            if *in_word {
                out.push(Word {
                    text: std::mem::take(cur),
                    line: *line,
                });
                *in_word = false;
            }
        };
        while let Some(c) = chars.next() {
            match c {
                '\'' => {
                    in_word = true;
                    for d in chars.by_ref() {
                        if d == '\'' {
                            break;
                        }
                        cur.push(d);
                    }
                }
                '"' => {
                    in_word = true;
                    while let Some(d) = chars.next() {
                        match d {
                            '"' => break,
                            '\\' => {
                                if let Some(e) = chars.next() {
                                    cur.push(e);
                                }
                            }
                            _ => cur.push(d),
                        }
                    }
                }
                '\\' => {
                    match chars.next() {
                        // A line continuation.
                        None => {}
                        Some(e) => {
                            in_word = true;
                            cur.push(e);
                        }
                    }
                }
                '$' if matches!(chars.peek(), Some('(') | Some('{')) => {
                    // `$(cmd)`, `$(VAR)`, `${VAR}`: one word, whatever is inside.
                    in_word = true;
                    cur.push(c);
                    let mut depth = 0usize;
                    for d in chars.by_ref() {
                        cur.push(d);
                        match d {
                            '(' | '{' => depth += 1,
                            ')' | '}' => {
                                depth = depth.saturating_sub(1);
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                }
                '#' if !in_word => {
                    // A comment to the end of the line.
                    break;
                }
                ' ' | '\t' | '\r' => push(&mut cur, &mut in_word, &mut out),
                ';' | '&' | '|' | '(' | ')' => {
                    push(&mut cur, &mut in_word, &mut out);
                    let mut op = c.to_string();
                    if (c == '&' || c == '|') && chars.peek() == Some(&c) {
                        chars.next();
                        op.push(c);
                    }
                    out.push(Word {
                        text: op,
                        line: *line,
                    });
                }
                _ => {
                    in_word = true;
                    cur.push(c);
                }
            }
        }
        push(&mut cur, &mut in_word, &mut out);
        // A line ends a command unless it ended with a continuation.
        if !text.trim_end().ends_with('\\') {
            out.push(Word {
                text: "\n".to_owned(),
                line: *line,
            });
        }
    }
    out
}

fn is_op(w: &str) -> bool {
    matches!(w, ";" | "&" | "&&" | "|" | "||" | "\n" | "(" | ")")
}

/// One command of a script: its words, and the operator joining it to the next.
#[derive(Clone, Debug)]
struct Command {
    words: Vec<Word>,
    next_op: Option<String>,
}

fn commands(words: &[Word]) -> Vec<Command> {
    let mut out = Vec::new();
    let mut cur: Vec<Word> = Vec::new();
    for w in words {
        if is_op(&w.text) {
            if !cur.is_empty() {
                out.push(Command {
                    words: std::mem::take(&mut cur),
                    next_op: Some(w.text.clone()),
                });
            } else if let Some(last) = out.last_mut()
                && last.next_op.as_deref() == Some("\n")
                && w.text != "\n"
            {
                last.next_op = Some(w.text.clone());
            }
        } else {
            cur.push(w.clone());
        }
    }
    if !cur.is_empty() {
        out.push(Command {
            words: cur,
            next_op: None,
        });
    }
    out
}

/// A runner's invocation in a script.
#[derive(Clone, Debug)]
pub(super) struct Invocation {
    pub runner: Runner,
    /// How a reviewer reads it: `pytest`, `go test`, `npm run test:unit`.
    pub name: String,
    pub args: Vec<Word>,
    pub line: Option<u32>,
    /// What follows with `||`, if anything (`true`, `exit 0`, `echo …`).
    or_else: Option<Vec<Word>>,
    /// A later `exit 0` or `true` ends the script after it, with `;` or a newline.
    exit_zero_after: Option<Option<u32>>,
    /// `set +e` came before it.
    errexit_off: Option<Option<u32>>,
}

/// Every runner invocation of a script.
pub(super) fn invocations(lines: &[(String, Option<u32>)]) -> Vec<Invocation> {
    let words = shell_words(lines);
    let cmds = commands(&words);
    let mut out = Vec::new();
    let mut errexit_off: Option<Option<u32>> = None;
    for (k, cmd) in cmds.iter().enumerate() {
        let texts: Vec<&str> = cmd.words.iter().map(|w| w.text.as_str()).collect();
        if texts.first() == Some(&"set")
            && texts.iter().any(|w| w.starts_with('+') && w.contains('e'))
        {
            errexit_off = Some(cmd.words.first().and_then(|w| w.line));
        }
        if texts.first() == Some(&"set")
            && texts.iter().any(|w| w.starts_with('-') && w.contains('e'))
        {
            errexit_off = None;
        }
        let Some((runner, name, start)) = runner(&cmd.words) else {
            continue;
        };
        let or_else = (cmd.next_op.as_deref() == Some("||"))
            .then(|| cmds.get(k + 1).map(|c| c.words.clone()))
            .flatten();
        // `pytest; exit 0` or `pytest \n true`: the last command decides the status.
        let mut exit_zero_after = None;
        if let Some(last) = cmds.last()
            && cmds.len() > k + 1
            && !cmds[k..cmds.len() - 1]
                .iter()
                .any(|c| c.next_op.as_deref() == Some("&&"))
            && succeeds(&last.words)
        {
            exit_zero_after = Some(last.words.first().and_then(|w| w.line));
        }
        out.push(Invocation {
            runner,
            name,
            args: cmd.words[start.min(cmd.words.len())..].to_vec(),
            line: cmd.words.first().and_then(|w| w.line),
            or_else,
            exit_zero_after,
            errexit_off,
        });
    }
    out
}

/// A command that always succeeds: `true`, `:`, `exit 0`, `echo …`.
fn succeeds(words: &[Word]) -> bool {
    let t: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    matches!(
        t.as_slice(),
        ["true"] | [":"] | ["exit", "0"] | ["exit", "0", ..]
    ) || t.first().is_some_and(|w| matches!(*w, "echo" | "printf"))
}

/// The parsed arguments of one invocation.
#[derive(Debug, Default)]
struct Args {
    /// `(option, value, line)` for options the runner's table lists.
    selected: Vec<(String, String, Option<u32>)>,
    positional: Vec<(String, Option<u32>)>,
    /// `--cov-fail-under` and the like: a coverage threshold, and its line.
    fail_under: Option<(f64, Option<u32>)>,
}

fn parse_args(r: Runner, words: &[Word]) -> Args {
    let table = table(r);
    let mut out = Args::default();
    let mut i = 0;
    // Cargo: `cargo test [filter] -- [harness options]`.
    let mut after_dashes = false;
    while i < words.len() {
        let w = &words[i].text;
        let line = words[i].line;
        i += 1;
        if w == "--" {
            after_dashes = true;
            continue;
        }
        // Redirections: `< file`, `> out.txt`, `2>err`.
        if w.starts_with('<') || w.starts_with('>') || w.starts_with("2>") || w.starts_with("1>") {
            if matches!(w.as_str(), "<" | ">" | ">>" | "2>" | "1>" | "2>>") {
                i += 1;
            }
            continue;
        }
        if matches!(r, Runner::Delegate) && !after_dashes {
            // `npm test -- -t x`: only what follows `--` reaches the runner.
            continue;
        }
        if let Some(v) = w
            .strip_prefix("--cov-fail-under=")
            .or_else(|| w.strip_prefix("--fail-under="))
        {
            if let Ok(n) = v.parse() {
                out.fail_under = Some((n, line));
            }
            continue;
        }
        if w == "--cov-fail-under" || w == "--fail-under" {
            if let Some(n) = words.get(i).and_then(|v| v.text.parse().ok()) {
                out.fail_under = Some((n, line));
            }
            i += 1;
            continue;
        }
        if !w.starts_with('-') || w == "-" {
            out.positional.push((w.clone(), line));
            continue;
        }
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
            None => (w.clone(), None),
        };
        // `-kexpr`, `-pno:x`: short options with their value attached.
        let attached = table.iter().find(|(n, takes, _)| {
            *takes
                && n.len() == 2
                && !n.starts_with("--")
                && w.len() > 2
                && w.starts_with(n)
                && inline.is_none()
        });
        if let Some((n, _, _)) = attached
            && !table.iter().any(|(m, _, _)| m == w)
        {
            out.selected
                .push(((*n).to_owned(), w[n.len()..].to_owned(), line));
            continue;
        }
        if let Some(&(n, takes, _)) = table.iter().find(|(n, _, _)| *n == name) {
            let value = if !takes {
                inline.unwrap_or_default()
            } else if let Some(v) = inline {
                v
            } else {
                i += 1;
                words.get(i - 1).map(|v| v.text.clone()).unwrap_or_default()
            };
            out.selected.push((n.to_owned(), value, line));
            continue;
        }
        // An option's value, unless what follows is another option (`--cov --cov-report x`).
        if inline.is_none()
            && VALUED.contains(&name.as_str())
            && words.get(i).is_some_and(|v| !v.text.starts_with('-'))
        {
            i += 1;
        }
    }
    if r == Runner::Pytest {
        // `-p no:cacheprovider` only keeps the cache directory out of the tree.
        out.selected
            .retain(|(n, v, _)| n != "-p" || (v.starts_with("no:") && v != "no:cacheprovider"));
    }
    out.selected
        .retain(|(n, _, _)| table.iter().any(|(m, _, does)| m == n && !does.is_empty()));
    out
}

/// A path as passed: without `./`, a trailing `/`, or Go's `/...`.
fn norm_path(p: &str) -> (String, bool) {
    let mut s = p.trim();
    let mut recursive = false;
    if let Some(rest) = s.strip_suffix("/...") {
        s = rest;
        recursive = true;
    } else if s == "..." {
        s = ".";
        recursive = true;
    }
    let s = s.trim_start_matches("./").trim_end_matches('/');
    (
        if s.is_empty() {
            ".".to_owned()
        } else {
            s.to_owned()
        },
        recursive,
    )
}

/// True when running `h` runs what `b` did.
pub(super) fn covers(h: &str, b: &str) -> bool {
    let (h, hr) = norm_path(h);
    let (b, _) = norm_path(b);
    if h == b || h == "." && (hr || !b.contains('/')) {
        return true;
    }
    b.strip_prefix(&format!("{h}/")).is_some()
        || (hr && h == ".")
        || b.split("::").next() == Some(h.as_str()) && b.contains("::")
}

/// A path that names one test file or test (rather than a directory of them).
fn names_a_file(p: &str) -> bool {
    p.contains("::")
        || [
            ".py", ".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".rb", ".php", "_test.go",
        ]
        .iter()
        .any(|e| p.ends_with(e))
}

/// A directory inside a test directory (`test/other`, `tests/unit`): part of a suite that
/// lives under its parent, not the suite.
fn is_test_subdir(p: &str) -> bool {
    let (p, _) = norm_path(p);
    let mut parts = p.split('/');
    let first = parts.next().unwrap_or_default();
    ["test", "tests", "spec", "specs", "__tests__"].contains(&first)
        && parts
            .next()
            .is_some_and(|d| !d.is_empty() && !d.contains(['*', '{']))
        && !is_fixture_dir(&p)
}

/// What the head invocation `h` newly narrows compared with the base invocation `b` of the
/// same runner, in a `shell` that ignores or honours failures. Paths are compared over a whole
/// scope, by [`dropped_paths`].
/// A path under (or naming) a fixtures or test-data directory: `tests/fixtures`, `testdata/`.
fn is_fixture_dir(value: &str) -> bool {
    let inside = format!(
        "{}/x",
        value.trim_matches(['"', '\'']).trim_end_matches('/')
    );
    crate::paths::is_fixture(&crate::change::RepoPath::from(inside.as_str()))
}

fn compare(
    b: &Invocation,
    h: &Invocation,
    shell: Shell,
    what: &str,
    test_scope: bool,
) -> Vec<Narrowed> {
    let mut out = Vec::new();
    let ba = parse_args(b.runner, &b.args);
    let mut ha = parse_args(h.runner, &h.args);
    if !test_scope && matches!(h.runner, Runner::Maven | Runner::Gradle) {
        ha.selected.clear();
    }
    let runner = &h.name;
    for (name, value, line) in &ha.selected {
        let had = ba
            .selected
            .iter()
            .any(|(n, v, _)| n == name && (v == value || takes_no_value(h.runner, name)));
        // A changed `-k` expression is not read as narrower: only new options are.
        let had_option = ba.selected.iter().any(|(n, _, _)| n == name)
            && matches!(
                name.as_str(),
                "-k" | "-t"
                    | "--testNamePattern"
                    | "-run"
                    | "-g"
                    | "--grep"
                    | "--filter"
                    | "-m"
                    | "--tag"
            );
        if had || had_option {
            continue;
        }
        let does = table(h.runner)
            .iter()
            .find(|(n, _, _)| n == name)
            .map_or(SELECTS, |(_, _, d)| d);
        // Test data under a fixtures directory is no test: ignoring it narrows nothing.
        if does == IGNORES && is_fixture_dir(value) {
            continue;
        }
        let shown = if value.is_empty() {
            name.clone()
        } else {
            format!("{name} {value}")
        };
        // The same file or directory ignored at its new place: the base's ignore, moved.
        let moved_from = (does == IGNORES)
            .then(|| {
                let gone = ba
                    .selected
                    .iter()
                    .filter(|(n, v, _)| {
                        n == name && !ha.selected.iter().any(|(hn, hv, _)| hn == n && hv == v)
                    })
                    .map(|(_, v, _)| v.as_str());
                super::repathed(value, gone)
            })
            .flatten()
            .map(|from| (from, value.clone()));
        out.push(Narrowed {
            moved_from,
            line: line.or(h.line),
            message: format!("{what} newly passes `{shown}` to `{runner}`, which {does}"),
        });
    }
    if let Some((base_n, _)) = ba.fail_under {
        match ha.fail_under {
            Some((n, line)) if n < base_n => out.push(Narrowed {
                moved_from: None,
                line: line.or(h.line),
                message: format!("{what} lowers the coverage threshold from {base_n} to {n}"),
            }),
            None => out.push(Narrowed {
                moved_from: None,
                line: h.line,
                message: format!(
                    "{what} no longer passes the coverage threshold of {base_n} to `{runner}`"
                ),
            }),
            _ => {}
        }
    }
    // Failures swallowed.
    let swallows = |i: &Invocation| i.or_else.as_ref().is_some_and(|w| succeeds(w));
    if swallows(h) && !swallows(b) {
        let shown = h
            .or_else
            .as_ref()
            .map(|w| {
                w.iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        out.push(Narrowed {
            moved_from: None,
            line: h
                .or_else
                .as_ref()
                .and_then(|w| w.first())
                .and_then(|w| w.line)
                .or(h.line),
            message: format!("{what} can no longer fail: `{runner}` is followed by `|| {shown}`"),
        });
    } else if shell == Shell::LastStatus
        && let Some(line) = h.exit_zero_after
        && b.exit_zero_after.is_none()
    {
        out.push(Narrowed {
            moved_from: None,
            line: line.or(h.line),
            message: format!(
                "{what} can no longer fail: it ends with a command that succeeds after `{runner}`"
            ),
        });
    }
    if shell == Shell::ErrExit
        && let Some(line) = h.errexit_off
        && b.errexit_off.is_none()
    {
        out.push(Narrowed {
 moved_from: None,
            line: line.or(h.line),
            message: format!("{what} newly runs `{runner}` after `set +e`, so its failure no longer stops the step"),
        });
    }
    out
}

fn takes_no_value(r: Runner, name: &str) -> bool {
    table(r).iter().any(|(n, takes, _)| *n == name && !takes)
}

/// Runners that replace one another: the same ecosystem (`jest` for `vitest`), or another
/// script or target of the same tool (`make richtest` for `make test`).
fn family(i: &Invocation) -> String {
    match i.runner {
        Runner::Delegate => format!(
            "delegate:{}",
            i.name.split_whitespace().next().unwrap_or_default()
        ),
        r => r.ecosystem().to_owned(),
    }
}

/// What the head scripts of one scope newly run or demand less of than the base scripts.
/// `what` names the scope for messages ("the `test` script", "job `test`"); `fallback` is the
/// line to point at when nothing in the head is left to point at.
/// `test_scope`: the scope is about testing by its name; elsewhere a build tool's options that
/// skip tests (`mvn install -DskipTests` in a release job) are its business.
pub(super) fn compare_scopes(
    base: &[Invocation],
    head: &[Invocation],
    shell: Shell,
    what: &str,
    fallback: Option<u32>,
    test_scope: bool,
) -> Vec<Narrowed> {
    let mut out = Vec::new();
    for b in base {
        let same: Vec<&Invocation> = head.iter().filter(|h| h.name == b.name).collect();
        if same.is_empty() {
            let replaced = head.iter().any(|h| family(h) == family(b));
            if !replaced {
                out.push(Narrowed {
                    moved_from: None,
                    line: fallback,
                    message: format!("{what} no longer runs `{}`", b.name),
                });
            }
        }
    }
    // Each base invocation against the head invocation that narrows it least, among those that
    // run its paths if any does: a reordering, a second call, or a narrower run added beside
    // the unchanged full one is not new.
    for b in base {
        let best = head
            .iter()
            .filter(|h| h.name == b.name)
            .map(|h| (paths_missed(b, h), compare(b, h, shell, what, test_scope)))
            .min_by_key(|(missed, found)| (*missed, found.len()))
            .map(|(_, found)| found)
            .unwrap_or_default();
        out.extend(best);
    }
    // Paths, per runner, over the whole scope: one command split into several (`pytest a b` →
    // `pytest a` / `pytest b`, in one step or one job) still runs what it ran.
    let mut names: Vec<&str> = head.iter().map(|h| h.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let b: Vec<&Invocation> = base.iter().filter(|i| i.name == name).collect();
        let h: Vec<&Invocation> = head.iter().filter(|i| i.name == name).collect();
        out.extend(dropped_paths(&b, &h, what));
    }
    // One `set +e` is one flag, however many runners follow it.
    let mut seen_set_e = Vec::new();
    out.retain(|n| {
        !n.message.contains("after `set +e`") || {
            let first = !seen_set_e.contains(&n.line);
            seen_set_e.push(n.line);
            first
        }
    });
    out
}

/// The options `lines` hold (pytest's `addopts`) as an invocation of `runner`, for comparing
/// with [`compare_options`].
pub(super) fn options(runner: Runner, name: &str, lines: &[(String, Option<u32>)]) -> Invocation {
    let args: Vec<Word> = shell_words(lines)
        .into_iter()
        .filter(|w| w.text != "\n")
        .collect();
    Invocation {
        runner,
        name: name.to_owned(),
        line: lines.first().and_then(|(_, l)| *l),
        args,
        or_else: None,
        exit_zero_after: None,
        errexit_off: None,
    }
}

/// What the head options newly narrow compared with the base options.
pub(super) fn compare_options(base: &Invocation, head: &Invocation, what: &str) -> Vec<Narrowed> {
    let mut out = compare(base, head, Shell::ErrExit, what, true);
    out.extend(dropped_paths(&[base], &[head], what));
    out
}

/// How many of the paths `b` passes `h` does not cover (none when `h` passes none: it runs
/// everything).
fn paths_missed(b: &Invocation, h: &Invocation) -> usize {
    let ba = parse_args(b.runner, &b.args);
    let ha = parse_args(h.runner, &h.args);
    if ha.positional.is_empty() {
        return 0;
    }
    ba.positional
        .iter()
        .filter(|(p, _)| !ha.positional.iter().any(|(q, _)| covers(q, p)))
        .count()
}

/// The paths the base invocations of one runner (`base`, all of one name) passed that none of
/// the head invocations (`head`, the same name) covers: each such path once, however the
/// commands are split. A head command without paths runs the whole suite; a base one without
/// paths did, and the head narrows it only to paths that name files (or Cargo's filters). A
/// placeholder (`{posargs}`, `$(FLAGS)`, `${{ matrix.x }}`) may stand for anything.
fn dropped_paths(base: &[&Invocation], head: &[&Invocation], what: &str) -> Vec<Narrowed> {
    let mut out = Vec::new();
    let Some(first) = head.first() else {
        return out;
    };
    if base.is_empty()
        || matches!(
            first.runner,
            Runner::Delegate | Runner::Maven | Runner::Gradle | Runner::Tox
        )
    {
        return out;
    }
    let ba: Vec<Args> = base.iter().map(|b| parse_args(b.runner, &b.args)).collect();
    let ha: Vec<Args> = head.iter().map(|h| parse_args(h.runner, &h.args)).collect();
    let placeholder = |a: &Args| {
        a.positional
            .iter()
            .any(|(w, _)| w.contains('$') || w.contains('{') || w.contains('%'))
    };
    if ba.iter().chain(&ha).any(placeholder) || ha.iter().any(|a| a.positional.is_empty()) {
        return out;
    }
    let runner = &first.name;
    let filter = first.runner == Runner::Cargo;
    let head_paths: Vec<&(String, Option<u32>)> =
        ha.iter().flat_map(|a| a.positional.iter()).collect();
    let line = head_paths.first().and_then(|(_, l)| *l).or(first.line);
    if ba.iter().any(|a| a.positional.is_empty()) {
        if let Some((p, line)) = head_paths
            .iter()
            .find(|(p, _)| filter || names_a_file(p) || is_test_subdir(p))
        {
            out.push(Narrowed {
                moved_from: None,
                line: line.or(first.line),
                message: format!("{what} now runs only `{p}` with `{runner}`, not the whole suite"),
            });
        }
        return out;
    }
    let mut seen: Vec<&str> = Vec::new();
    for (p, _) in ba.iter().flat_map(|a| a.positional.iter()) {
        if seen.contains(&p.as_str()) {
            continue;
        }
        seen.push(p);
        let kept = if filter {
            head_paths
                .iter()
                .any(|(q, _)| q == p || p.contains(q.as_str()))
        } else {
            head_paths.iter().any(|(q, _)| covers(q, p))
        };
        if !kept {
            out.push(Narrowed {
                moved_from: None,
                line,
                message: format!(
                    "{what} no longer passes `{p}` to `{runner}`: those tests no longer run"
                ),
            });
        }
    }
    out
}

/// A script as lines without line numbers (a JSON string): every word gets `line`.
pub(super) fn one_line(text: &str, line: Option<u32>) -> Vec<(String, Option<u32>)> {
    text.lines().map(|l| (l.to_owned(), line)).collect()
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
