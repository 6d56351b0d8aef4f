//! What a change does to each test's markers.
//!
//! Each version's markers are given their owner ([`owner`]); the head's tests are matched with
//! the base's (same qualified name, else the same body under a new name). Then:
//! - a test (or group) that was there before and has more markers of a kind, or more markers
//!   without a condition, than it had: the surplus is new and flagged;
//! - a test new to the file: its markers are *claims*, settled once the whole change is known
//!   ([`resolve`]): a test moved from another file with the same marker keeps it; one moved or
//!   renamed that gains a marker, or one really new whose marker has no condition, is flagged;
//! - a test gone from the file is *removed*, with the kinds of marker it had, for the claims;
//! - markers whose tests cannot be told go back to the per-file count of the other line rules.

use std::collections::HashMap;
use std::ops::Range;

use super::cfg::FileCfg;
use super::owner::{self, Case, Outline, Owner};
use super::{Marker, find, guard, shown};
use crate::change::Change;
use crate::flag::Rule;
use crate::lang::Language;
use crate::lexer::Lexed;
use crate::scan::{Occurrence, Text};

/// What [`judge`] found in one file.
#[derive(Debug, Default)]
pub(crate) struct Judged {
    /// New markers on tests that were there before: flagged.
    pub now: Vec<Occurrence>,
    /// New markers on tests that were there before that skip only under a condition which
    /// does not read the environment (`test.skipIf(isBundledDev)`, a mode the change adds):
    /// the test still runs everywhere else, so these are a note.
    pub conditional: Vec<Occurrence>,
    /// Markers whose tests cannot be told, in the head and the base: judged per file.
    pub head_other: Vec<Occurrence>,
    pub base_other: Vec<Occurrence>,
    /// Markers on tests new to this file, settled by [`resolve`].
    pub claims: Vec<(Occurrence, Claim)>,
    /// Tests gone from this file.
    pub removed: Vec<Removed>,
}

/// A test as another file may hold it after a move or a rename: its simple name, hashed, and its
/// body's lines.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    name: u64,
    lines: Vec<u64>,
}

impl Shape {
    fn of(c: &Case) -> Shape {
        Shape {
            name: crate::suite::hash(&c.simple),
            lines: c.lines.clone(),
        }
    }

    /// The same test: the same name, or most of the same lines.
    fn matches(&self, other: &Shape) -> bool {
        if self.name == other.name {
            return true;
        }
        let (a, b) = (&self.lines, &other.lines);
        if a.is_empty() || b.is_empty() {
            return false;
        }
        let common = a.iter().filter(|l| b.binary_search(l).is_ok()).count();
        2 * common >= a.len().max(b.len())
    }
}

/// A marker on tests new to their file.
#[derive(Debug)]
pub(crate) struct Claim {
    tests: Vec<Shape>,
    kind: &'static str,
    conditional: bool,
}

impl Claim {
    pub fn conditional(&self) -> bool {
        self.conditional
    }
}

/// A test gone from its file, and the kinds of marker it had.
#[derive(Debug)]
pub(crate) struct Removed {
    shape: Shape,
    kinds: Vec<&'static str>,
}

/// Settles the claims of a whole change against the tests it removed: which are flagged.
pub(crate) fn resolve(claims: &[&Claim], removed: &mut [Removed]) -> Vec<bool> {
    claims
        .iter()
        .map(|claim| {
            let counterparts: Vec<usize> = (0..removed.len())
                .filter(|&i| claim.tests.iter().any(|t| t.matches(&removed[i].shape)))
                .collect();
            // Moved or renamed with this very marker: it is not new.
            for &i in &counterparts {
                if let Some(k) = removed[i].kinds.iter().position(|&k| k == claim.kind) {
                    removed[i].kinds.swap_remove(k);
                    return false;
                }
            }
            // A test that existed gains a marker; a new test is flagged only when skipped
            // without a condition.
            !counterparts.is_empty() || !claim.conditional
        })
        .collect()
}

