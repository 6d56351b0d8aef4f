//! Just enough YAML for CI files, read by indentation: block mappings and sequences, plain and
//! quoted scalars, block scalars (`|`, `>`) kept line by line with their file lines, and
//! comments. Flow collections, anchors and tags are kept as scalars. It never fails; what it
//! cannot read becomes a scalar or is skipped.

use super::numbered;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    Map(Vec<(String, u32, Node)>),
    Seq(Vec<(u32, Node)>),
    /// The text, as lines with their file lines (one line for a plain scalar).
    Scalar(Vec<(String, u32)>),
}

impl Node {
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, n)| n)
    }

    /// The value of `key` and the line of the key.
    pub fn entry(&self, key: &str) -> Option<(u32, &Node)> {
        match self {
            Node::Map(entries) => entries
                .iter()
                .find(|(k, _, _)| k == key)
                .map(|(_, l, n)| (*l, n)),
            _ => None,
        }
    }

    pub fn entries(&self) -> &[(String, u32, Node)] {
        match self {
            Node::Map(entries) => entries,
            _ => &[],
        }
    }

    pub fn items(&self) -> Vec<&Node> {
        match self {
            Node::Seq(items) => items.iter().map(|(_, n)| n).collect(),
            _ => Vec::new(),
        }
    }

    /// A scalar's text, lines joined.
    pub fn text(&self) -> Option<String> {
        match self {
            Node::Scalar(lines) => Some(
                lines
                    .iter()
                    .map(|(l, _)| l.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        }
    }

    /// A scalar's lines with their file lines.
    pub fn lines(&self) -> Vec<(String, Option<u32>)> {
        match self {
            Node::Scalar(lines) => lines.iter().map(|(l, n)| (l.clone(), Some(*n))).collect(),
            // A GitLab `script:` list: one command per item.
            Node::Seq(items) => items.iter().flat_map(|(_, n)| n.lines()).collect(),
            Node::Map(_) => Vec::new(),
        }
    }
}

/// One line: its indentation, its content (comment removed) and its file line.
#[derive(Clone, Debug)]
struct Line {
    indent: usize,
    text: String,
    n: u32,
    raw: String,
}

/// Removes a `#` comment that is not inside quotes.
fn strip_comment(s: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if (c == '"' || c == '\'')
                && (prev == ' ' || prev == ':' || i == 0 || prev == '-') =>
            {
                quote = Some(c)
            }
            None if c == '#' && (i == 0 || prev == ' ' || prev == '\t') => {
                return s[..i].trim_end();
            }
            None => {}
        }
        prev = c;
    }
    s.trim_end()
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    if s.len() >= 2
        && ((s.starts_with('"') && s.ends_with('"')) || (s.starts_with('\'') && s.ends_with('\'')))
    {
        let inner = &s[1..s.len() - 1];
        return if s.starts_with('\'') {
            inner.replace("''", "'")
        } else {
            inner.replace("\\\"", "\"").replace("\\\\", "\\")
        };
    }
    s.to_owned()
}

/// The position of the `:` ending a mapping key on this line, if it is one.
fn key_colon(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let bytes = s.as_bytes();
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if (c == '"' || c == '\'') && i == 0 => quote = Some(c),
            // A flow collection, not a key.
            None if (c == '{' || c == '[') && i == 0 => return None,
            None if c == ':'
                && (i + 1 == s.len() || bytes[i + 1] == b' ' || bytes[i + 1] == b'\t') =>
            {
                return Some(i);
            }
            None => {}
        }
    }
    None
}

pub(super) fn parse(text: &str) -> Node {
    let lines: Vec<Line> = numbered(text)
        .map(|(n, raw)| {
            let content = strip_comment(raw);
            let trimmed = content.trim_start();
            if trimmed.is_empty() || trimmed == "---" || trimmed == "..." {
                // Blank lines matter inside block scalars only.
                return Line {
                    indent: usize::MAX,
                    text: String::new(),
                    n,
                    raw: raw.to_owned(),
                };
            }
            Line {
                indent: content.len() - trimmed.len(),
                text: trimmed.to_owned(),
                n,
                raw: raw.to_owned(),
            }
        })
        .collect();
    let mut p = Parser { lines, i: 0 };
    p.skip_blank();
    let indent = p.lines.get(p.i).map_or(0, |l| l.indent);
    p.block(indent)
}

