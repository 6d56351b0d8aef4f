//! How much one assertion pins down: an exact expectation (`assert x == 170`, `toBe(170)`,
//! `assertEquals(170, x)`) or a loose one about the same value (`assert x is not None`,
//! `toBeDefined()`, `assertNotNull(x)`, `assert isinstance(x, int)`, `toContain(…)`,
//! `toBeGreaterThan(0)`, `toEqual(expect.any(Number))`, `toThrow()` where it said which error).
//!
//! An exact assertion swapped for a loose one on the same value keeps the test's count of
//! checks and passes on far more wrong answers: [`loosened`] pairs them, for `test-weakened`.

use super::text::word_at;
use super::{Check, is_literal};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strength {
    /// Compares with one expected value (or says which error, with what message).
    Exact,
    /// Says only that the value exists, is truthy, has a type, holds a part, or lies in a range.
    Loose,
    /// Anything else: a custom matcher, a condition the model does not weigh.
    Other,
}

/// The matcher's name, lower case, without its receiver (`expect.toBe` → `tobe`,
/// `assertThat.isEqualTo` → `isequalto`, `Assert.Equal` → `equal`).
pub(super) fn matcher(c: &Check) -> String {
    c.family
        .rsplit('.')
        .next()
        .unwrap_or(&c.family)
        .to_ascii_lowercase()
}

/// Equality with one expected value.
pub(super) const EQUAL: &[&str] = &[
    "assert==",
    "go==",
    "==",
    "eq",
    "eql",
    "equal",
    "equals",
    "isequalto",
    "assertequal",
    "assertequals",
    "assert_eq",
    "tobe",
    "toequal",
    "tostrictequal",
    "deepequal",
    "strictequal",
    "deepstrictequal",
    "assertlistequal",
    "assertdictequal",
    "asserttupleequal",
    "assertsetequal",
    "assertsequenceequal",
    "assertcountequal",
    "assertmultilineequal",
    "assertsame",
    "same",
    "issameas",
    "containsexactly",
    "tohavelength",
    "hassize",
    "haslength",
    "assert_called_once_with",
    "assert_called_with",
    "tohavebeencalledwith",
    "tobecalledwith",
    "tohavebeenlastcalledwith",
    "tohavebeencalledtimes",
];

/// Says that a value exists or is truthy, or has a type, without saying which value.
const PRESENT: &[&str] = &[
    "tobedefined",
    "tobetruthy",
    "be_truthy",
    "truthy",
    "ok",
    "exist",
    "notnull",
    "isnotnull",
    "assertnotnull",
    "notnil",
    "assertisnotnone",
    "tobeinstanceof",
    "tobetypeof",
    "isinstanceof",
    "assertisinstance",
    "isassignablefrom",
    "be_a",
    "be_an",
    "be_kind_of",
    "be_an_instance_of",
    "istype",
    "isassignableto",
    "tohavebeencalled",
    "assert_called",
    "assert_called_once",
];

/// Holds a part, or lies in a range: weaker than the whole value.
const PART: &[&str] = &[
    "tocontain",
    "tocontainequal",
    "contains",
    "contain",
    "include",
    "includes",
    "assertin",
    "assert-in",
    "hasitem",
    "hasitems",
    "tomatchobject",
    "tomatch",
    "like",
    "containsentry",
    "containskey",
    "subset",
    "tobegreaterthan",
    "tobegreaterthanorequal",
    "tobelessthan",
    "tobelessthanorequal",
    "greater",
    "greaterorequal",
    "less",
    "lessorequal",
    "assertgreater",
    "assertgreaterequal",
    "assertless",
    "assertlessequal",
    "isgreaterthan",
    "isgreaterthanorequalto",
    "islessthan",
    "islessthanorequalto",
    "ispositive",
    "isnotempty",
    "notempty",
    "isnotblank",
    "assert>",
    "assert>=",
    "assert<",
    "assert<=",
    "be_positive",
];

