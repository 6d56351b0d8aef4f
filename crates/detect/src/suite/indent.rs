//! Tests and helpers of the languages whose blocks are told by indentation: Python (pytest
//! functions and classes, unittest methods) and Ruby (RSpec `it`/`describe`, minitest `def
//! test_…` and `test "…" do`).

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::Unit;
use super::text::{self, Source};
use crate::lang::Language;

fn re(p: &str) -> Regex {
    RegexBuilder::new(p)
        .unicode(false)
        .build()
        .expect("the test model's patterns are valid (tested)")
}

pub(super) fn units(lang: Language, src: &Source<'_>) -> Vec<Unit> {
    let lines = Lines::new(src, lang == Language::Python);
    match lang {
        Language::Python => python(src, &lines),
        _ => ruby(src, &lines),
    }
}

/// Per line: its indentation, whether it holds code, whether it continues the line before.
struct Lines {
    indent: Vec<usize>,
    blank: Vec<bool>,
    cont: Vec<bool>,
}

impl Lines {
    fn new(src: &Source<'_>, brackets: bool) -> Lines {
        let n = src.line_count();
        let (mut indent, mut blank, mut cont) = (vec![0; n], vec![true; n], vec![false; n]);
        let mut depth = 0i32;
        let mut backslash = false;
        for i in 0..n {
            let r = src.line_range(i);
            let line = &src.masked[r];
            cont[i] = (brackets && depth > 0) || backslash;
            let mut w = 0;
            for &b in line {
                match b {
                    b' ' => w += 1,
                    b'\t' => w += 8 - w % 8,
                    _ => break,
                }
            }
            indent[i] = w;
            blank[i] = line.iter().all(u8::is_ascii_whitespace);
            for &b in line {
                match b {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth = (depth - 1).max(0),
                    _ => {}
                }
            }
            let trimmed = line.trim_ascii_end();
            backslash = brackets && trimmed.last() == Some(&b'\\');
        }
        Lines {
            indent,
            blank,
            cont,
        }
    }

    /// A line that starts a statement.
    fn starts(&self, i: usize) -> bool {
        !self.blank[i] && !self.cont[i]
    }

    /// The last line of the block opened by line `i`: every following line that is blank, a
    /// continuation, or indented deeper.
    fn block_end(&self, i: usize) -> usize {
        let mut last = i;
        for j in i + 1..self.indent.len() {
            if self.blank[j] || self.cont[j] {
                continue;
            }
            if self.indent[j] <= self.indent[i] {
                break;
            }
            last = j;
        }
        // Continuation lines of the last statement belong to it.
        let mut j = last + 1;
        while j < self.indent.len() && (self.cont[j] || self.blank[j]) {
            if self.cont[j] {
                last = j;
            }
            j += 1;
        }
        last
    }
}

