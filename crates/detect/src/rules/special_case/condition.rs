//! Conditions: which input a branch compares (a name, a tuple of names, a name normalised by
//! `.strip()` or `str()`) and with which literals (`==`, `===`, `is`, `.equals()`,
//! `Objects.equals()`, `strcmp() == 0`, or a prefix by `.startswith()`), joined by `and`/`or`;
//! type and presence guards are neutral, anything else spoils the special case.

use super::literal::{Lit, literal};
use crate::lang::Language;
use crate::rules::tokens::{Kind, Tokens};

/// Methods that normalise an input without changing which input it is.
pub(super) const NORMALISERS: &[&str] = &[
    "strip",
    "lstrip",
    "rstrip",
    "lower",
    "upper",
    "casefold",
    "trim",
    "trimStart",
    "trimEnd",
    "toLowerCase",
    "toUpperCase",
    "toLocaleLowerCase",
    "as_str",
    "as_ref",
    "as_slice",
    "to_string",
    "toString",
    "ToString",
    "Trim",
    "ToLower",
    "ToUpper",
    "ToLowerInvariant",
    "ToUpperInvariant",
    "trim_ascii",
    "to_lowercase",
    "to_uppercase",
    "to_ascii_lowercase",
    "as_bytes",
    "chomp",
    "downcase",
    "upcase",
    "to_s",
    "to_i",
    "to_f",
    "to_a",
    "sorted",
    "tolist",
    "intern",
    "unwrap",
    "clone",
    "to_owned",
    "deref",
    "String",
    "trim_end",
    "trim_start",
    "squish",
];
pub(super) const NORMALISING_FUNCTIONS: &[&str] = &[
    "str",
    "repr",
    "int",
    "float",
    "tuple",
    "list",
    "sorted",
    "set",
    "frozenset",
    "String",
    "Number",
    "parseInt",
    "parseFloat",
];
pub(super) const QUALIFIED_NORMALISERS: &[(&str, &str)] = &[
    ("JSON", "stringify"),
    ("strings", "TrimSpace"),
    ("strings", "ToLower"),
    ("strings", "ToUpper"),
    ("strconv", "Itoa"),
    ("fmt", "Sprint"),
    ("String", "valueOf"),
    ("Arrays", "toString"),
    ("json", "dumps"),
];
pub(super) const NOT_INPUTS: &[&str] = &[
    "self",
    "this",
    "super",
    "true",
    "false",
    "True",
    "False",
    "None",
    "null",
    "nil",
    "undefined",
    "not",
    "typeof",
    "new",
    "await",
    "return",
    "in",
    "is",
    "and",
    "or",
    "it",
    "_",
];

/// How many values the input `a..b` is (1, or a tuple's size), if it is an input at all: a name
/// or names, possibly normalised.
pub(super) fn subject(t: &Tokens<'_>, a: usize, b: usize) -> Option<usize> {
    let (mut a, mut b) = t.trim_newlines(a, b);
    while a < b && (t.is(a, "&") || t.is(a, "*")) {
        a += 1;
    }
    loop {
        if b >= a + 4
            && t.is(b - 1, ")")
            && t.pair(b - 1) == Some(b - 2)
            && t.is(b - 4, ".")
            && NORMALISERS.iter().any(|w| t.is(b - 3, w))
        {
            b -= 4;
        } else if b >= a + 3
            && t.lang == Language::Ruby
            && t.is(b - 2, ".")
            && NORMALISERS.iter().any(|w| t.is(b - 1, w))
        {
            b -= 2;
        } else {
            break;
        }
    }
    if a >= b {
        return None;
    }
    if t.opener(a) && t.pair(a) == Some(b - 1) && !t.is(a, "{") {
        let parts = t.split(a + 1, b - 1, |k| t.is(k, ","));
        if parts.len() == 1 {
            return subject(t, a + 1, b - 1);
        }
        for &(x, y) in &parts {
            if subject(t, x, y)? != 1 {
                return None;
            }
        }
        return Some(parts.len());
    }
    let call = |k: usize| t.is(k, "(") && t.pair(k) == Some(b - 1);
    if NORMALISING_FUNCTIONS.iter().any(|w| t.is(a, w)) && call(a + 1) {
        return subject(t, a + 2, b - 1);
    }
    if QUALIFIED_NORMALISERS
        .iter()
        .any(|(x, y)| t.is(a, x) && t.is(a + 1, ".") && t.is(a + 2, y))
        && call(a + 3)
    {
        return subject(t, a + 4, b - 1);
    }
    if b != a + 1 || t.kind(a) != Some(Kind::Ident) {
        return None;
    }
    let name = t.text(a);
    if NOT_INPUTS.iter().any(|w| name == w.as_bytes()) {
        return None;
    }
    // `MODE`, `DEBUG`: a configured constant, not an input.
    let letters: Vec<u8> = name
        .iter()
        .copied()
        .filter(u8::is_ascii_alphabetic)
        .collect();
    if letters.len() >= 2 && letters.iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    Some(1)
}

