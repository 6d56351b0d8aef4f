//! `stubbed-import` in Python: a `try` that only imports closed by an `except` that carries on,
//! writes to `sys.modules`, `<imported name> = None`.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::{either, is_word_end, re};
use crate::flag::Rule;
use crate::rules::code::{self, indent, is_blank};
use crate::scan::{Occurrence, Text};

static PY_TRY: LazyLock<Regex> = LazyLock::new(|| re(r"^([ \t]*)try[ \t]*:[ \t\r]*$"));
static PY_IMPORT_STMT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[ \t]*(?:import[ \t]|from[ \t]+\S+[ \t]+import\b|pass\b|[\w.]+[ \t]*=[ \t]*(?:importlib[ \t]*\.[ \t]*)?(?:import_module|__import__)[ \t]*\()",
    )
});
static PY_CONDITION: LazyLock<Regex> =
    LazyLock::new(|| re(r"\A[ \t]*(?:(?:if|elif)\b[^\n]*|else[ \t]*):[ \t]*\z"));
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
        line = code::py_logical_end(text, line, count);
        statements.push((first, line));
        end = line;
        line += 1;
    }
    (statements, end)
}

pub(super) fn scan(
    text: &Text<'_>,
    imported: &HashSet<Vec<u8>>,
    local: &[Vec<u8>],
    out: &mut Vec<Occurrence>,
) {
    let mut handlers: Vec<(u32, u32)> = Vec::new();
    for caps in PY_TRY.captures_iter(&text.masked) {
        let (Some(whole), Some(ws)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let level = ws.len();
        let try_line = text.line_of(whole.start());
        let (body, body_end) = block_statements(text, try_line, level);
        // Imports, possibly chosen by an `if`: `if PY3: import winreg` / `else: import _winreg
        // as winreg` only imports too.
        let only_imports = !body.is_empty()
            && body.iter().all(|&(first, _)| {
                let l = text.masked_line(first);
                PY_IMPORT_STMT.is_match(l) || PY_CONDITION.is_match(l)
            });
        if !only_imports {
            continue;
        }
        // A version read from a generated module (`from ._version import __version__`, written
        // by setuptools_scm at build time) is absent from a source checkout by design.
        let version_only = {
            let names = names_bound(text, &body);
            !names.is_empty()
                && names.iter().all(|n| {
                    matches!(
                        n.as_slice(),
                        b"__version__" | b"__version_tuple__" | b"version" | b"version_tuple"
                    )
                })
        };
        let optional = version_only || only_platform_modules(text, &body, local);
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
            if optional {
                // Not a dependency: its `name = None` is not one either.
                handlers.push((line, handler_end.max(line)));
            } else if !only_raises && !imports_an_alternative(text, &body, &handler, local) {
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
                // The names the `try` binds: a guard whose import is spelled anew, or whose
                // handler carries on another way, still guards the same names (a guard moved to
                // another file with `pass` become `return ""` is the guard the base had).
                let mut names = names_bound(text, &body);
                names.sort_unstable();
                o.key = if names.is_empty() {
                    text.key(try_line + 1, body_end)
                } else {
                    let mut h = DefaultHasher::new();
                    names.hash(&mut h);
                    h.finish()
                };
                handlers.push((line, o.last));
                out.push(o);
            }
            line = handler_end.max(line) + 1;
        }
    }
    sys_modules(text, local, false, out);
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
        if !rebinds_module_name(text, line, name.as_bytes()) {
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

/// True when an assignment to `name` on `line` rebinds the module's name, which is what an
/// import bound: at module level (inside no `def` or `class`, whatever `if` or `try` holds it),
/// or in a function that declares the name `global`. A function's local of the same name, or a
/// class attribute, leaves the module's import alone.
fn rebinds_module_name(text: &Text<'_>, line: u32, name: &[u8]) -> bool {
    static GLOBAL: LazyLock<Regex> = LazyLock::new(|| re(r"\A[ \t]*global[ \t]+([^\n]+)"));
    let enclosing = code::py_enclosing(text, line);
    let Some(innermost) = enclosing.first() else {
        return true;
    };
    !innermost.class
        && (innermost.line + 1..line).any(|l| {
            GLOBAL
                .captures(text.masked_line(l))
                .and_then(|c| c.get(1))
                .is_some_and(|names| {
                    names
                        .as_bytes()
                        .split(|&b| b == b',')
                        .any(|n| n.trim_ascii() == name)
                })
        })
}

/// `conftest.py`: writes to `sys.modules` at module level, which every test of the run sees.
pub(super) fn conftest(text: &Text<'_>, local: &[Vec<u8>], out: &mut Vec<Occurrence>) {
    sys_modules(text, local, true, out);
}

/// Writes to `sys.modules` (at module level only, for `conftest.py`).
fn sys_modules(text: &Text<'_>, local: &[Vec<u8>], conftest: bool, out: &mut Vec<Occurrence>) {
    for m in PY_SYS_MODULES.find_iter(&text.masked) {
        if aliases_own_module(text, m.start(), local) {
            continue;
        }
        let line_start = text.line_start(text.line_of(m.start()));
        if conftest && m.start() != line_start {
            continue;
        }
        let message = if conftest {
            "newly writes to `sys.modules` for the whole test run: every test imports a stand-in instead of the real module"
        } else {
            "newly writes to `sys.modules`: an import gets a stand-in instead of the real module"
        }
        .to_owned();
        out.push(text.occurrence(
            Rule::StubbedImport,
            "py-sys-modules",
            m.start(),
            m.end(),
            message,
        ));
    }
}

/// True for `sys.modules[<a name in this file's own package>] = sys.modules[<another>]` at
/// `start`: a module already imported, made reachable under another name of the project's own
/// namespace (`sys.modules['requests.packages.' + mod] = sys.modules[mod]`). That is an alias,
/// not a stand-in: the real module is what gets imported. A name outside the file's own
/// package (`sys.modules['yaml'] = sys.modules['json']`) is how a dependency gets replaced, and
/// any other right-hand side (`types.ModuleType(…)`, a mock) makes a stand-in: both flagged.
fn aliases_own_module(text: &Text<'_>, start: usize, local: &[Vec<u8>]) -> bool {
    static ALIAS: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"\Asys[ \t]*\.[ \t]*modules[ \t]*\[([^\]\n]*)\][ \t]*=[ \t]*",
            r"sys[ \t]*\.[ \t]*modules[ \t]*\[[^\]\n]*\][ \t]*(?:$|;)",
        ))
    });
    let Some(key) = ALIAS.captures(&text.masked[start..]).and_then(|c| c.get(1)) else {
        return false;
    };
    // The key's words are in a string: read them from the raw text.
    let key = text.raw[start + key.start()..start + key.end()].trim_ascii();
    if key.starts_with(b"__name__") || key.starts_with(b"__package__") {
        return true;
    }
    let prefix = key.iter().take_while(|b| b"rRbBuUfF".contains(b)).count();
    let literal = &key[prefix..];
    let Some(inside) = literal
        .strip_prefix(b"'")
        .or_else(|| literal.strip_prefix(b"\""))
    else {
        return false;
    };
    let end = inside
        .iter()
        .position(|&b| matches!(b, b'.' | b'\'' | b'"' | b'{'))
        .unwrap_or(inside.len());
    let top = &inside[..end];
    !top.is_empty() && local.iter().any(|dir| dir == top)
}