/// A marker found in one version, with its owner.
struct Mark {
    occurrence: Occurrence,
    conditional: bool,
    /// Its condition reads the environment (`process.env.CI`, `os.environ`): where the run
    /// that judges a change may differ from a developer's.
    asks_environment: bool,
    owner: Owner,
}

/// A marker's line that reads the environment, where a run in CI differs from one at a
/// desk: `skipIf(process.env.CI)`, `skipif(os.environ.get(…))`, `if ENV['CI']`.
static ASKS_ENVIRONMENT: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(
    || {
        super::super::code::re(
            r"\b(?:process\s*\.\s*env|os\s*\.\s*(?:environ|getenv)|getenv|ENV|Environment\s*\.\s*GetEnvironmentVariable|System\s*\.\s*getenv|CI)\b",
        )
    },
);

fn asks_environment(text: &Text<'_>, at: usize) -> bool {
    ASKS_ENVIRONMENT.is_match(text.masked_line(text.line_of(at)))
}

/// One version of a file: its tests and its markers.
struct Version {
    outline: Outline,
    marks: Vec<Mark>,
}

/// The tests of one version and their markers. `compiled_out`: the conditions under which the
/// base did not compile the file at all; a Rust test ignored only under them at the head was
/// not running there before either ([`FileCfg`]).
fn read(
    lang: Language,
    is_test: bool,
    lexed: &Lexed<'_>,
    compiled_out: Option<&FileCfg>,
) -> Version {
    let text = Text::of(lexed);
    let outline = owner::outline(lexed, &text);
    let mut marks = Vec::new();
    let mut aliases: Vec<Alias> = Vec::new();
    for (marker, at) in find(lang, is_test, &text) {
        let shown = shown(&text, at.clone());
        if marker.kind == "rs-ignore" && compiled_out.is_some_and(|c| c.excludes(&shown)) {
            continue;
        }
        let runtime = matches!(marker.kind, "js-skip" | "js-xfail")
            && guard::js_runtime_call(&text, at.clone());
        let owner = owner::owner_of(lang, &text, &outline, at.clone(), runtime);
        let scope = scope_of(&outline, &owner);
        let conditional = guard::conditional(lang, marker.kind, &text, at.clone(), scope);
        if lang == Language::Python
            && let Some(name) = alias_name(&text, &owner, at.start)
        {
            aliases.push(Alias {
                name,
                marker,
                conditional,
                shown,
                at: at.clone(),
            });
            continue;
        }
        // A marker chosen under a condition and stored or called at once marks the tests of
        // the calls made through it, like a Python marker stored in a variable.
        if lang == Language::JavaScript
            && guard::is_reference(&text.masked, at.clone())
            && let Some(uses) = owner::js_reference_uses(&text, &outline, at.clone())
            && !uses.is_empty()
        {
            for (used, owner) in uses {
                let name = String::from_utf8_lossy(&text.raw[used.clone()]);
                let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
                let message = format!("newly {}: `{name}` (`{shown}`)", marker.does);
                let occurrence =
                    text.occurrence(Rule::SkipMarker, marker.kind, used.start, used.end, message);
                marks.push(Mark {
                    occurrence,
                    conditional,
                    asks_environment: asks_environment(&text, used.start),
                    owner,
                });
            }
            continue;
        }
        let message = format!("newly {}: `{shown}`", marker.does);
        let occurrence = text.occurrence(Rule::SkipMarker, marker.kind, at.start, at.end, message);
        marks.push(Mark {
            occurrence,
            conditional,
            asks_environment: asks_environment(&text, at.start),
            owner,
        });
    }
    if !aliases.is_empty() {
        uses(lang, &text, &outline, aliases, &mut marks);
    }
    Version { outline, marks }
}

/// Where a marker's owner starts, for the guard around a skip call.
fn scope_of(outline: &Outline, owner: &Owner) -> usize {
    match owner {
        Owner::Test(i) => outline.cases[*i].start,
        _ => 0,
    }
}