/// Methods that compare for equality, called on one side with the other as argument.
pub(super) const EQ_METHODS: &[&str] = &[
    "equals",
    "Equals",
    "equalsIgnoreCase",
    "contentEquals",
    "eql?",
    "equal?",
    "EqualFold",
];
/// Methods that ask whether a string begins with their argument.
pub(super) const PREFIX_METHODS: &[&str] = &[
    "startswith",
    "startsWith",
    "StartsWith",
    "starts_with",
    "start_with?",
];
/// Functions that compare their two arguments.
pub(super) const EQ_FUNCTIONS: &[(&str, &str)] = &[
    ("Objects", "equals"),
    ("String", "Equals"),
    ("string", "Equals"),
    ("Object", "Equals"),
    ("StringUtils", "equals"),
    ("reflect", "DeepEqual"),
    ("strings", "EqualFold"),
    ("Arrays", "equals"),
];

/// `subject == literal` (either way round), `subject.equals(literal)` and the like: the
/// literals it compares with, one per value of the subject.
pub(super) fn equality(t: &Tokens<'_>, a: usize, b: usize) -> Option<Vec<Lit>> {
    let (a, b) = t.trim_newlines(a, b);
    let sides = |l: (usize, usize), r: (usize, usize)| -> Option<Vec<Lit>> {
        let (n, lit) = match (subject(t, l.0, l.1), literal(t, r.0, r.1)) {
            (Some(n), Some(lit)) => (n, lit),
            _ => (subject(t, r.0, r.1)?, literal(t, l.0, l.1)?),
        };
        match (n, lit) {
            (1, lit) => Some(vec![lit]),
            (n, Lit::Seq(items)) if items.len() == n => Some(items),
            _ => None,
        }
    };
    if let Some(op) = t.find(a, b, |k| {
        t.is(k, "==") || t.is(k, "===") || (t.lang == Language::Python && t.is(k, "is"))
    }) {
        if t.is(op + 1, "not")
            || t.find(op + 1, b, |k| t.is(k, "==") || t.is(k, "==="))
                .is_some()
        {
            return None;
        }
        // C's `strcmp(s, "x") == 0`.
        if t.is(a, "strcmp")
            && t.is(a + 1, "(")
            && t.pair(a + 1) == Some(op - 1)
            && t.is(op + 1, "0")
            && op + 2 == b
        {
            let args = t.split(a + 2, op - 1, |k| t.is(k, ","));
            if let [l, r] = args[..] {
                return sides(l, r);
            }
            return None;
        }
        return sides((a, op), (op + 1, b));
    }
    // `x.equals("a")`, `"a".equals(x)`, `x.eql?("a")`.
    if b >= a + 4 && t.is(b - 1, ")") {
        let open = t.pair(b - 1)?;
        // `s.startswith("EDUC")`: the inputs that begin so.
        if open >= a + 2
            && t.is(open - 2, ".")
            && PREFIX_METHODS.iter().any(|w| t.is(open - 1, w))
            && subject(t, a, open - 2) == Some(1)
            && let Some(Lit::Str(p)) = literal(t, open + 1, b - 1)
        {
            return Some(vec![Lit::Prefix(p)]);
        }
        if open >= a + 2 && t.is(open - 2, ".") && EQ_METHODS.iter().any(|w| t.is(open - 1, w)) {
            return sides((a, open - 2), (open + 1, b - 1));
        }
        if open == a + 3
            && EQ_FUNCTIONS
                .iter()
                .any(|(x, y)| t.is(a, x) && t.is(a + 1, ".") && t.is(a + 2, y))
        {
            let args = t.split(open + 1, b - 1, |k| t.is(k, ","));
            if let [l, r] = args[..] {
                return sides(l, r);
            }
        }
    }
    None
}

/// A part of a condition that only checks a type or presence: neither selects an input nor
/// spoils the special case (`isinstance(x, str) and x == "abc"`).
pub(super) fn guard(t: &Tokens<'_>, a: usize, b: usize) -> bool {
    (a..b).any(|k| {
        [
            "isinstance",
            "typeof",
            "instanceof",
            "is_a?",
            "kind_of?",
            "None",
            "null",
            "nil",
            "undefined",
        ]
        .iter()
        .any(|w| t.is(k, w))
    }) && (a..b).all(|k| t.kind(k) != Some(Kind::Str) || t.lang == Language::JavaScript)
}

/// A condition as alternatives of conjunctions of literals compared with the input.
pub(super) fn condition(t: &Tokens<'_>, a: usize, b: usize) -> Option<Vec<Vec<Lit>>> {
    let (mut a, mut b) = t.trim_newlines(a, b);
    while b > a + 2 && t.is(a, "(") && t.pair(a) == Some(b - 1) {
        // `((a, b) == (17, 25))` but not `(a, b) == (17, 25)`.
        a += 1;
        b -= 1;
    }
    if a >= b {
        return None;
    }
    let mut alternatives = Vec::new();
    for (x, y) in t.split(a, b, |k| t.is(k, "||") || t.is(k, "or")) {
        let mut all: Vec<Lit> = Vec::new();
        for (p, q) in t.split(x, y, |k| t.is(k, "&&") || t.is(k, "and")) {
            let (p, q) = t.trim_newlines(p, q);
            if p >= q {
                return None;
            }
            if let Some(lits) = equality(t, p, q) {
                all.extend(lits);
            } else if t.is(p, "(") && t.pair(p) == Some(q - 1) {
                let inner = condition(t, p + 1, q - 1)?;
                let [one] = &inner[..] else {
                    return None;
                };
                all.extend(one.iter().cloned());
            } else if !guard(t, p, q) {
                return None;
            }
        }
        if all.is_empty() {
            return None;
        }
        alternatives.push(all);
    }
    (alternatives.len() <= 8).then_some(alternatives)
}
