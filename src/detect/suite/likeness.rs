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
    pub fn of_words(tests: impl IntoIterator<Item = Vec<u64>>) -> Rarity {
        let mut r = Rarity::default();
        for mut words in tests {
            r.add(&mut words);
        }
        r
    }

    /// Counts one more test, of `words` (sorted; deduplicated here).
    pub fn add(&mut self, words: &mut Vec<u64>) {
        words.dedup();
        for &w in words.iter() {
            *self.tests_with.entry(w).or_default() += 1;
        }
    }

    /// The weight of a word found in `in_pair` of the two tests compared: less the more of the
    /// file's other tests use it.
    fn weight(&self, word: u64, in_pair: u32) -> f64 {
        let others = self
            .tests_with
            .get(&word)
            .copied()
            .unwrap_or(0)
            .saturating_sub(in_pair);
        1.0 / f64::from(1 + others)
    }
}

/// How alike two bodies are, from 0 to 1: the weighted share of their words that both hold
/// (a Dice coefficient over the words as multisets), and how many distinct words they share.
pub(crate) fn likeness(a: &[u64], b: &[u64], rarity: &Rarity) -> (f64, usize) {
    let (mut shared, mut total, mut distinct) = (0.0, 0.0, 0usize);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let word = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        let run = |v: &[u64], k: &mut usize| {
            let start = *k;
            while v.get(*k) == Some(&word) {
                *k += 1;
            }
            *k - start
        };
        let (na, nb) = (run(a, &mut i), run(b, &mut j));
        let both = na.min(nb);
        let w = rarity.weight(word, if both > 0 { 2 } else { 1 });
        total += w * (na + nb) as f64;
        if both > 0 {
            shared += w * (2 * both) as f64;
            distinct += 1;
        }
    }
    if total == 0.0 {
        return (0.0, 0);
    }
    (shared / total, distinct)
}

/// How alike two names are, from 0 to 1, case, `_`, spaces and a leading `test` aside: one less
/// the share of characters an edit changes.
pub(crate) fn name_likeness(a: &str, b: &str) -> f64 {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    // A leading `test` is the framework's, not the name's: `test_add` and `test_sub` are
    // `add` and `sub`.
    let strip = |v: Vec<char>| match v.strip_prefix(&['t', 'e', 's', 't']) {
        Some(rest) if !rest.is_empty() => rest.to_vec(),
        _ => v,
    };
    let (a, b) = (strip(norm(a)), strip(norm(b)));
    let longest = a.len().max(b.len());
    if longest == 0 {
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

/// Whether two tests are one: their bodies' [`likeness`] (`score`, `shared` words) and their
/// names' ([`name_likeness`]).
pub(crate) fn alike(score: f64, shared: usize, names: f64) -> bool {
    shared >= MIN_SHARED
        && (score >= STRONG_LIKENESS || (score >= MIN_LIKENESS && names >= MIN_NAME_LIKENESS))
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
    let mut candidates: Vec<(f64, f64, usize, usize)> = Vec::new();
    for (i, d) in deleted.iter().enumerate() {
        for (j, a) in added.iter().enumerate() {
            let (score, shared) = likeness(&d.words, &a.words, rarity);
            if score < MIN_LIKENESS {
                continue;
            }
            let names = name_likeness(&d.simple, &a.simple);
            if alike(score, shared, names) {
                candidates.push((score, names, i, j));
            }
        }
    }
    candidates.sort_by(|x, y| {
        y.0.total_cmp(&x.0)
            .then(y.1.total_cmp(&x.1))
            .then((x.2, x.3).cmp(&(y.2, y.3)))
    });
    let (mut used_d, mut used_a) = (vec![false; deleted.len()], vec![false; added.len()]);
    let mut out = Vec::new();
    for (_, _, i, j) in candidates {
        if !used_d[i] && !used_a[j] {
            used_d[i] = true;
            used_a[j] = true;
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
            .map(crate::detect::suite::hash)
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
