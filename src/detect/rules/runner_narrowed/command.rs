//! Test commands in shell text (a `package.json` script, a Makefile recipe, a CI `run:` step,
//! a tox `commands` line): which runner each command invokes, and what a head version of the
//! same scripts newly runs or demands less of than the base version.
//!
//! Compared per *scope* (one script, one target, one CI job): a runner the base ran that the
//! head no longer runs (and no other runner of its ecosystem replaces), a selection option the
//! head adds (`-k`, `--deselect`, `-run`, `--testNamePattern`, `-DskipTests`, …), a path the
//! head no longer passes, a failure the head swallows (`|| true`, `; exit 0`, `set +e`), and a
//! coverage threshold lowered (`--cov-fail-under`). More output, more strictness, a wider
//! selection and other changes of options are not narrowing.

use super::Narrowed;
use super::runners::{Runner, SELECTS, VALUED, Word, runner, table};
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

/// What the head invocation `h` newly narrows compared with the base invocation `b` of the
/// same runner, in a `shell` that ignores or honours failures.
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
        let shown = if value.is_empty() {
            name.clone()
        } else {
            format!("{name} {value}")
        };
        out.push(Narrowed {
            line: line.or(h.line),
            message: format!("{what} newly passes `{shown}` to `{runner}`, which {does}"),
        });
    }
    // Paths: one the base ran and the head no longer covers. A placeholder (`{posargs}`,
    // `$(FLAGS)`, `${{ matrix.x }}`) may stand for anything.
    let placeholder = |p: &[(String, Option<u32>)]| {
        p.iter()
            .any(|(w, _)| w.contains('$') || w.contains('{') || w.contains('%'))
    };
    if !ha.positional.is_empty()
        && !placeholder(&ha.positional)
        && !placeholder(&ba.positional)
        && !matches!(
            h.runner,
            Runner::Delegate | Runner::Maven | Runner::Gradle | Runner::Tox
        )
    {
        let filter = h.runner == Runner::Cargo;
        if ba.positional.is_empty() {
            let narrowing: Vec<&(String, Option<u32>)> = ha
                .positional
                .iter()
                .filter(|(p, _)| filter || names_a_file(p))
                .collect();
            if let Some((p, line)) = narrowing.first() {
                out.push(Narrowed {
                    line: line.or(h.line),
                    message: format!(
                        "{what} now runs only `{p}` with `{runner}`, not the whole suite"
                    ),
                });
            }
        } else {
            for (p, _) in &ba.positional {
                let kept = if filter {
                    ha.positional
                        .iter()
                        .any(|(q, _)| q == p || p.contains(q.as_str()))
                } else {
                    ha.positional.iter().any(|(q, _)| covers(q, p))
                };
                if !kept {
                    out.push(Narrowed {
                        line: ha.positional.first().and_then(|(_, l)| *l).or(h.line),
                        message: format!(
                            "{what} no longer passes `{p}` to `{runner}`: those tests no longer run"
                        ),
                    });
                }
            }
        }
    }
    if let Some((base_n, _)) = ba.fail_under {
        match ha.fail_under {
            Some((n, line)) if n < base_n => out.push(Narrowed {
                line: line.or(h.line),
                message: format!("{what} lowers the coverage threshold from {base_n} to {n}"),
            }),
            None => out.push(Narrowed {
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
                    line: fallback,
                    message: format!("{what} no longer runs `{}`", b.name),
                });
            }
        }
    }
    // Each base invocation still made as it was, or broader, by one head invocation: pairs.
    let mut kept = vec![false; head.len()];
    let mut covered = vec![false; base.len()];
    for (i, b) in base.iter().enumerate() {
        if let Some(j) = (0..head.len()).find(|&j| {
            !kept[j]
                && head[j].name == b.name
                && compare(b, &head[j], shell, what, test_scope).is_empty()
        }) {
            kept[j] = true;
            covered[i] = true;
        }
    }
    for (j, h) in head.iter().enumerate() {
        let candidates: Vec<&Invocation> = base.iter().filter(|b| b.name == h.name).collect();
        if candidates.is_empty() || kept[j] {
            continue;
        }
        // A run added beside the runs of the base, which all stay: it narrows none of them.
        if base
            .iter()
            .zip(&covered)
            .all(|(b, &c)| c || b.name != h.name)
        {
            continue;
        }
        // The base invocation it narrows least: a reordering or a second call is not new.
        let best = candidates
            .iter()
            .map(|b| compare(b, h, shell, what, test_scope))
            .min_by_key(Vec::len)
            .unwrap_or_default();
        out.extend(best);
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
    compare(base, head, Shell::ErrExit, what, true)
}