/// A Python marker stored in a variable (`needs_gc = pytest.mark.skipif(…)`) at module or class
/// level: it marks nothing where it is written, only where it is used. `pytestmark` is not one:
/// pytest applies it to the module or class.
fn alias_name(text: &Text<'_>, owner: &Owner, at: usize) -> Option<String> {
    if matches!(owner, Owner::Test(_) | Owner::Nowhere) {
        return None;
    }
    let statement = owner::py_statement_start(text, text.line_of(at));
    let name = owner::py_assigned(text, statement)?;
    (name != "pytestmark").then_some(name)
}

struct Alias {
    name: String,
    marker: &'static Marker,
    conditional: bool,
    shown: String,
    at: Range<usize>,
}

/// Each use of a stored marker is a marker where it is used (`@needs_gc` on a test); a variable
/// built from one (`both = [needs_gc, slow]`) is one more. A stored marker this file never uses
/// (another module imports it) is judged where it is written, as before.
fn uses(
    lang: Language,
    text: &Text<'_>,
    outline: &Outline,
    aliases: Vec<Alias>,
    marks: &mut Vec<Mark>,
) {
    let m = &text.masked;
    let mut all = aliases;
    let mut used = vec![false; all.len()];
    let mut i = 0;
    while i < all.len() {
        let name = all[i].name.clone();
        let mut at = 0;
        while let Some(p) = memchr::memmem::find(&m[at..], name.as_bytes()) {
            let (s, e) = (at + p, at + p + name.len());
            at = e;
            let word = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
            if word(s.checked_sub(1).and_then(|k| m.get(k)))
                || word(m.get(e))
                || s.checked_sub(1).and_then(|k| m.get(k)) == Some(&b'.')
                || all[i].at.start <= s && s < all[i].at.end
            {
                continue;
            }
            let line = text.line_of(s);
            let statement = owner::py_statement_start(text, line);
            let assigned = owner::py_assigned(text, statement);
            // The variable's own assignment, or a reassignment.
            if assigned.as_deref() == Some(name.as_str()) && line == statement {
                let lhs_end = text.line_start(line)
                    + text
                        .masked_line(line)
                        .iter()
                        .position(|&b| b == b'=')
                        .unwrap_or(0);
                if s < lhs_end {
                    continue;
                }
            }
            used[i] = true;
            let owner = owner::owner_of(lang, text, outline, s..e, false);
            // Stored again under another name: that name is a marker too.
            if let Some(other) = alias_name(text, &owner, s)
                && other != name
            {
                if !all.iter().any(|a| a.name == other) && all.len() < 64 {
                    all.push(Alias {
                        name: other,
                        marker: all[i].marker,
                        conditional: all[i].conditional,
                        shown: all[i].shown.clone(),
                        at: s..e,
                    });
                    used.push(false);
                }
                continue;
            }
            let a = &all[i];
            let message = format!("newly {}: `{name}` (`{}`)", a.marker.does, a.shown);
            marks.push(Mark {
                occurrence: text.occurrence(Rule::SkipMarker, a.marker.kind, s, e, message),
                conditional: a.conditional,
                asks_environment: asks_environment(text, a.at.start),
                owner,
            });
        }
        i += 1;
    }
    // A stored marker no code here uses is judged where it is written.
    for (a, used) in all.iter().zip(used) {
        if used {
            continue;
        }
        let message = format!("newly {}: `{}`", a.marker.does, a.shown);
        marks.push(Mark {
            occurrence: text.occurrence(
                Rule::SkipMarker,
                a.marker.kind,
                a.at.start,
                a.at.end,
                message,
            ),
            conditional: a.conditional,
            asks_environment: asks_environment(text, a.at.start),
            owner: Owner::Other,
        });
    }
}

