//! Which test a deleted test became, when both its name and its body changed.
//!
//! A test renamed in place is most often edited too: a name that says the new behaviour
//! (`returns true …` → `returns false …`), a word added (`registers an offense` → `registers an
//! offense and corrects`), an identifier renamed in the name and the body alike. Neither its name
//! nor its body's key then finds it at the head, yet it is not deleted: it is the same test,
//! changed, and the rules that judge a changed test (`test-weakened`, `expectation-changed`) are
//! the ones that should read it.
//!
//! Two tests are taken for one when their bodies share most of their words ([`likeness`]):
//! names, numbers and the words inside strings, hashed. A word that many other tests of the file
//! also use (`self`, `assert`, `client`) says little about which test is which and weighs less.
//! Pairs are made one to one, the most alike first; the names' likeness breaks ties. A test with
//! no body alike enough is still deleted.

use rustc_hash::FxHashMap as HashMap;

use super::TestCase;

/// The least [`likeness`] for two tests to be one test renamed, whatever their names.
const STRONG_LIKENESS: f64 = 0.7;

/// The least [`likeness`] for two tests whose names are alike too ([`MIN_NAME_LIKENESS`]).
/// Two tests of one file that use its fixtures (`client`, `resp`, `get`) share half their
/// words without being one test; their names then tell them apart.
const MIN_LIKENESS: f64 = 0.5;
const MIN_NAME_LIKENESS: f64 = 0.5;

/// The fewest distinct words two bodies must share: two tests of one assertion each
/// (`expect(a).toBe(true)`, `expect(b).toBe(false)`) share their framework's words and nothing
/// that says they test the same thing.
const MIN_SHARED: usize = 3;

/// Above this many candidate pairs (a whole file rewritten), no pairing is tried: the cost
/// grows with the product, and such a rewrite is reviewed as one anyway.
const MAX_PAIRS: usize = 250_000;

/// In how many of a file's tests each word appears.
#[derive(Debug, Default, Clone)]
pub(crate) struct Rarity {
    tests_with: HashMap<u64, u32>,
}

impl Rarity {
    /// From each test's words (sorted).
    pub fn of_words<'a>(tests: impl IntoIterator<Item = &'a [u64]>) -> Rarity {
        let mut r = Rarity::default();
        for words in tests {
            r.add(words);
        }
        r
    }

    /// Counts one more test, of `words` (sorted; each distinct word counted once).
    pub fn add(&mut self, words: &[u64]) {
        let mut last = None;
        for &w in words {
            if last != Some(w) {
                *self.tests_with.entry(w).or_default() += 1;
                last = Some(w);
            }
        }
    }

    /// In how many of the file's tests `word` appears.
    fn tests_with(&self, word: u64) -> u32 {
        self.tests_with.get(&word).copied().unwrap_or(0)
    }
}

/// The weight of a word that `tests_with` of the file's tests use, found in `in_pair` of the two
/// tests compared: less the more of the file's other tests use it.
fn weight(tests_with: u32, in_pair: u32) -> f64 {
    1.0 / f64::from(1 + tests_with.saturating_sub(in_pair))
}

/// A test's words as [`likeness`] compares them: each distinct word once, with how often the
/// body uses it and how many of the file's tests do. Made once per test, not once per pair.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bag {
    /// (word, uses in the body, tests of the file that use it), by word.
    words: Vec<(u64, u32, u32)>,
}

impl Bag {
    /// From a body's words (sorted).
    pub fn of(words: &[u64], rarity: &Rarity) -> Bag {
        let mut out: Vec<(u64, u32, u32)> = Vec::new();
        for &w in words {
            match out.last_mut() {
                Some((last, n, _)) if *last == w => *n += 1,
                _ => out.push((w, 1, rarity.tests_with(w))),
            }
        }
        Bag { words: out }
    }
}