/// Standard-library modules that exist only on some platforms or builds (Windows or POSIX only,
/// or built only when a system library is there). Code that guards them is porting, not
/// carrying on without a dependency: no project declares them, and a missing one cannot be
/// installed, so stubbing one buys a failing suite nothing. The project's own and third-party
/// modules, which a worker could leave uninstalled and stub, stay flagged.
const PLATFORM_MODULES: &[&[u8]] = &[
    b"readline",
    b"winreg",
    b"_winreg",
    b"msvcrt",
    b"winsound",
    b"_winapi",
    b"nt",
    b"posix",
    b"fcntl",
    b"termios",
    b"tty",
    b"pty",
    b"pwd",
    b"grp",
    b"spwd",
    b"crypt",
    b"resource",
    b"syslog",
    b"curses",
    b"_curses",
    b"dbm",
    b"gdbm",
    b"_gdbm",
    b"ssl",
    b"_ssl",
    b"lzma",
    b"_lzma",
    b"bz2",
    b"_bz2",
    b"zlib",
    b"sqlite3",
    b"_sqlite3",
    b"ctypes",
    b"_ctypes",
    b"tkinter",
    b"Tkinter",
    b"_tkinter",
    b"_scproxy",
];

/// True when every module a `try` body imports is a platform-optional standard-library module
/// (absolute, and not a package of this file's own path that happens to share the name).
fn only_platform_modules(text: &Text<'_>, body: &[(u32, u32)], local: &[Vec<u8>]) -> bool {
    let mut any = false;
    for &stmt in body {
        let code = statement_code(text, stmt);
        if PY_CONDITION.is_match(code.trim_ascii_end()) || code.trim_ascii() == b"pass" {
            continue;
        }
        let imports = import_statement(&code);
        if imports.is_empty() {
            return false;
        }
        for (module, _) in imports {
            let top = module.split(|&b| b == b'.').next().unwrap_or(&module);
            if !PLATFORM_MODULES.contains(&top) || local.iter().any(|dir| dir == top) {
                return false;
            }
            any = true;
        }
    }
    any
}