/// For each head test, the base test it is: the same qualified name, else (renamed in place) the
/// same body.
fn pair(base: &[Case], head: &[Case]) -> Vec<Option<usize>> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, b) in base.iter().enumerate().rev() {
        by_name.entry(b.name.as_str()).or_default().push(i);
    }
    let mut used = vec![false; base.len()];
    let mut out: Vec<Option<usize>> = head
        .iter()
        .map(|h| {
            let i = by_name.get_mut(h.name.as_str())?.pop()?;
            used[i] = true;
            Some(i)
        })
        .collect();
    for (h, slot) in head.iter().zip(out.iter_mut()) {
        if slot.is_some() || h.body_key.is_none() {
            continue;
        }
        if let Some(i) = (0..base.len()).find(|&i| !used[i] && base[i].body_key == h.body_key) {
            used[i] = true;
            *slot = Some(i);
        }
    }
    out
}

/// The key of a marker's owner, the same in both versions for the same test or group; `None`
/// for one judged per file.
fn owner_key(
    owner: &Owner,
    cases: &[Case],
    pairing: Option<&[Option<usize>]>,
    base: &[Case],
) -> Option<String> {
    match owner {
        Owner::Test(i) => Some(match pairing {
            Some(p) => format!("t {}", base[p[*i]?].name),
            None => format!("t {}", cases[*i].name),
        }),
        Owner::Group(k, _) => Some(format!("g {k}")),
        Owner::Other | Owner::Nowhere => None,
    }
}

/// Whether a head owner holds a test the base had.
fn existed(owner: &Owner, pairing: &[Option<usize>]) -> bool {
    match owner {
        Owner::Test(i) => pairing[*i].is_some(),
        Owner::Group(_, tests) => tests.iter().any(|&i| pairing[i].is_some()),
        _ => true,
    }
}

/// A marker key that no lost line elsewhere in the change can match: a test's new marker is not
/// excused by a marker another test lost.
const PER_TEST: u64 = 0x9e37_79b9_7f4a_7c15;