static PY_CLASS: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*class[ \t]+(\w+)"));
static PY_DEF: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\("));

fn python(src: &Source<'_>, lines: &Lines) -> Vec<Unit> {
    let mut units = Vec::new();
    // Enclosing classes and functions: (indent, name, is a class).
    let mut stack: Vec<(usize, String, bool)> = Vec::new();
    for i in 0..src.line_count() {
        if !lines.starts(i) {
            continue;
        }
        let indent = lines.indent[i];
        while stack.last().is_some_and(|(d, _, _)| *d >= indent) {
            stack.pop();
        }
        let r = src.line_range(i);
        let line = &src.masked[r.clone()];
        if let Some(c) = PY_CLASS.captures(line) {
            let name = String::from_utf8_lossy(&c[1]).into_owned();
            stack.push((indent, name, true));
            continue;
        }
        let Some(c) = PY_DEF.captures(line) else {
            continue;
        };
        let (Some(whole), Some(name)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let name = String::from_utf8_lossy(name.as_bytes()).into_owned();
        let in_function = stack.iter().any(|(_, _, class)| !class);
        let test = name.starts_with("test") && !in_function;
        // The body starts after the signature's `:`.
        let open = r.start + whole.end() - 1;
        let body_start = text::match_close(src.masked, open)
            .and_then(|close| {
                src.masked[close..]
                    .iter()
                    .position(|&b| b == b':')
                    .map(|p| close + p + 1)
            })
            .unwrap_or(r.end);
        let end_line = lines.block_end(i);
        let body_end = src.line_range(end_line).end.max(body_start);
        // Decorators: the statements just above, at the same indentation, starting with `@`.
        let mut head_start = r.start;
        let mut j = i;
        while j > 0 {
            let mut k = j - 1;
            while k > 0 && (lines.cont[k] || lines.blank[k]) && !lines.starts(k) {
                k -= 1;
            }
            let kr = src.line_range(k);
            let kl = src.masked[kr.clone()].trim_ascii_start();
            if lines.starts(k) && lines.indent[k] == indent && kl.first() == Some(&b'@') {
                head_start = kr.start;
                j = k;
            } else {
                break;
            }
        }
        let qualified = stack
            .iter()
            .map(|(_, n, _)| n.as_str())
            .chain(std::iter::once(name.as_str()))
            .collect::<Vec<_>>()
            .join("::");
        units.push(Unit {
            test,
            name: qualified,
            simple: name.clone(),
            line: src.line_of(r.start + whole.start()),
            body: body_start..body_end,
            head: head_start..r.start,
        });
        stack.push((indent, name, false));
    }
    units
}

static RB_GROUP: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[ \t]*(?:RSpec[ \t]*\.[ \t]*)?(?:describe|context|feature|shared_examples(?:_for)?|shared_context|class|module)\b[ \t(]*",
    )
});
static RB_TEST: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[ \t]*(it|specify|example|scenario|its|test|fit|xit)\b[ \t(]*"));
static RB_DEF: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*def[ \t]+(?:self\.)?([\w?!]+)"));

fn ruby(src: &Source<'_>, lines: &Lines) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    for i in 0..src.line_count() {
        if lines.blank[i] {
            continue;
        }
        let indent = lines.indent[i];
        while stack.last().is_some_and(|(d, _)| *d >= indent) {
            stack.pop();
        }
        let r = src.line_range(i);
        let line = &src.masked[r.clone()];
        if let Some(m) = RB_GROUP.find(line) {
            let name = text::string_at(src, r.start + m.end())
                .map(|(s, _)| s)
                .unwrap_or_else(|| {
                    let id = text::ident_at(src.masked, r.start + m.end());
                    String::from_utf8_lossy(&src.masked[id]).into_owned()
                });
            stack.push((indent, name));
            continue;
        }
        let (test, name, after) = if let Some(m) = RB_TEST.find(line) {
            match text::string_at(src, r.start + m.end()) {
                Some((name, after)) => (true, name, after),
                // `it { is_expected.to eq(5) }`: no name, so its body is its name.
                None => (true, String::new(), r.start + m.end()),
            }
        } else if let Some(c) = RB_DEF.captures(line) {
            let name = String::from_utf8_lossy(&c[1]).into_owned();
            (name.starts_with("test_"), name, r.end)
        } else {
            continue;
        };
        let one_line_block = src.masked[after.min(r.end)..r.end]
            .iter()
            .position(|&b| b == b'{')
            .map(|p| after + p);
        let (body, last) =
            match one_line_block.and_then(|o| Some((o, text::match_close(src.masked, o)?))) {
                Some((open, close)) if close <= r.end => (open + 1..close, i),
                _ => {
                    let last = lines.block_end(i);
                    (r.end..src.line_range(last).end, last)
                }
            };
        let _ = last;
        let name = if name.is_empty() {
            src.shown(body.clone())
        } else {
            name
        };
        let qualified = stack
            .iter()
            .map(|(_, n)| n.as_str())
            .chain(std::iter::once(name.as_str()))
            .collect::<Vec<_>>()
            .join(" ");
        units.push(Unit {
            test,
            name: qualified,
            simple: name,
            line: src.line_of(r.start),
            body,
            head: r.start..r.start,
        });
    }
    units
}