/// Checks that `x` is not null: `is not None`, `not.toBeNull()`, `NotNil`, `assertIsNotNone`.
const NULL: &[&str] = &[
    "assert-is",
    "assert==",
    "go==",
    "isnull",
    "null",
    "nil",
    "tobenull",
    "tobeundefined",
    "be_nil",
    "assertisnone",
    "isnone",
    "none",
    "assertnull",
];

const NOTHING: &[&str] = &["None", "nil", "null", "undefined"];

/// A boolean is no expected value: `assertEquals(true, x)` is `assertTrue(x)`.
const BOOLEANS: &[&str] = &["true", "false", "True", "False"];

/// Expects an error: exact when it says which or what it must say (`toThrow("bad")`,
/// `pytest.raises(E, match=…)`), loose without (`toThrow()`, `pytest.raises(E)`).
const THROW: &[&str] = &[
    "tothrow",
    "tothrowerror",
    "throw",
    "throws",
    "raises",
    "raise_error",
    "rejects",
];

/// Error types that every error is: expecting one says only that something failed.
const ANY_ERROR: &[&str] = &[
    "Error",
    "Exception",
    "BaseException",
    "Throwable",
    "StandardError",
    "Exception.class",
    "Throwable.class",
    "RuntimeException.class",
    "Error.class",
    "Exception::class",
    "\\Exception::class",
    "typeof(Exception)",
];

/// Truthiness of one expression, with no comparison in it: `assert x`, `assertTrue(x)`,
/// `assert!(got.is_ok())`, `assert isinstance(x, T)`, `assert.True(t, n > 0)`.
const TRUTH: &[&str] = &[
    "assert",
    "assert-truth",
    "asserttrue",
    "true",
    "istrue",
    "go-truth",
    "be_truthy",
];

/// A value that matches anything of its kind: `expect.any(Number)`, `expect.anything()`,
/// `mock.ANY`, `Arg.Any<int>()`, `It.IsAny<int>()`, `anything`.
fn matches_anything(op: &str) -> bool {
    let op = op.trim();
    op == "ANY"
        || op.ends_with(".ANY")
        || op == "anything"
        || op.starts_with("expect.any(")
        || op.starts_with("expect.anything(")
        || op.starts_with("expect.objectContaining(")
        || op.starts_with("expect.arrayContaining(")
        || op.starts_with("expect.stringContaining(")
        || op.starts_with("Arg.Any")
        || op.starts_with("It.IsAny")
        || op.starts_with("any(")
        || op.starts_with("anything(")
}

/// A condition that compares nothing with an expected value: a name, a call of a predicate
/// (`got.is_ok()`, `isinstance(x, T)`), or a test against zero or nothing (`n > 0`,
/// `x != None`).
fn loose_condition(op: &str) -> bool {
    let op = op.trim();
    for zero in [">0", ">=0", "!=0", "!=None", "!=nil", "!=null", "isnotNone"] {
        if let Some(rest) = op.strip_suffix(zero)
            && !rest.is_empty()
            && !rest.contains(['<', '>', '='])
        {
            return true;
        }
    }
    !op.contains("==")
        && !op.contains("!=")
        && !op.contains(['<', '>'])
        && !op.contains(" in ")
        && !op.contains(" is ")
        && !op.starts_with("not")
        && !op.starts_with('!')
        && !op.contains("&&")
        && !op.contains("||")
        && !op.contains(" and ")
        && !op.contains(" or ")
        && !op.contains(".equals(")
        && !op.contains(".contentEquals(")
        && !op.contains(".matches(")
        && !op.contains(".startsWith(")
        && !op.contains(".endsWith(")
        && !op.contains(".starts_with(")
        && !op.contains(".ends_with(")
        && !op.contains(".startswith(")
        && !op.contains(".endswith(")
        && !op.contains(".contains(")
        && !op.contains(".includes(")
        && !op.contains(".test(")
        && !op.contains("matches!")
        && !op.contains("math.isclose")
        && !op.contains(".all(")
        && !op.contains(".any(")
        && !op.starts_with("all(")
        && !op.starts_with("any(")
}