/// What the change does to the markers of one file; `None` when neither version holds one.
pub(crate) fn judge(
    lang: Language,
    is_test: bool,
    harness: bool,
    change: &Change,
    new: Option<&Lexed<'_>>,
    old: Option<&Lexed<'_>>,
) -> Option<Judged> {
    // Most files that hold a marker's word hold no marker: they are not outlined.
    let found =
        |l: Option<&Lexed<'_>>| l.is_some_and(|l| !find(lang, is_test, &Text::of(l)).is_empty());
    if !found(new) && !found(old) {
        return None;
    }
    let compiled_out = old
        .filter(|_| lang == Language::Rust)
        .map(|l| FileCfg::of(&Text::of(l)));
    let head = new.map(|l| read(lang, is_test, l, compiled_out.as_ref()));
    let base = old.map(|l| read(lang, is_test, l, None));
    let empty = Version {
        outline: Outline::default(),
        marks: Vec::new(),
    };
    let (head, base) = (
        head.unwrap_or(empty),
        base.unwrap_or(Version {
            outline: Outline::default(),
            marks: Vec::new(),
        }),
    );
    let pairing = pair(&base.outline.cases, &head.outline.cases);
    let mut out = Judged::default();

    // The base's markers, by owner and kind.
    // A marker on a file whose tests cannot be told: in a file new to the change it applies
    // to new tests only; otherwise it is judged per file.
    let untold = |m: &Mark| matches!(&m.owner, Owner::Group(_, t) if t.is_empty());
    // Not a harness file (conftest.py, a setup file): what it skips are tests elsewhere.
    let new_file = old.is_none() && !harness;
    let mut before: HashMap<String, Vec<&Mark>> = HashMap::new();
    for m in &base.marks {
        if untold(m) {
            out.base_other.push(m.occurrence.clone());
            continue;
        }
        match owner_key(&m.owner, &base.outline.cases, None, &base.outline.cases) {
            Some(k) => before.entry(k).or_default().push(m),
            None if m.owner == Owner::Other => out.base_other.push(m.occurrence.clone()),
            None => {}
        }
    }
    let mut after: HashMap<String, Vec<&Mark>> = HashMap::new();
    for m in &head.marks {
        if m.owner == Owner::Nowhere {
            continue;
        }
        if m.owner == Owner::Other || (untold(m) && !new_file) {
            out.head_other.push(m.occurrence.clone());
            continue;
        }
        if !existed(&m.owner, &pairing) {
            let tests: Vec<Shape> = match &m.owner {
                Owner::Test(i) => vec![Shape::of(&head.outline.cases[*i])],
                Owner::Group(_, t) => t
                    .iter()
                    .map(|&i| Shape::of(&head.outline.cases[i]))
                    .collect(),
                _ => Vec::new(),
            };
            out.claims.push((
                m.occurrence.clone(),
                Claim {
                    tests,
                    kind: m.occurrence.kind,
                    conditional: m.conditional,
                },
            ));
            continue;
        }
        if let Some(k) = owner_key(
            &m.owner,
            &head.outline.cases,
            Some(&pairing),
            &base.outline.cases,
        ) {
            after.entry(k).or_default().push(m);
        }
    }
    // A test had the markers of the groups around it too: a module's or a class's skip that the
    // change narrows to the tests that need it (the group's marker gone, the same kind on some of
    // its tests) adds none to them. A group that keeps its marker excuses nothing.
    let mut inherited: HashMap<String, Vec<&Mark>> = HashMap::new();
    for (k, was) in &before {
        let now = after.get(k).map(Vec::as_slice).unwrap_or_default();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for m in was {
            let Owner::Group(_, tests) = &m.owner else {
                continue;
            };
            let kind = m.occurrence.kind;
            let nth = seen.entry(kind).or_default();
            *nth += 1;
            if *nth <= now.iter().filter(|n| n.occurrence.kind == kind).count() {
                continue;
            }
            for &j in tests {
                inherited
                    .entry(format!("t {}", base.outline.cases[j].name))
                    .or_default()
                    .push(m);
            }
        }
    }
    let mut keys: Vec<&String> = after.keys().collect();
    keys.sort();
    for k in keys {
        let now = &after[k];
        let mut was: Vec<&Mark> = before.get(k).cloned().unwrap_or_default();
        was.extend(inherited.get(k).into_iter().flatten());
        if !before.contains_key(k) {
            was.extend(carried(now, &pairing, &base.marks));
        }
        let was = was.as_slice();
        for o in gained(change, now, was) {
            let mut flagged = o.clone();
            flagged.key ^= PER_TEST;
            let mark = now.iter().find(|m| std::ptr::eq(&m.occurrence, o));
            if mark.is_some_and(|m| m.conditional && !m.asks_environment) {
                out.conditional.push(flagged);
            } else {
                out.now.push(flagged);
            }
        }
    }
    out.now.sort_by_key(|o| o.line);
    out.conditional.sort_by_key(|o| o.line);
    // What tests lost, kind by kind, may have gone into a helper they call (a guard moved into
    // `ensureFormatIsSupported()`): the per-file count sees it on the base's side.
    for (k, was) in &before {
        let now = after.get(k).map(Vec::as_slice).unwrap_or_default();
        let mut kinds: Vec<&str> = was.iter().map(|m| m.occurrence.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        for kind in kinds {
            let n = now.iter().filter(|m| m.occurrence.kind == kind).count();
            out.base_other.extend(
                was.iter()
                    .filter(|m| m.occurrence.kind == kind)
                    .skip(n)
                    .map(|m| m.occurrence.clone()),
            );
        }
    }

    // Tests gone from the file, with the kinds of marker they had.
    let mut paired = vec![false; base.outline.cases.len()];
    for &i in pairing.iter().flatten() {
        paired[i] = true;
    }
    for (i, c) in base.outline.cases.iter().enumerate() {
        if paired[i] {
            continue;
        }
        let kinds = base
            .marks
            .iter()
            .filter(|m| match &m.owner {
                Owner::Test(j) => *j == i,
                Owner::Group(_, t) => t.contains(&i),
                _ => false,
            })
            .map(|m| m.occurrence.kind)
            .collect();
        out.removed.push(Removed {
            shape: Shape::of(c),
            kinds,
        });
    }
    Some(out)
}

/// The base's markers that the tests of a group new to the file had, the group's own or
/// their own: tests moved from one `describe.runIf(isBuild)` into another under the same
/// condition keep the skip they had.
fn carried<'b>(now: &[&Mark], pairing: &[Option<usize>], base: &'b [Mark]) -> Vec<&'b Mark> {
    let Some(Owner::Group(_, tests)) = now.first().map(|m| &m.owner) else {
        return Vec::new();
    };
    let from: Vec<usize> = tests.iter().filter_map(|&i| pairing[i]).collect();
    base.iter()
        .filter(|m| match &m.owner {
            Owner::Test(j) => from.contains(j),
            Owner::Group(_, t) => t.iter().any(|j| from.contains(j)),
            _ => false,
        })
        .collect()
}