struct Parser {
    lines: Vec<Line>,
    i: usize,
}

impl Parser {
    fn skip_blank(&mut self) {
        while self
            .lines
            .get(self.i)
            .is_some_and(|l| l.indent == usize::MAX)
        {
            self.i += 1;
        }
    }

    /// A block starting at the current line, which is at `indent`.
    fn block(&mut self, indent: usize) -> Node {
        self.skip_blank();
        let Some(first) = self.lines.get(self.i) else {
            return Node::Scalar(Vec::new());
        };
        if first.text == "-" || first.text.starts_with("- ") {
            self.seq(indent)
        } else {
            self.map(indent)
        }
    }

    fn seq(&mut self, indent: usize) -> Node {
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            let Some(l) = self.lines.get(self.i).cloned() else {
                break;
            };
            if l.indent > indent {
                // What a malformed or flow item left behind.
                self.i += 1;
                continue;
            }
            if l.indent < indent || !(l.text == "-" || l.text.starts_with("- ")) {
                break;
            }
            let rest = l.text[1..].trim_start();
            if rest.is_empty() {
                self.i += 1;
                self.skip_blank();
                let child = match self.lines.get(self.i) {
                    Some(c) if c.indent != usize::MAX && c.indent > indent => {
                        let ci = c.indent;
                        self.block(ci)
                    }
                    _ => Node::Scalar(Vec::new()),
                };
                items.push((l.n, child));
                continue;
            }
            // `- key: value` or `- - x`: the rest is a block at its own column.
            let col = indent + (l.text.len() - rest.len());
            if key_colon(rest).is_some() || rest.starts_with("- ") {
                self.lines[self.i] = Line {
                    indent: col,
                    text: rest.to_owned(),
                    n: l.n,
                    raw: l.raw.clone(),
                };
                let child = self.block(col);
                items.push((l.n, child));
                continue;
            }
            self.i += 1;
            let value = self.scalar_value(rest, l.n, indent);
            items.push((l.n, value));
        }
        Node::Seq(items)
    }

    fn map(&mut self, indent: usize) -> Node {
        let mut entries = Vec::new();
        loop {
            self.skip_blank();
            let Some(l) = self.lines.get(self.i).cloned() else {
                break;
            };
            if l.indent < indent {
                break;
            }
            if l.indent > indent {
                // The rest of a flow collection over several lines, or a malformed line.
                self.i += 1;
                continue;
            }
            let Some(colon) = key_colon(&l.text) else {
                // Not a mapping line: skip it.
                self.i += 1;
                continue;
            };
            let key = unquote(&l.text[..colon]);
            let rest = l.text[colon + 1..].trim();
            self.i += 1;
            let value = if rest.is_empty() {
                self.skip_blank();
                match self.lines.get(self.i) {
                    // A sequence may sit at the key's own indentation.
                    Some(c)
                        if c.indent != usize::MAX
                            && (c.indent > indent
                                || (c.indent == indent
                                    && (c.text == "-" || c.text.starts_with("- ")))) =>
                    {
                        let ci = c.indent;
                        self.block(ci)
                    }
                    _ => Node::Scalar(Vec::new()),
                }
            } else {
                self.scalar_value(rest, l.n, indent)
            };
            entries.push((key, l.n, value));
        }
        Node::Map(entries)
    }

    /// A scalar after `key:` or `- `: a block scalar (`|`, `>`) takes the more indented lines
    /// that follow; a plain scalar takes its continuation lines.
    fn scalar_value(&mut self, rest: &str, n: u32, indent: usize) -> Node {
        let block = rest.starts_with('|') || rest.starts_with('>');
        let header_ok = block
            && rest[1..]
                .chars()
                .all(|c| matches!(c, '-' | '+') || c.is_ascii_digit());
        if header_ok {
            let mut out = Vec::new();
            let mut body_indent: Option<usize> = None;
            while let Some(l) = self.lines.get(self.i) {
                if l.indent != usize::MAX && l.indent <= indent {
                    break;
                }
                let raw_indent = l.raw.len() - l.raw.trim_start().len();
                if l.raw.trim().is_empty() {
                    out.push((String::new(), l.n));
                    self.i += 1;
                    continue;
                }
                let bi = *body_indent.get_or_insert(raw_indent);
                if raw_indent < bi {
                    break;
                }
                // A block scalar keeps `#` lines: they are text.
                out.push((l.raw.get(bi..).unwrap_or("").trim_end().to_owned(), l.n));
                self.i += 1;
            }
            while out.last().is_some_and(|(l, _)| l.is_empty()) {
                out.pop();
            }
            return Node::Scalar(out);
        }
        // A flow collection over several lines: `[` … `]`.
        if rest.starts_with('[') || rest.starts_with('{') {
            let mut text = rest.to_owned();
            let open = |t: &str| t.matches(['[', '{']).count() > t.matches([']', '}']).count();
            while open(&text) {
                let Some(l) = self.lines.get(self.i) else {
                    break;
                };
                if l.indent != usize::MAX && l.indent <= indent {
                    break;
                }
                text.push(' ');
                text.push_str(&l.text);
                self.i += 1;
            }
            return Node::Scalar(vec![(text, n)]);
        }
        let mut text = unquote(rest);
        // Plain continuation lines, more indented and not a key.
        while let Some(l) = self.lines.get(self.i) {
            if l.indent == usize::MAX
                || l.indent <= indent
                || key_colon(&l.text).is_some()
                || l.text.starts_with("- ")
            {
                break;
            }
            text.push(' ');
            text.push_str(&l.text);
            self.i += 1;
        }
        Node::Scalar(vec![(text, n)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_sequences_and_block_scalars() {
        let doc = parse(
            "name: CI  # the name\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - name: Test\n        run: |\n          pip install .\n          # comment kept\n          pytest -q\n        continue-on-error: true\n      - run: echo 'a # b'\n",
        );
        assert_eq!(doc.get("name").and_then(Node::text).as_deref(), Some("CI"));
        let steps = doc
            .get("jobs")
            .and_then(|j| j.get("test"))
            .and_then(|t| t.get("steps"))
            .expect("steps");
        let items = steps.items();
        assert_eq!(items.len(), 3);
        assert_eq!(
            items[1].get("run").map(Node::lines),
            Some(vec![
                ("pip install .".to_owned(), Some(10)),
                ("# comment kept".to_owned(), Some(11)),
                ("pytest -q".to_owned(), Some(12)),
            ])
        );
        assert_eq!(
            items[1].entry("continue-on-error").map(|(l, _)| l),
            Some(13)
        );
        assert_eq!(
            items[2].get("run").and_then(Node::text).as_deref(),
            Some("echo 'a # b'")
        );
    }

    #[test]
    fn sequences_at_the_key_indentation_and_lists_of_commands() {
        let doc = parse("test:\n  script:\n  - pytest\n  - \"npm test\"\n  allow_failure: false\n");
        let job = doc.get("test").expect("job");
        assert_eq!(
            job.get("script").map(Node::lines),
            Some(vec![
                ("pytest".to_owned(), Some(3)),
                ("npm test".to_owned(), Some(4))
            ])
        );
        assert_eq!(
            job.get("allow_failure").and_then(Node::text).as_deref(),
            Some("false")
        );
        // A flow sequence over several lines, then the rest of the job.
        let doc = parse(
            "test:\n  matrix:\n    tags:\n      [\n        \"\",\n        '-tags \"a b\"',\n      ]\n    os: [a,\n      b]\n  steps:\n    - run: make test\n",
        );
        let job = doc.get("test").expect("job");
        assert_eq!(job.get("steps").map(|s| s.items().len()), Some(1));
        assert_eq!(
            job.get("matrix")
                .and_then(|m| m.get("os"))
                .and_then(Node::text)
                .as_deref(),
            Some("[a, b]")
        );
        // Garbage does not panic.
        let _ = parse("- : :\n  - |\n:\n\t- x\n  a: [b\n");
    }
}