/// How alike two bodies are, from 0 to 1: the weighted share of their words that both hold
/// (a Dice coefficient over the words as multisets), and how many distinct words they share.
#[cfg(test)]
pub(crate) fn likeness(a: &[u64], b: &[u64], rarity: &Rarity) -> (f64, usize) {
    bag_likeness(&Bag::of(a, rarity), &Bag::of(b, rarity))
}

/// [`likeness`] of two bags made with one rarity.
pub(crate) fn bag_likeness(a: &Bag, b: &Bag) -> (f64, usize) {
    let (a, b) = (&a.words, &b.words);
    let (mut shared, mut total, mut distinct) = (0.0, 0.0, 0usize);
    let (mut i, mut j) = (0, 0);
    loop {
        let (na, nb, tests_with) = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                (i, j) = (i + 1, j + 1);
                (x.1, y.1, x.2)
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                i += 1;
                (x.1, 0, x.2)
            }
            (_, Some(y)) => {
                j += 1;
                (0, y.1, y.2)
            }
            (Some(x), None) => {
                i += 1;
                (x.1, 0, x.2)
            }
            (None, None) => break,
        };
        let both = na.min(nb);
        let w = weight(tests_with, if both > 0 { 2 } else { 1 });
        total += w * f64::from(na + nb);
        if both > 0 {
            shared += w * f64::from(2 * both);
            distinct += 1;
        }
    }
    if total == 0.0 {
        return (0.0, 0);
    }
    (shared / total, distinct)
}

/// A test's name as [`name_likeness`] compares it: letters and digits, lower case, a leading
/// `test` aside. Made once per test, not once per pair.
#[derive(Debug, Clone)]
pub(crate) struct NameKey(Vec<char>);

impl NameKey {
    pub fn of(name: &str) -> NameKey {
        let v: Vec<char> = name
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        // A leading `test` is the framework's, not the name's: `test_add` and `test_sub` are
        // `add` and `sub`.
        match v.strip_prefix(&['t', 'e', 's', 't']) {
            Some(rest) if !rest.is_empty() => NameKey(rest.to_vec()),
            _ => NameKey(v),
        }
    }

    /// One less the share of characters an edit changes, from 0 to 1.
    pub fn likeness(&self, other: &NameKey) -> f64 {
        let (a, b) = (&self.0, &other.0);
        let longest = a.len().max(b.len());
        if longest == 0 {
            return 1.0;
        }
        if a == b {
            return 1.0;
        }
        // Levenshtein distance, one row at a time.
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.iter().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let next = (diagonal + usize::from(ca != cb))
                    .min(row[j] + 1)
                    .min(row[j + 1] + 1);
                diagonal = row[j + 1];
                row[j + 1] = next;
            }
        }
        1.0 - row[b.len()] as f64 / longest as f64
    }
}

/// How alike two names are, from 0 to 1, case, `_`, spaces and a leading `test` aside: one less
/// the share of characters an edit changes.
pub(crate) fn name_likeness(a: &str, b: &str) -> f64 {
    NameKey::of(a).likeness(&NameKey::of(b))
}

/// Whether two tests are one: their bodies' [`likeness`] (`score`, `shared` words) and their
/// names' ([`name_likeness`]).
pub(crate) fn alike(score: f64, shared: usize, names: f64) -> bool {
    shared >= MIN_SHARED
        && (score >= STRONG_LIKENESS || (score >= MIN_LIKENESS && names >= MIN_NAME_LIKENESS))
}

/// Whether two bodies are alike enough for their names to matter: below this no name makes two
/// tests one, so the names need not be compared.
pub(crate) fn may_be_alike(score: f64, shared: usize) -> bool {
    shared >= MIN_SHARED && score >= MIN_LIKENESS
}

/// The names' likeness of two tests when they are one ([`alike`]), for ties; `None` when not.
/// The names are compared only when the bodies leave it open.
pub(crate) fn alike_by(score: f64, shared: usize, names: impl FnOnce() -> f64) -> Option<f64> {
    if !may_be_alike(score, shared) {
        return None;
    }
    let names = names();
    alike(score, shared, names).then_some(names)
}