/// Modules that provide stand-ins, never an alternative implementation: mocks, bare namespaces.
const STAND_IN_MODULES: &[&[u8]] = &[b"mock", b"unittest", b"types", b"builtins", b"__builtin__"];

/// Whether a dotted module is the tests' own, or written to stand in for something in them
/// (`tests.fakes`, `testing.stubs`, `app.test_helpers`, `fakes`): production code that falls
/// back to it runs on what the tests wrote, not on an alternative implementation.
fn is_test_module(module: &[u8]) -> bool {
    const PARTS: &[&[u8]] = &[
        b"test",
        b"tests",
        b"testing",
        b"testutils",
        b"test_utils",
        b"conftest",
        b"fake",
        b"fakes",
        b"mocks",
        b"stubs",
        b"dummies",
    ];
    module.split(|&b| b == b'.').any(|part| {
        PARTS.contains(&part)
            || part.starts_with(b"test_")
            || part.ends_with(b"_test")
            || part.ends_with(b"_tests")
            || part.starts_with(b"fake_")
            || part.ends_with(b"_fakes")
            || part.ends_with(b"_stubs")
    })
}

/// One import statement: per module it names (dotted, with its leading dots when relative),
/// the names it binds. `import a.b` binds `a`; `as` binds the alias; `*` binds nothing known.
fn import_statement(stmt: &[u8]) -> Vec<(Vec<u8>, Vec<Vec<u8>>)> {
    let words = |item: &[u8]| -> Vec<Vec<u8>> {
        item.split(|b| b.is_ascii_whitespace() || matches!(b, b'(' | b')' | b'\\'))
            .filter(|w| !w.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let alias = |w: &[Vec<u8>]| match w {
        [_, as_, alias, ..] if as_ == b"as" => Some(alias.clone()),
        _ => None,
    };
    let s = stmt.trim_ascii();
    let mut out = Vec::new();
    if let Some(rest) = s
        .strip_prefix(b"import")
        .filter(|r| r.first().is_some_and(u8::is_ascii_whitespace))
    {
        for item in rest.split(|&b| b == b',') {
            let w = words(item);
            let Some(module) = w.first() else { continue };
            let top = module
                .split(|&b| b == b'.')
                .next()
                .unwrap_or(module)
                .to_vec();
            out.push((module.clone(), vec![alias(&w).unwrap_or(top)]));
        }
    } else if let Some(rest) = s
        .strip_prefix(b"from")
        .filter(|r| r.first().is_some_and(u8::is_ascii_whitespace))
    {
        let rest = rest.trim_ascii_start();
        let end = rest
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(rest.len());
        let (module, rest) = rest.split_at(end);
        let Some(list) = rest.trim_ascii_start().strip_prefix(b"import") else {
            return out;
        };
        let names = list
            .split(|&b| b == b',')
            .filter_map(|item| {
                let w = words(item);
                alias(&w).or_else(|| w.first().filter(|n| *n != b"*").cloned())
            })
            .collect();
        out.push((module.to_vec(), names));
    }
    out
}

/// The code of a statement's lines, joined.
fn statement_code(text: &Text<'_>, (first, last): (u32, u32)) -> Vec<u8> {
    let mut code = Vec::new();
    for line in first..=last {
        code.extend_from_slice(text.masked_line(line));
        code.push(b' ');
    }
    code
}

/// The names a `try` body that only imports binds: by import, or by assigning
/// `importlib.import_module(…)` / `__import__(…)`.
fn names_bound(text: &Text<'_>, body: &[(u32, u32)]) -> Vec<Vec<u8>> {
    static ASSIGNED: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*([\w.]+)[ \t]*="));
    let mut names = Vec::new();
    for &stmt in body {
        let code = statement_code(text, stmt);
        let imports = import_statement(&code);
        if imports.is_empty()
            && let Some(name) = ASSIGNED.captures(&code).and_then(|c| c.get(1))
        {
            names.push(name.as_bytes().to_vec());
        }
        names.extend(imports.into_iter().flat_map(|(_, n)| n));
    }
    names
}

/// True when an `except` handler binds every name the `try` body binds by importing another
/// real module — `try: import simplejson as json` / `except ImportError: import json` — so the
/// code does not carry on without a dependency: when the alternative is missing too, the
/// ImportError propagates. What else the handler does must not make a stand-in: only imports,
/// `pass`, flags set to a literal (not the names the `try` binds), calls to `warnings` or a
/// logger, and nested `try` blocks (whose own handlers are judged on their own). A relative
/// import, or an absolute one of the file's own package (a directory on its path), may be a
/// local stand-in written for the purpose, a module of the tests' (`tests.fakes`) is one, and
/// `unittest.mock`, `mock`, `types` and `builtins` provide stand-ins: a handler that imports
/// from them is still flagged.
fn imports_an_alternative(
    text: &Text<'_>,
    body: &[(u32, u32)],
    handler: &[(u32, u32)],
    local: &[Vec<u8>],
) -> bool {
    static HARMLESS: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"\A[ \t]*(?:pass\b|(?:if|elif|else|try|finally)\b[^\n]*:[ \t]*\z",
            r"|(?:warnings|logging|logger|log|_log|_logger|LOG|LOGGER)[ \t]*\.[ \t]*\w+[ \t]*\(",
            r"|[A-Za-z_]\w*[ \t]*=[ \t]*(?:None|True|False|-?[0-9][\w.]*|[rRbBuUfF]{0,2}['\x22][ '\x22]*)[ \t]*\z)",
        ))
    });
    static ASSIGNED: LazyLock<Regex> = LazyLock::new(|| re(r"\A[ \t]*([A-Za-z_]\w*)[ \t]*="));
    let wanted = names_bound(text, body);
    if wanted.is_empty() {
        return false;
    }
    let mut provided: Vec<Vec<u8>> = Vec::new();
    // The indentation of a nested `except` (or `else`/`finally`) whose block is skipped.
    let mut skipping: Option<usize> = None;
    for &stmt in handler {
        let first = text.masked_line(stmt.0);
        let level = indent(first);
        let head = first.trim_ascii();
        if let Some(k) = skipping {
            if level > k {
                continue;
            }
            skipping = None;
        }
        if head.starts_with(b"except") && is_word_end(head, 6) {
            skipping = Some(level);
            continue;
        }
        let code = statement_code(text, stmt);
        let imports = import_statement(&code);
        if imports.is_empty() {
            let flag = ASSIGNED.captures(&code).and_then(|c| c.get(1));
            if !HARMLESS.is_match(code.trim_ascii_end())
                || flag.is_some_and(|n| wanted.iter().any(|w| w == n.as_bytes()))
            {
                return false;
            }
            continue;
        }
        for (module, names) in imports {
            let top = module.split(|&b| b == b'.').next().unwrap_or(&module);
            let stand_in = top.is_empty()
                || STAND_IN_MODULES.contains(&top)
                || local.iter().any(|dir| dir == top)
                || is_test_module(&module);
            if stand_in {
                return false;
            }
            provided.extend(names);
        }
    }
    wanted.iter().all(|w| provided.contains(w))
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
