//! How much one run of a test body checks, when some of its assertions stand in branches of
//! which only one runs.

use std::ops::Range;

use super::text::{self, Source};
use crate::lang::Language;

/// How much a body checks in one run: its assertions' conditions summed, except that of the
/// branches of one `if` / `elif` / `else` chain only one runs, so the chain weighs what its
/// heaviest branch does. `if on: assert a == 1` / `else: assert a == 0` is one check, as is
/// `assert a == (1 if on else 0)` that replaces it. Read by indentation, for Python.
pub(super) fn run_weight(
    lang: Language,
    src: &Source<'_>,
    body: Range<usize>,
    checks: &[(u32, usize)],
) -> usize {
    let sum = checks.iter().map(|&(_, n)| n).sum();
    if lang != Language::Python || checks.is_empty() {
        return sum;
    }
    let m = &src.masked;
    // Per line of the body: its indentation and its first word, or `None` for a blank line or
    // one that continues a statement inside brackets.
    let first = src.line_of(body.start) as usize - 1;
    let last = src.line_of(body.end.saturating_sub(1).max(body.start)) as usize;
    let mut lines: Vec<BodyLine<'_>> = Vec::new();
    let mut depth = 0i32;
    for i in first..last.min(src.line_count()) {
        let r = src.line_range(i);
        let l = &m[r.clone()];
        let text = l.trim_ascii_start();
        let info = (depth <= 0 && !text.is_empty()).then(|| {
            let word = text::ident_at(text, 0);
            (l.len() - text.len(), &text[word])
        });
        for &b in l {
            match b {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ => {}
            }
        }
        lines.push((i as u32 + 1, info));
    }
    let at_line = |line: u32| -> usize {
        checks
            .iter()
            .filter(|&&(l, _)| l == line)
            .map(|&(_, n)| n)
            .sum()
    };
    weigh_lines(&lines, &at_line)
}

/// A line of a body (1-based) with its indentation and first word, when it starts a statement.
type BodyLine<'a> = (u32, Option<(usize, &'a [u8])>);

fn weigh_lines(lines: &[BodyLine<'_>], at_line: &dyn Fn(u32) -> usize) -> usize {
    // Where the block opened by line `i` ends: the next statement at its indentation or less.
    let block_end = |i: usize, indent: usize| {
        (i + 1..lines.len())
            .find(|&j| lines[j].1.is_some_and(|(ind, _)| ind <= indent))
            .unwrap_or(lines.len())
    };
    let mut total = 0;
    let mut i = 0;
    while i < lines.len() {
        let (line, info) = lines[i];
        let Some((indent, b"if")) = info else {
            // Lines continuing a statement hold no check of their own start.
            total += at_line(line);
            i += 1;
            continue;
        };
        let mut branches: Vec<Range<usize>> = Vec::new();
        branches.push(i..block_end(i, indent));
        while let Some(&(_, Some((ind, word)))) = lines.get(branches[branches.len() - 1].end)
            && ind == indent
            && matches!(word, b"elif" | b"else")
        {
            let start = branches[branches.len() - 1].end;
            branches.push(start..block_end(start, indent));
        }
        let end = branches[branches.len() - 1].end;
        if branches.len() == 1 {
            total += at_line(line);
            i += 1;
            continue;
        }
        total += branches
            .into_iter()
            .map(|b| at_line(lines[b.start].0) + weigh_lines(&lines[b.start + 1..b.end], at_line))
            .max()
            .unwrap_or(0);
        i = end;
    }
    total
}
