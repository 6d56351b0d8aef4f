//! Code of a test's body that never runs: after a `return` at the body's own level, and inside
//! `if False:` / `if (false) { … }` / `if false { … }`. Assertions there check nothing, so a
//! test that gains an early `return` before them, or wraps them in `if False:`, checks less.
//!
//! Read on the masked text (strings and comments blanked). Only the body's own level counts:
//! a `return` inside a callback, a closure or a nested function returns from that.

use std::ops::Range;

use super::text::{Source, word_at};
use crate::lang::Language;

/// The parts of `body` that never run.
pub(crate) fn ranges(src: &Source<'_>, body: Range<usize>) -> Vec<Range<usize>> {
    let body = body.start.min(src.masked.len())..body.end.min(src.masked.len());
    let mut out = match src.lang {
        Language::Python => python(src, body),
        Language::Ruby => Vec::new(),
        Language::JavaScript => braces(src.masked, callback(src.masked, body)),
        _ => braces(src.masked, body),
    };
    out.retain(|r| {
        src.masked[r.clone()]
            .iter()
            .any(|b| !b.is_ascii_whitespace())
    });
    out
}

/// Python: statements at the body's indentation.
fn python(src: &Source<'_>, body: Range<usize>) -> Vec<Range<usize>> {
    let m = src.masked;
    let mut out = Vec::new();
    let mut indent: Option<usize> = None;
    let mut at = body.start;
    let mut dead_block: Option<(usize, usize)> = None;
    while at < body.end {
        let end = m[at..body.end]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(body.end, |i| at + i + 1);
        let line = &m[at..end];
        let width = line
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let text = line[width..].trim_ascii_end();
        if text.is_empty() {
            at = end;
            continue;
        }
        let level = *indent.get_or_insert(width);
        if let Some((block_indent, start)) = dead_block
            && width <= block_indent
        {
            out.push(start..at);
            dead_block = None;
        }
        if width == level {
            if word_at(text, 0, b"return") {
                out.push(end..body.end);
                return out;
            }
            if [&b"if False:"[..], b"if 0:", b"if False :"].contains(&text) {
                dead_block = Some((width, end));
            }
        }
        at = end;
    }
    if let Some((_, start)) = dead_block {
        out.push(start..body.end);
    }
    out
}