/// A matcher that expects an error (`toThrow`, `raises`, `raise_error`): what follows its
/// subject says which error, or what it must say.
pub(crate) fn expects_error(c: &Check) -> bool {
    THROW.contains(&matcher(c).as_str())
}

pub(crate) fn strength(c: &Check) -> Strength {
    let m = matcher(c);
    let m = m.as_str();
    let ops = &c.operands;
    // A test that something is not null, however it is spelt.
    if c.negated && NULL.contains(&m) {
        let nothing = match ops.len() {
            1 => !matches!(m, "assert==" | "go==" | "assert-is"),
            _ => ops.iter().skip(1).any(|o| NOTHING.contains(&o.as_str())),
        };
        if nothing {
            return Strength::Loose;
        }
    }
    if c.negated {
        return Strength::Other;
    }
    // AssertJ's `assertThatThrownBy(f).isInstanceOf(E.class).hasMessage(…)` and
    // `assertThatExceptionOfType(E.class).isThrownBy(f)`: an error expected, whatever the
    // chain's last matcher; exact when it says which (not `Exception.class`) or what it says.
    let specific = |o: &String| !ANY_ERROR.contains(&o.as_str());
    if c.family.starts_with("assertThatThrownBy") {
        return if ops.iter().skip(1).any(specific) {
            Strength::Exact
        } else {
            Strength::Loose
        };
    }
    if c.family.starts_with("assertThatExceptionOfType") {
        return if ops.first().is_some_and(specific) || ops.len() > 2 {
            Strength::Exact
        } else {
            Strength::Loose
        };
    }
    if EQUAL.contains(&m) {
        if ops.iter().any(|o| matches_anything(o)) {
            return Strength::Loose;
        }
        // Against nothing (`== None`) or a boolean, or a value with itself, is no expected
        // value.
        if ops.iter().any(|o| BOOLEANS.contains(&o.as_str())) {
            return Strength::Other;
        }
        let values: Vec<&String> = ops
            .iter()
            .filter(|o| !NOTHING.contains(&o.as_str()))
            .collect();
        return if values.len() >= 2 && values[0] != values[1] {
            Strength::Exact
        } else {
            Strength::Other
        };
    }
    if PRESENT.contains(&m) || PART.contains(&m) {
        return Strength::Loose;
    }
    if TRUTH.contains(&m) && ops.len() == 1 && loose_condition(&ops[0]) {
        return Strength::Loose;
    }
    // An error expected with what it must be or say, and one expected with nothing said (or
    // any error at all: `toThrow(Error)`, AssertJ's `isInstanceOf(Exception.class)`).
    if expects_error(c) {
        // pytest's call form, `pytest.raises(E, f, *args)`: what follows the error is the call
        // made, not what the error must be; only `match=`/`check=` say that.
        let says = |o: &&String| m != "raises" || says_what_the_error_is(o);
        return if ops.iter().skip(1).filter(says).any(specific) {
            Strength::Exact
        } else {
            Strength::Loose
        };
    }
    Strength::Other
}

/// Whether an argument of `pytest.raises` says what the error must be: `match=…`, `check=…`
/// (in the call form every other argument is the call's own).
fn says_what_the_error_is(op: &str) -> bool {
    ["match", "check"].iter().any(|k| {
        op.strip_prefix(k)
            .and_then(|r| r.trim_start().strip_prefix('='))
            .is_some_and(|r| !r.starts_with('='))
    })
}

/// Whether `name` stands in `text` as a whole: not part of a longer name.
fn names(text: &str, name: &str) -> bool {
    text.match_indices(name)
        .any(|(i, _)| word_at(text.as_bytes(), i, name.as_bytes()))
}