/// One owner's markers beyond what it had: per kind, the surplus; and markers without a condition
/// beyond those it had (a guard turned into a plain skip). Markers on lines the change added, and
/// whose code the base did not have, go first.
fn gained<'m>(change: &Change, now: &[&'m Mark], was: &[&Mark]) -> Vec<&'m Occurrence> {
    let mut chosen: Vec<&Mark> = Vec::new();
    let order = |c: &mut Vec<&'m Mark>| {
        c.sort_by_key(|m| {
            let o = &m.occurrence;
            (
                !change.any_added(o.first, o.last),
                was.iter().any(|b| b.occurrence.key == o.key),
                o.line,
            )
        });
    };
    let mut kinds: Vec<&str> = now.iter().map(|m| m.occurrence.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        let n = now.iter().filter(|m| m.occurrence.kind == kind).count();
        let b = was.iter().filter(|m| m.occurrence.kind == kind).count();
        let Some(surplus) = n.checked_sub(b).filter(|&s| s > 0) else {
            continue;
        };
        let mut c: Vec<&Mark> = now
            .iter()
            .copied()
            .filter(|m| m.occurrence.kind == kind)
            .collect();
        order(&mut c);
        chosen.extend(c.into_iter().take(surplus));
    }
    let plain = |ms: &[&Mark]| ms.iter().filter(|m| !m.conditional).count();
    let more = plain(now)
        .saturating_sub(plain(was))
        .saturating_sub(plain(&chosen));
    if more > 0 {
        let mut c: Vec<&Mark> = now
            .iter()
            .copied()
            .filter(|m| !m.conditional && !chosen.iter().any(|x| std::ptr::eq(*x, *m)))
            .filter(|m| change.any_added(m.occurrence.first, m.occurrence.last))
            .collect();
        order(&mut c);
        chosen.extend(c.into_iter().take(more));
    }
    chosen.into_iter().map(|m| &m.occurrence).collect()
}

/// The tests a change removed from a file in which no marker was found: the other half of a
/// claim on a test moved from it.
pub(crate) fn removed_tests(lang: Language, old: &[u8], new: Option<&[u8]>) -> Vec<Removed> {
    let outline = |raw: &[u8]| {
        let lexed = Lexed::new(lang, raw, true);
        let text = Text::of(&lexed);
        owner::outline(&lexed, &text)
    };
    let base = outline(old);
    let head = new.map(outline).unwrap_or_default();
    let pairing = pair(&base.cases, &head.cases);
    let mut paired = vec![false; base.cases.len()];
    for &i in pairing.iter().flatten() {
        paired[i] = true;
    }
    base.cases
        .iter()
        .zip(paired)
        .filter(|(_, p)| !p)
        .map(|(c, _)| Removed {
            shape: Shape::of(c),
            kinds: Vec::new(),
        })
        .collect()
}
