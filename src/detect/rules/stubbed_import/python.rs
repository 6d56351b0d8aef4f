//! `stubbed-import` in Python: a `try` that only imports closed by an `except` that carries on,
//! writes to `sys.modules`, `<imported name> = None`.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::{either, is_word_end, re};
use crate::detect::flag::Rule;
use crate::detect::scan::{Occurrence, Text};

static PY_TRY: LazyLock<Regex> = LazyLock::new(|| re(r"^([ \t]*)try[ \t]*:[ \t\r]*$"));
static PY_IMPORT_STMT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[ \t]*(?:import[ \t]|from[ \t]+\S+[ \t]+import\b|pass\b|[\w.]+[ \t]*=[ \t]*(?:importlib[ \t]*\.[ \t]*)?(?:import_module|__import__)[ \t]*\()",
    )
});
static PY_SYS_MODULES: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bsys[ \t]*\.[ \t]*modules[ \t]*(?:\[[^\]\n]*\][ \t]*=[^=]|\.[ \t]*(?:setdefault|update)[ \t]*\()",
    )
});
static PY_NONE: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*None\b"));
static PY_IMPORT_NAMES: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^[ \t]*(?:import[ \t]+([^\n]+)|from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^\n]+))")
});

/// The names a Python file binds by importing: `import a.b` binds `a`, `import a as b` and
/// `from m import a as b` bind `b`.
pub(crate) fn python_imported_names(text: &Text<'_>, into: &mut HashSet<Vec<u8>>) {
    for caps in PY_IMPORT_NAMES.captures_iter(&text.masked) {
        let (list, is_from) = match (caps.get(1), caps.get(3)) {
            (Some(l), _) => (l.as_bytes(), false),
            (None, Some(l)) => (l.as_bytes(), true),
            _ => continue,
        };
        for item in list.split(|&b| b == b',') {
            let words: Vec<&[u8]> = item
                .split(|b| b.is_ascii_whitespace() || matches!(b, b'(' | b')' | b'\\'))
                .filter(|w| !w.is_empty())
                .collect();
            let name = match words.as_slice() {
                [_, as_, alias, ..] if *as_ == b"as" => *alias,
                [first, ..] if is_from => *first,
                [first, ..] => first.split(|&b| b == b'.').next().unwrap_or(first),
                [] => continue,
            };
            if name.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_') {
                into.insert(name.to_vec());
            }
        }
    }
}

fn indent(line: &[u8]) -> usize {
    line.iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

/// The lines after `header` indented deeper than `level`: a block's body, as `(first, last)`,
/// with logical lines that continue inside brackets or after `\` folded in.
fn block_statements(text: &Text<'_>, header: u32, level: usize) -> (Vec<(u32, u32)>, u32) {
    let mut statements = Vec::new();
    let mut line = header + 1;
    let mut end = header;
    let count = text.line_count();
    while line <= count {
        let l = text.masked_line(line);
        if is_blank(l) {
            line += 1;
            continue;
        }
        if indent(l) <= level {
            break;
        }
        let first = line;
        let mut depth: i32 = 0;
        loop {
            let l = text.masked_line(line);
            for &b in l {
                match b {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    _ => {}
                }
            }
            let continued = depth > 0 || l.trim_ascii_end().ends_with(b"\\");
            if !continued || line >= count {
                break;
            }
            line += 1;
        }
        statements.push((first, line));
        end = line;
        line += 1;
    }
    (statements, end)
}

pub(super) fn scan(text: &Text<'_>, imported: &HashSet<Vec<u8>>, out: &mut Vec<Occurrence>) {
    let mut handlers: Vec<(u32, u32)> = Vec::new();
    for caps in PY_TRY.captures_iter(&text.masked) {
        let (Some(whole), Some(ws)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let level = ws.len();
        let try_line = text.line_of(whole.start());
        let (body, body_end) = block_statements(text, try_line, level);
        let only_imports = !body.is_empty()
            && body
                .iter()
                .all(|&(first, _)| PY_IMPORT_STMT.is_match(text.masked_line(first)));
        if !only_imports {
            continue;
        }
        // Every `except` clause of this `try`, at the same indentation.
        let mut line = body_end + 1;
        while line <= text.line_count() {
            let l = text.masked_line(line);
            if is_blank(l) {
                line += 1;
                continue;
            }
            let clause = l.trim_ascii();
            if indent(l) != level || !(clause.starts_with(b"except") && is_word_end(clause, 6)) {
                break;
            }
            let (handler, handler_end) = block_statements(text, line, level);
            let only_raises = !handler.is_empty()
                && handler
                    .iter()
                    .all(|&(first, _)| text.masked_line(first).trim_ascii().starts_with(b"raise"));
            if !only_raises {
                let modules = imported_modules(text, &body);
                let shown_clause = String::from_utf8_lossy(clause)
                    .trim_end_matches(':')
                    .to_owned();
                let message = format!(
                    "newly carries on when {modules} fails to import: `{}` closes a `try` that only imports",
                    shown_clause
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                let mut o = text.occurrence(Rule::StubbedImport, "py-try-import", 0, 0, message);
                o.first = try_line;
                o.last = handler_end.max(line);
                o.line = line;
                o.key = text.key(try_line + 1, body_end);
                handlers.push((line, o.last));
                out.push(o);
            }
            line = handler_end.max(line) + 1;
        }
    }
    for m in PY_SYS_MODULES.find_iter(&text.masked) {
        let message =
            "newly writes to `sys.modules`: an import gets a stand-in instead of the real module"
                .to_owned();
        out.push(text.occurrence(
            Rule::StubbedImport,
            "py-sys-modules",
            m.start(),
            m.end(),
            message,
        ));
    }
    for caps in PY_NONE.captures_iter(&text.masked) {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        if !imported.contains(name.as_bytes()) {
            continue;
        }
        let line = text.line_of(whole.start());
        // Already part of a flagged `except` handler.
        if handlers.iter().any(|&(a, b)| (a..=b).contains(&line)) {
            continue;
        }
        let name = String::from_utf8_lossy(name.as_bytes());
        let message = format!(
            "newly sets the imported name `{name}` to None: code that uses it carries on without the module"
        );
        out.push(text.occurrence(
            Rule::StubbedImport,
            "py-dep-none",
            whole.start(),
            whole.end(),
            message,
        ));
    }
}

/// The modules a block of import statements names, for a message: "`yaml`", "`a` or `b`".
fn imported_modules(text: &Text<'_>, body: &[(u32, u32)]) -> String {
    static MODULE: LazyLock<Regex> =
        LazyLock::new(|| re(r"^[ \t]*(?:import[ \t]+([\w.]+)|from[ \t]+([\w.]+)[ \t]+import)"));
    either(body.iter().filter_map(|&(first, _)| {
        let caps = MODULE.captures(text.masked_line(first))?;
        caps.get(1).or(caps.get(2)).map(|m| m.as_bytes())
    }))
}