/// Whether the two assertions are about the same value: an operand of the exact one that is
/// not a literal (the value under test) stands in an operand of the loose one.
fn same_subject(exact: &Check, loose: &Check) -> bool {
    exact
        .operands
        .iter()
        .filter(|o| !o.is_empty() && !is_literal(o) && !matches_anything(o))
        .any(|o| loose.operands.iter().any(|l| names(l, o)))
}

/// The exact assertions of a test's base (`lost`, those with no counterpart at the head)
/// replaced by a loose one about the same value among the head's new assertions (`gained`):
/// (base, head) pairs, each assertion in one pair at most.
/// An exact assertion rewritten as another exact one about its value (`x == 5` → `x.value == 5`
/// beside `x is not None`) is not loosened.
pub(crate) fn loosened<'a>(
    lost: &[&'a Check],
    gained: &[&'a Check],
) -> Vec<(&'a Check, &'a Check)> {
    let (mut free, exact): (Vec<&Check>, Vec<&Check>) = gained
        .iter()
        .copied()
        .filter(|h| strength(h) != Strength::Other)
        .partition(|h| strength(h) == Strength::Loose);
    let mut out = Vec::new();
    for b in lost
        .iter()
        .copied()
        .filter(|b| strength(b) == Strength::Exact || expects_a_boolean(b))
    {
        if exact.iter().any(|h| same_subject(b, h)) {
            continue;
        }
        // A boolean is loosened only into a wildcard (`toEqual(true)` →
        // `toEqual(expect.anything())`): `assert ok == True` → `assert ok` says the same.
        let fits =
            |h: &&Check| same_subject(b, h) && (!expects_a_boolean(b) || equals_a_wildcard(h));
        if let Some(i) = free.iter().position(fits) {
            out.push((b, free.remove(i)));
        }
    }
    out
}

/// Equality with `true` or `false`, not negated: one of two values pinned.
fn expects_a_boolean(c: &Check) -> bool {
    !c.negated
        && EQUAL.contains(&matcher(c).as_str())
        && c.operands.iter().any(|o| BOOLEANS.contains(&o.as_str()))
}

/// Equality with a value that matches anything (`toEqual(expect.anything())`).
fn equals_a_wildcard(c: &Check) -> bool {
    EQUAL.contains(&matcher(c).as_str()) && c.operands.iter().any(|o| matches_anything(o))
}

/// Whether an exact assertion about a part of a value (`parsed["family"] == "TS"`,
/// `expect(names).toHaveLength(2)`) stands in a new comparison of the whole value with a
/// literal that holds its expected value (`parsed == {"family": "TS", …}`,
/// `assertDictEqual(parsed, {…})`, `toEqual({ length: 2, … })`): folded there, not lost.
pub(crate) fn folded(lost: &Check, gained: &[&Check]) -> bool {
    if strength(lost) != Strength::Exact {
        return false;
    }
    let (values, subjects): (Vec<&String>, Vec<&String>) =
        lost.operands.iter().partition(|o| is_literal(o));
    let roots: Vec<&str> = subjects.iter().filter_map(|s| root(s)).collect();
    if values.is_empty() || roots.is_empty() {
        return false;
    }
    gained.iter().any(|g| {
        if strength(g) != Strength::Exact {
            return false;
        }
        g.operands.iter().enumerate().any(|(i, w)| {
            is_collection(w)
                && values.iter().all(|v| names(w, v))
                && g.operands
                    .iter()
                    .enumerate()
                    .any(|(j, o)| j != i && roots.iter().any(|r| names(o, r)))
        })
    })
}

/// The name a part of a value is read from: `parsed` of `parsed["family"]`, `names` of
/// `len(names)` or `names.length`.
fn root(subject: &str) -> Option<&str> {
    let s = subject
        .strip_prefix("len(")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(subject);
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

fn is_collection(op: &str) -> bool {
    op.starts_with(['{', '[', '('])
        || ["dict(", "Map.of(", "List.of(", "listOf(", "mapOf(", "vec!["]
            .iter()
            .any(|p| op.starts_with(p))
}

#[cfg(test)]
mod tests;