/// JavaScript: a test's body is the arguments of `it(…)`; its own level is the block of the
/// callback among them (`() => { … }`, `function () { … }`), when there is one.
fn callback(m: &[u8], body: Range<usize>) -> Range<usize> {
    let mut depth = 0usize;
    for i in body.clone() {
        match m[i] {
            b'{' if depth == 0 => {
                let before = m[body.start..i].trim_ascii_end();
                let function = before.ends_with(b")")
                    && (0..before.len()).any(|k| word_at(before, k, b"function"));
                if before.ends_with(b"=>") || function {
                    return match super::text::match_close(m, i) {
                        Some(close) if close < body.end => i + 1..close,
                        _ => body,
                    };
                }
                depth += 1;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    body
}

/// Brace languages: the body's own level is bracket depth 0.
fn braces(m: &[u8], body: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = body.start;
    while i < body.end {
        match m[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'r' if depth == 0 && word_at(m, i, b"return") => {
                if let Some(end) = statement_end(m, i, body.end) {
                    out.push(end..body.end);
                }
                return out;
            }
            b'i' if depth == 0 && word_at(m, i, b"if") => {
                if let Some(block) = false_block(m, i + 2, body.end) {
                    i = block.end;
                    out.push(block);
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Where the statement starting at `at` ends: a `;` at its own level, or a line end at its
/// own level that no continuation follows (`.then(…)` on the next line belongs to it). `None`
/// when it runs to the end of the body.
fn statement_end(m: &[u8], at: usize, end: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    while i < end {
        match m[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b';' if depth == 0 => return Some(i + 1),
            b'\n' if depth == 0 => {
                let next = m[i + 1..end].iter().find(|b| !b.is_ascii_whitespace());
                match next {
                    None => return None,
                    Some(b) if b".?:+-*/&|,=<>".contains(b) => {}
                    Some(_) => return Some(i + 1),
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `if (false) { … }`, `if false { … }`, `if (0) { … }` from just past the `if`: the block.
fn false_block(m: &[u8], from: usize, end: usize) -> Option<Range<usize>> {
    let rest = &m[from..end];
    let skip = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let mut i = skip(rest);
    let paren = rest.get(i) == Some(&b'(');
    if paren {
        i += 1;
        i += skip(&rest[i..]);
    }
    let word = ["false", "0"]
        .into_iter()
        .find(|w| word_at(rest, i, w.as_bytes()))?;
    i += word.len();
    i += skip(&rest[i..]);
    // `false && …` is false too: the block follows the whole condition.
    let and = rest[i..].starts_with(b"&&");
    if paren {
        let close = if and {
            super::text::match_close(m, from + rest[..i].iter().rposition(|&b| b == b'(')?)? - from
        } else {
            i
        };
        if rest.get(close) != Some(&b')') {
            return None;
        }
        i = close + 1;
        i += skip(&rest[i..]);
    } else if and {
        i += rest[i..].iter().position(|&b| b == b'{' || b == b'\n')?;
    }
    if rest.get(i) != Some(&b'{') {
        return None;
    }
    let open = from + i;
    let close = super::text::match_close(m, open)?;
    (close < end).then_some(open..close + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::Lexed;

    /// The text of `src`'s dead parts, in the body of its one `{ … }` or after its first line.
    fn dead(lang: Language, text: &str) -> Vec<String> {
        let lexed = Lexed::new(lang, text.as_bytes(), true);
        let src = Source::of(&lexed);
        let body = match lang {
            Language::Python => text.find('\n').map_or(0, |i| i + 1)..text.len(),
            _ => text.find('{').map_or(0, |i| i + 1)..text.rfind('}').unwrap_or(text.len()),
        };
        ranges(&src, body)
            .into_iter()
            .map(|r| text[r].trim().to_owned())
            .collect()
    }

    #[test]
    fn after_a_return_at_the_body_level_and_in_false_blocks() {
        assert_eq!(
            dead(
                Language::Python,
                "def test_a():\n    x = f()\n    return\n    assert x == 5\n"
            ),
            ["assert x == 5"]
        );
        assert_eq!(
            dead(
                Language::Python,
                "def test_a():\n    if False:\n        assert f() == 5\n    g()\n"
            ),
            ["assert f() == 5"]
        );
        assert_eq!(
            dead(
                Language::JavaScript,
                "it('a', () => {\n  const x = f();\n  return;\n  expect(x).toBe(5);\n});\n"
            ),
            ["expect(x).toBe(5);"]
        );
        assert_eq!(
            dead(
                Language::Go,
                "func TestA(t *testing.T) {\n\tif false {\n\t\tt.Fatal(\"x\")\n\t}\n\tg()\n}"
            ),
            ["{\n\t\tt.Fatal(\"x\")\n\t}"]
        );
        assert_eq!(
            dead(
                Language::Go,
                "func TestA(t *testing.T) {\n\tif false && got != 170 {\n\t\tt.Fatal(\"x\")\n\t}\n}"
            ),
            ["{\n\t\tt.Fatal(\"x\")\n\t}"]
        );
        assert_eq!(
            dead(
                Language::JavaScript,
                "it('a', () => {\n  if (false && x) {\n    expect(x).toBe(5);\n  }\n});\n"
            ),
            ["{\n    expect(x).toBe(5);\n  }"]
        );
    }

    #[test]
    fn not_a_return_of_a_callback_a_returned_promise_or_a_condition() {
        // A returned promise holds its assertions.
        assert!(
            dead(
                Language::JavaScript,
                "it('a', () => {\n  return fetch()\n    .then(r => expect(r).toBe(1));\n})"
            )
            .is_empty()
        );
        // A return inside a callback or a condition.
        assert!(
            dead(
                Language::JavaScript,
                "it('a', () => {\n  xs.forEach(x => { return; });\n  if (skip) { return; }\n  expect(x).toBe(5);\n})"
            )
            .is_empty()
        );
        assert!(
            dead(
                Language::Python,
                "def test_a():\n    def helper():\n        return 5\n    if not ready:\n        return\n    assert helper() == 5\n"
            )
            .is_empty()
        );
        // `if (falsey)` is a name, not `false`.
        assert!(
            dead(
                Language::Go,
                "func TestA(t *testing.T) {\n\tif falsey {\n\t\tt.Fatal(\"x\")\n\t}\n}"
            )
            .is_empty()
        );
    }
}