/// A script as lines without line numbers (a JSON string): every word gets `line`.
pub(super) fn one_line(text: &str, line: Option<u32>) -> Vec<(String, Option<u32>)> {
    text.lines().map(|l| (l.to_owned(), line)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(s: &str) -> Vec<Invocation> {
        invocations(&one_line(s, Some(1)))
    }

    fn narrowed(base: &str, head: &str) -> Vec<String> {
        compare_scopes(
            &inv(base),
            &inv(head),
            Shell::LastStatus,
            "the script",
            None,
            true,
        )
        .into_iter()
        .map(|n| n.message)
        .collect()
    }

    #[test]
    fn runners_are_recognised_through_wrappers() {
        for (s, name) in [
            ("pytest -q", "pytest"),
            ("python -m pytest tests", "pytest"),
            ("poetry run pytest", "pytest"),
            ("uv run --with x pytest", "pytest"),
            ("coverage run -m pytest", "pytest"),
            ("CI=1 npx jest --ci", "jest"),
            ("vitest run", "vitest"),
            ("nyc mocha", "mocha"),
            ("go test ./...", "go test"),
            ("cargo nextest run", "cargo nextest run"),
            ("./gradlew test", "gradle"),
            ("bundle exec rspec", "rspec"),
            ("npm run test:unit", "npm run test:unit"),
            ("make test", "make test"),
            ("dotnet test", "dotnet test"),
        ] {
            let i = inv(s);
            assert_eq!(i.len(), 1, "{s}");
            assert_eq!(i[0].name, name, "{s}");
        }
        for s in [
            "echo pytest",
            "python setup.py build",
            "make build",
            "npm run lint",
            "go vet ./...",
        ] {
            assert!(inv(s).is_empty(), "{s}");
        }
    }

    #[test]
    fn selections_and_paths() {
        assert_eq!(
            narrowed("pytest tests", "pytest tests -k 'not slow'"),
            vec![
                "the script newly passes `-k not slow` to `pytest`, which runs only the tests it selects"
            ]
        );
        assert_eq!(
            narrowed("pytest", "pytest --deselect tests/test_a.py::test_b").len(),
            1
        );
        assert_eq!(narrowed("pytest", "pytest -pno:randomly").len(), 1);
        assert!(narrowed("pytest", "pytest -p no:cacheprovider").is_empty());
        assert_eq!(
            narrowed("pytest tests/unit tests/integration", "pytest tests/unit"),
            vec![
                "the script no longer passes `tests/integration` to `pytest`: those tests no longer run"
            ]
        );
        assert!(
            narrowed("pytest tests/unit", "pytest tests").is_empty(),
            "wider"
        );
        assert!(narrowed("pytest tests", "pytest").is_empty(), "wider");
        assert_eq!(narrowed("pytest", "pytest tests/test_a.py").len(), 1);
        assert_eq!(narrowed("go test ./...", "go test ./pkg/...").len(), 1);
        assert!(narrowed("go test ./pkg/...", "go test ./...").is_empty());
        assert_eq!(
            narrowed("go test ./...", "go test -run TestA ./...").len(),
            1
        );
        assert_eq!(narrowed("cargo test", "cargo test parser").len(), 1);
        assert_eq!(narrowed("cargo test", "cargo test -- --skip slow").len(), 1);
        assert_eq!(narrowed("mvn verify", "mvn verify -DskipTests").len(), 1);
        assert_eq!(narrowed("jest", "jest --passWithNoTests").len(), 1);
        assert_eq!(narrowed("npm test", "npm test -- -t login").len(), 1);
        // More output, strictness, other options: not narrower.
        for (b, h) in [
            ("pytest", "pytest -v --strict-markers -x -n auto"),
            ("jest", "jest --ci --coverage --maxWorkers 2"),
            ("go test ./...", "go test -race -count=1 ./..."),
            ("pytest -k 'not slow'", "pytest -k 'not slow and not db'"),
            ("cargo test", "cargo test --all-features --workspace"),
        ] {
            assert!(
                narrowed(b, h).is_empty(),
                "{b} -> {h}: {:?}",
                narrowed(b, h)
            );
        }
    }

    #[test]
    fn failures_swallowed_and_runners_dropped() {
        assert_eq!(
            narrowed("jest", "jest || true"),
            vec!["the script can no longer fail: `jest` is followed by `|| true`"]
        );
        assert_eq!(narrowed("pytest", "pytest || exit 0").len(), 1);
        assert_eq!(narrowed("pytest", "pytest; exit 0").len(), 1);
        assert_eq!(narrowed("pytest", "pytest || echo failed").len(), 1);
        assert!(narrowed("pytest || true", "pytest -v || true").is_empty());
        assert!(narrowed("pytest", "pytest && echo done").is_empty());
        assert_eq!(narrowed("jest", "echo \"tests pass\"").len(), 1);
        assert!(narrowed("jest", "vitest run").is_empty(), "a migration");
        assert!(narrowed("npm test", "echo 'no tests' && exit 1").len() == 1);
        assert_eq!(
            narrowed(
                "pytest --cov=app --cov-fail-under=90",
                "pytest --cov=app --cov-fail-under=70"
            ),
            vec!["the script lowers the coverage threshold from 90 to 70"]
        );
        assert!(narrowed("pytest --cov-fail-under=70", "pytest --cov-fail-under=90").is_empty());
        let base = inv("set -e\npytest\n");
        let head = inv("set +e\npytest\necho done\n");
        assert_eq!(
            compare_scopes(&base, &head, Shell::ErrExit, "job `t`", None, true).len(),
            1
        );
        let (b, h) = (inv("pytest\njest\n"), inv("set +e\npytest\njest\n"));
        assert_eq!(
            compare_scopes(&b, &h, Shell::ErrExit, "job `t`", None, true).len(),
            1
        );
        // Placeholders and wrappers with options.
        assert!(narrowed("pytest {posargs:tests}", "pytest {posargs}").is_empty());
        assert!(narrowed("go test -v ./...", "go test -v $(GO_TEST_FLAGS) ./...").is_empty());
        assert!(narrowed("tox run -e py", "uv run --locked tox run -e py").is_empty());
        assert!(
            narrowed(
                "nyc --reporter=text npm test",
                "nyc --exclude examples --reporter=text npm test"
            )
            .is_empty()
        );
        assert!(narrowed("make test", "make richtest").is_empty());
        assert!(
            narrowed(
                "uv run pytest tests",
                "xargs -0 uv run --no-sync pytest tests < f > out.txt"
            )
            .is_empty()
        );
        assert!(narrowed("pnpm run test:ci", "pnpm run test:ci:all").is_empty());
        // A build tool skipping tests outside a test scope is its business.
        let (b, h) = (inv("mvn install"), inv("mvn install -DskipTests"));
        assert!(compare_scopes(&b, &h, Shell::ErrExit, "job `release`", None, false).is_empty());
        assert_eq!(
            compare_scopes(&b, &h, Shell::ErrExit, "job `test`", None, true).len(),
            1
        );
    }

    #[test]
    fn paths_cover() {
        assert!(covers("tests", "tests/unit"));
        assert!(covers("./tests/", "tests"));
        assert!(covers("./...", "./pkg/x"));
        assert!(!covers("tests/unit", "tests"));
        assert!(covers("tests/test_a.py", "tests/test_a.py::test_b"));
    }
}
