//! INI files as pytest, tox, setuptools and coverage.py read them: `[section]`, `key = value`
//! or `key: value`, values continued on indented lines, `#` and `;` comment lines. Each piece of
//! a value keeps its line, so a flag points at the line that changed. Never fails: a line it
//! cannot read is skipped.

use super::numbered;

/// One `key = value`, with the value's pieces by line (the first one after `=`, then each
/// continuation line), trimmed; empty pieces dropped.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub key: String,
    pub line: u32,
    pub values: Vec<(String, u32)>,
}

impl Entry {
    /// The value as one text, continuation lines joined by newlines.
    pub fn lines(&self) -> Vec<(String, Option<u32>)> {
        self.values
            .iter()
            .map(|(v, l)| (v.clone(), Some(*l)))
            .collect()
    }

    /// The value split into items at commas and white space (a list such as `testpaths`).
    pub fn items(&self) -> Vec<(String, u32)> {
        self.values
            .iter()
            .flat_map(|(v, l)| {
                v.split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|s| !s.is_empty())
                    .map(move |s| (s.to_owned(), *l))
            })
            .collect()
    }
}

#[derive(Debug, Default)]
pub(super) struct Ini {
    /// `(section, its header line, entries)` in file order.
    pub sections: Vec<(String, u32, Vec<Entry>)>,
}

impl Ini {
    pub fn parse(text: &str) -> Ini {
        let mut ini = Ini::default();
        let mut current: Option<usize> = None;
        for (n, raw) in numbered(text) {
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
                continue;
            }
            let indented = raw.starts_with(' ') || raw.starts_with('\t');
            if !indented && trimmed.starts_with('[') && trimmed.ends_with(']') {
                let name = trimmed[1..trimmed.len() - 1].trim().to_owned();
                ini.sections.push((name, n, Vec::new()));
                current = Some(ini.sections.len() - 1);
                continue;
            }
            let Some(s) = current else {
                continue;
            };
            let entries = &mut ini.sections[s].2;
            if indented && let Some(last) = entries.last_mut() {
                last.values.push((trimmed.to_owned(), n));
                continue;
            }
            let at = trimmed.find(['=', ':']);
            let Some(at) = at else {
                continue;
            };
            let key = trimmed[..at].trim().to_owned();
            let value = trimmed[at + 1..].trim();
            let mut values = Vec::new();
            if !value.is_empty() {
                values.push((value.to_owned(), n));
            }
            entries.push(Entry {
                key,
                line: n,
                values,
            });
        }
        ini
    }

    /// The entry `key` of the first section named one of `sections`.
    pub fn get(&self, sections: &[&str], key: &str) -> Option<&Entry> {
        self.sections
            .iter()
            .filter(|(name, _, _)| sections.contains(&name.as_str()))
            .find_map(|(_, _, entries)| entries.iter().rev().find(|e| e.key == key))
    }

    /// Every section whose name `accept` takes, with its entries.
    pub fn sections<'a>(
        &'a self,
        accept: impl Fn(&str) -> bool + 'a,
    ) -> impl Iterator<Item = (&'a str, u32, &'a [Entry])> + 'a {
        self.sections
            .iter()
            .filter(move |(name, _, _)| accept(name))
            .map(|(name, line, entries)| (name.as_str(), *line, entries.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_keys_and_continuations() {
        let ini = Ini::parse(
            "# top\n[pytest]\naddopts =\n    -q\n    --deselect a::b\ntestpaths = tests docs\n; c\n[tool:pytest]\nx: 1\n",
        );
        let a = ini.get(&["pytest"], "addopts").expect("addopts");
        assert_eq!(
            a.values,
            vec![("-q".to_owned(), 4), ("--deselect a::b".to_owned(), 5)]
        );
        let t = ini.get(&["pytest"], "testpaths").expect("testpaths");
        assert_eq!(
            t.items(),
            vec![("tests".to_owned(), 6), ("docs".to_owned(), 6)]
        );
        assert_eq!(ini.get(&["tool:pytest"], "x").map(|e| e.line), Some(9));
        assert!(ini.get(&["pytest"], "x").is_none());
    }
}