/// Pairs of (deleted, added) indices that are one test renamed: one to one, the most alike
/// bodies first, then the most alike names.
pub(crate) fn pair(
    deleted: &[&TestCase],
    added: &[&TestCase],
    rarity: &Rarity,
) -> Vec<(usize, usize)> {
    if deleted.is_empty() || added.is_empty() || deleted.len() * added.len() > MAX_PAIRS {
        return Vec::new();
    }
    let added_names: Vec<NameKey> = added.iter().map(|a| NameKey::of(&a.simple)).collect();
    let added_bags: Vec<Bag> = added.iter().map(|a| Bag::of(&a.words, rarity)).collect();
    let mut candidates: Vec<(f64, f64, usize, usize)> = Vec::new();
    for (i, d) in deleted.iter().enumerate() {
        let (name, bag) = (NameKey::of(&d.simple), Bag::of(&d.words, rarity));
        for (j, a) in added_bags.iter().enumerate() {
            let (score, shared) = bag_likeness(&bag, a);
            if let Some(names) = alike_by(score, shared, || name.likeness(&added_names[j])) {
                candidates.push((score, names, i, j));
            }
        }
    }
    one_to_one(candidates, deleted.len(), added.len())
}

/// From candidate pairs (body likeness, name likeness, left, right), pairs one to one, the most
/// alike bodies first, then the most alike names, then the earliest.
pub(crate) fn one_to_one(
    mut candidates: Vec<(f64, f64, usize, usize)>,
    left: usize,
    right: usize,
) -> Vec<(usize, usize)> {
    candidates.sort_by(|x, y| {
        y.0.total_cmp(&x.0)
            .then(y.1.total_cmp(&x.1))
            .then((x.2, x.3).cmp(&(y.2, y.3)))
    });
    let (mut used_l, mut used_r) = (vec![false; left], vec![false; right]);
    let mut out = Vec::new();
    for (_, _, i, j) in candidates {
        if !used_l[i] && !used_r[j] {
            used_l[i] = true;
            used_r[j] = true;
            out.push((i, j));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<u64> {
        let mut v: Vec<u64> = s
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| w.len() >= 2)
            .map(crate::suite::hash)
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn likeness_is_the_share_of_words_kept() {
        let r = Rarity::default();
        let (same, n) = likeness(&words("aa bb cc"), &words("aa bb cc"), &r);
        assert_eq!((same, n), (1.0, 3));
        let (half, n) = likeness(&words("aa bb"), &words("cc dd aa bb"), &r);
        assert!((half - 4.0 / 6.0).abs() < 1e-9, "{half}");
        assert_eq!(n, 2);
        assert_eq!(likeness(&words("aa"), &words("bb"), &r), (0.0, 0));
    }

    #[test]
    fn a_word_every_other_test_uses_weighs_less() {
        let other = words("self assert");
        let (a, b) = (words("self assert xx"), words("self assert yy"));
        let plain = likeness(&a, &b, &Rarity::default()).0;
        let cases: Vec<Vec<u64>> = vec![a.clone(), b.clone(), other.clone(), other];
        let mut r = Rarity::default();
        for c in &cases {
            let mut c = c.clone();
            c.dedup();
            for w in c {
                *r.tests_with.entry(w).or_default() += 1;
            }
        }
        assert!(likeness(&a, &b, &r).0 < plain);
    }

    #[test]
    fn names_alike_case_and_underscores_aside() {
        assert_eq!(
            name_likeness("TestNoArgsWithArgs", "TestNoArgs_WithArgs"),
            1.0
        );
        let typo = name_likeness("testDeerializeMapOfMaps", "testDeserializeMapOfMaps");
        assert!(typo > 0.9, "{typo}");
        assert!(name_likeness("test_add", "test_parse_config") < 0.5);
        assert!(name_likeness("test_add", "test_sub") < 0.5);
    }
}
