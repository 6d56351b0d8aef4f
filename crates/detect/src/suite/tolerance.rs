//! How far from its expected value an assertion lets a number be: nothing for an equality
//! (`assert x == 20.0`, `toBe(20)`), a stated or default tolerance for an approximate one
//! (`pytest.approx(20.0, abs=1e-9)`, `assertAlmostEqual(x, 20.0, places=7)`,
//! `toBeCloseTo(0.3333, 4)`, `toBeWithin(0, 10)`, `assert.InDelta(t, 0.3333, got, 1e-4)`,
//! `assertEquals(170.0, got, 1e-9)`, `isCloseTo(1.0, within(0.01))`,
//! `assert_relative_eq!(x, 1.0, epsilon = 1e-6)`), or one written by hand
//! (`abs(x - 2.0) < 1e-6`, `(a - b).abs() < 1e-4`, `math.Abs(got-want) > 1e-9` in Go's
//! `if … { t.Error }`).
//!
//! A tolerance widened by orders of magnitude passes on answers the test used to reject while
//! its count of checks stays the same: [`compare`] tells such a pair apart from one tightened or
//! restated, for `test-weakened`.

use super::Check;
use super::strength::{self, matcher};
use super::text::split_top;

/// What one assertion says about a number.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reading {
    /// The value under test: each operand that is neither the expected value nor the
    /// tolerance (both sides of a difference written by hand when neither is a number).
    subjects: Vec<String>,
    /// The expected value, when it is a number written out.
    expected: Option<f64>,
    /// The farthest a passing value may be from the expected one; 0 for equality. A relative
    /// tolerance counts against the expected value (or 1 when it is not written out).
    width: f64,
    /// The tolerance is written in the assertion (not equality, not a library's default).
    stated: bool,
}

/// What comparing an assertion's two versions found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// It now lets through values an order of magnitude or more further from the expected
    /// one, and further than rounding noise.
    Widened,
    /// The same check on the same value, with a tolerance as tight or tighter.
    Kept,
}

/// A widening smaller than this factor is a tolerance tuned, not given up.
const FACTOR: f64 = 10.0;
/// A tolerance widened to less than this share of the expected value (or of 1) still only
/// absorbs rounding.
const NOISE: f64 = 1e-3;
/// An equality made approximate is the usual mend of a float comparison, with a tolerance
/// chosen for the value (`assert.Equal(t, 4.2, x)` → `assert.InDelta(t, 4.2, x, 0.01)`): it
/// checks less only when it lets through more than this share of the expected value.
const MADE_APPROXIMATE: f64 = 1e-2;

/// The old and new versions of an assertion, when both are about a number and its tolerance
/// (and not both plain equalities, which `expectation-changed` reads): `None` when they are
/// not, or when only the expected value changed.
pub(crate) fn compare(old: &Check, new: &Check) -> Option<Change> {
    let (a, b) = (reading(old)?, reading(new)?);
    let approximate = |r: &Reading| r.stated || r.width > 0.0;
    if !(approximate(&a) || approximate(&b)) || !a.subjects.iter().any(|s| b.subjects.contains(s)) {
        return None;
    }
    // An equality made approximate at the library's default (`== pytest.approx(170.0)`,
    // `toBeCloseTo(0.3)`): the usual mend of a float comparison, whatever the default.
    let defaulted = a.width == 0.0 && !b.stated;
    let scale = b
        .expected
        .or(a.expected)
        .map(f64::abs)
        .filter(|&m| m > 0.0)
        .unwrap_or(1.0);
    let floor = if a.width == 0.0 {
        MADE_APPROXIMATE
    } else {
        NOISE
    };
    if !defaulted && b.width > a.width * FACTOR && b.width > 0.0 && b.width / scale >= floor {
        return Some(Change::Widened);
    }
    (a.expected == b.expected).then_some(Change::Kept)
}

/// The farthest from its expected value a number may be for `c` to pass (0: equality).
pub(crate) fn width(c: &Check) -> Option<f64> {
    reading(c).map(|r| r.width)
}

/// A tolerance as a reviewer reads it: `10`, `0.0001`, `5e-8`.
pub(crate) fn shown_number(x: f64) -> String {
    if (1e-4..1e6).contains(&x) {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        format!("{x:e}")
    }
}

/// Equalities that can compare a number, besides those [`strength`] knows: NUnit's
/// `Is.EqualTo`, MSTest's `AreEqual`, Hamcrest's `assertThat(x, closeTo(…))`.
const MORE_EQUAL: &[&str] = &["areequal", "equalto", "assertthat"];

/// A bound on a distance: `abs(x - 2.0) < 1e-6`, `expect(Math.abs(d)).toBeLessThan(0.01)`.
const BELOW: &[&str] = &[
    "assert<",
    "assert<=",
    "go<",
    "go<=",
    "tobelessthan",
    "tobelessthanorequal",
    "less",
    "lessorequal",
    "assertless",
    "assertlessequal",
    "islessthan",
    "islessthanorequalto",
];

/// One assertion's reading, when it is about a number and how close it must be.
pub(crate) fn reading(c: &Check) -> Option<Reading> {
    if c.negated {
        return None;
    }
    let m = matcher(c);
    let ops: Vec<&str> = c.operands.iter().map(String::as_str).collect();
    match m.as_str() {
        "assertalmostequal" | "assertalmostequals" | "failunlessalmostequal" => {
            places(&ops, "places", 0.5, 7)
        }
        "assert_almost_equal" | "assert_array_almost_equal" => {
            let decimal = if m == "assert_almost_equal" { 7 } else { 6 };
            places(&ops, "decimal", 1.5, decimal)
        }
        "assert_allclose" => close(&ops, 1e-7, 0.0, ("rtol", "atol")),
        "tobecloseto" => {
            // expect(subject).toBeCloseTo(expected, digits = 2)
            let (subject, expected) = (ops.first()?, ops.get(1)?);
            let digits = match ops.get(2) {
                Some(d) => Some(number(d)?),
                None => None,
            };
            Some(Reading {
                subjects: vec![(*subject).to_owned()],
                expected: number(expected),
                width: 0.5 * 10f64.powf(-digits.unwrap_or(2.0)),
                stated: digits.is_some(),
            })
        }
        // jest-extended: expect(subject).toBeWithin(start, end), a range around its middle.
        "tobewithin" => {
            let (subject, start, end) = (ops.first()?, ops.get(1)?, ops.get(2)?);
            let (start, end) = (number(start)?, number(end)?);
            (end >= start).then(|| Reading {
                subjects: vec![(*subject).to_owned()],
                expected: Some((start + end) / 2.0),
                width: (end - start) / 2.0,
                stated: true,
            })
        }
        // testify, PHPUnit, minitest: (expected, actual, delta).
        "indelta" | "indeltaslice" | "assertequalswithdelta" | "assert_in_delta" => {
            let (e, a) = (ops.first()?, ops.get(1)?);
            let delta = ops.get(2).map(|d| number(d));
            within(e, a, delta.unwrap_or(Some(0.001))?, delta.is_some(), false)
        }
        "inepsilon" | "assert_in_epsilon" => {
            let (e, a) = (ops.first()?, ops.get(1)?);
            let eps = ops.get(2).map(|d| number(d));
            within(e, a, eps.unwrap_or(Some(0.001))?, eps.is_some(), true)
        }
        // Hamcrest: assertThat(x, closeTo(1.0, 0.01)), read as (x, 1.0, 0.01).
        "closeto" => {
            let (subject, expected, delta) = (ops.first()?, ops.get(1)?, ops.get(2)?);
            within(expected, subject, number(delta)?, true, false)
        }
        // RSpec: expect(x).to be_within(0.01).of(2.0), read as (x, 0.01).
        "be_within" => {
            let (subject, delta) = (ops.first()?, ops.get(1)?);
            within(subject, "", number(delta)?, true, false)
        }
        // AssertJ: assertThat(x).isCloseTo(1.0, within(0.01)) / offset / withPercentage.
        "iscloseto" => {
            let (subject, expected, by) = (ops.first()?, ops.get(1)?, ops.get(2)?);
            let (width, relative) = if let Some(p) = call(by, &["withPercentage"]) {
                (number(p.first()?)? / 100.0, true)
            } else {
                let d = call(by, &["within", "offset", "byLessThan", "Offset.offset"])?;
                (number(d.first()?)?, false)
            };
            within(expected, subject, width, true, relative)
        }
        "assert_relative_eq" | "relative_eq" | "assert_abs_diff_eq" | "abs_diff_eq" => {
            let (a, b) = (ops.first()?, ops.get(1)?);
            let mut width = f64::EPSILON;
            let mut stated = false;
            for kw in &ops[2..] {
                let (k, v) = kw.split_once('=')?;
                if matches!(k, "epsilon" | "max_relative") {
                    width = width.max(number(v)?);
                    stated = true;
                }
            }
            within(a, b, width, stated, m.contains("relative"))
        }
        "assert_approx_eq" => {
            let (a, b) = (ops.first()?, ops.get(1)?);
            let eps = ops.get(2).map(|d| number(d));
            within(a, b, eps.unwrap_or(Some(1e-6))?, eps.is_some(), false)
        }
        m if BELOW.contains(&m) => distance(ops.first()?, ops.get(1)?),
        // A condition in a plain assertion: `assert!((a - b).abs() < 1e-4)`,
        // `assertTrue(Math.abs(a - b) < 1e-9)`, `assert math.isclose(x, 2.0, rel_tol=0.1)`.
        "assert" | "assert-truth" | "asserttrue" | "true" | "istrue" | "go-truth" => {
            let [op] = ops[..] else { return None };
            condition(op)
        }
        m if strength::EQUAL.contains(&m) || MORE_EQUAL.contains(&m) => equality(c, &ops),
        _ => None,
    }
}

/// A condition that bounds a distance or calls a closeness test.
fn condition(op: &str) -> Option<Reading> {
    if let Some(args) = call(op, &["math.isclose", "isclose", "cmath.isclose"]) {
        return close(&args, 1e-9, 0.0, ("rel_tol", "abs_tol"));
    }
    if let Some(args) = call(
        op,
        &[
            "np.isclose",
            "numpy.isclose",
            "np.allclose",
            "numpy.allclose",
        ],
    ) {
        return close(&args, 1e-5, 1e-8, ("rtol", "atol"));
    }
    let b = op.as_bytes();
    let mut depth = 0i32;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'<' if depth == 0 && i > 0 => {
                let rest = &op[i + 1..];
                let bound = rest.strip_prefix('=').unwrap_or(rest);
                return distance(&op[..i], bound);
            }
            _ => {}
        }
    }
    None
}

/// `abs(x - 2.0)` against `bound`.
fn distance(diff: &str, bound: &str) -> Option<Reading> {
    let width = number(bound)?;
    let inner = abs_of(diff)?;
    let parts = split_top(inner.as_bytes(), b'-');
    // `a-b`; a leading minus (`-a-b`) leaves an empty first part.
    let parts: Vec<&str> = parts
        .iter()
        .map(|r| &inner[r.clone()])
        .filter(|p| !p.is_empty())
        .collect();
    let [a, b] = parts[..] else {
        return Some(Reading {
            subjects: vec![inner.to_owned()],
            expected: None,
            width,
            stated: true,
        });
    };
    within(a, b, width, true, false)
}

/// The inside of `abs(…)`, `math.Abs(…)`, `Math.abs(…)`, `fabs(…)`, `np.abs(…)`, `(…).abs()`.
fn abs_of(op: &str) -> Option<&str> {
    if let Some(args) = call(
        op,
        &[
            "abs",
            "math.Abs",
            "Math.abs",
            "Math.Abs",
            "fabs",
            "math.fabs",
            "std::abs",
            "np.abs",
            "numpy.abs",
            "np.absolute",
        ],
    ) {
        let [inner] = args[..] else { return None };
        return Some(inner);
    }
    let inner = op.strip_suffix(".abs()")?;
    let inner = inner.strip_prefix('(')?.strip_suffix(')')?;
    Some(inner)
}

/// `a` and `b`, one perhaps the expected number, `width` apart at most (relative: a share of
/// the expected value).
fn within(a: &str, b: &str, width: f64, stated: bool, relative: bool) -> Option<Reading> {
    let (expected, subjects) = match (number(a), number(b)) {
        (Some(e), None) => (Some(e), vec![b.to_owned()]),
        (None, Some(e)) => (Some(e), vec![a.to_owned()]),
        (None, None) => (None, vec![a.to_owned(), b.to_owned()]),
        (Some(_), Some(_)) => return None,
    };
    let subjects: Vec<String> = subjects.into_iter().filter(|s| !s.is_empty()).collect();
    let width = if relative {
        width * expected.map(f64::abs).filter(|&m| m > 0.0).unwrap_or(1.0)
    } else {
        width
    };
    Some(Reading {
        subjects,
        expected,
        width,
        stated,
    })
}

/// A tolerance in decimal places: unittest's `assertAlmostEqual(a, b, places=7)` (or
/// `delta=`), numpy's `assert_almost_equal(a, b, decimal=7)`; the places may come third. Each
/// place allows `per_digit` of its unit: within `0.5e-7` for seven of unittest's.
fn places(ops: &[&str], key: &str, per_digit: f64, default: i32) -> Option<Reading> {
    let (a, b) = (ops.first()?, ops.get(1)?);
    let mut width = per_digit * 10f64.powi(-default);
    let mut stated = false;
    for (i, op) in ops.iter().enumerate().skip(2) {
        width = match op.split_once('=') {
            Some((k, p)) if k == key => per_digit * 10f64.powf(-number(p)?),
            Some(("delta", d)) => number(d)?,
            None if i == 2 => match number(op) {
                Some(p) => per_digit * 10f64.powf(-p),
                // A message.
                None => continue,
            },
            _ => continue,
        };
        stated = true;
    }
    within(a, b, width, stated, false)
}

/// `isclose(a, b, rel_tol=…, abs_tol=…)` and numpy's `rtol`/`atol`, the third and fourth
/// arguments when positional: the larger of the two tolerances.
fn close(args: &[&str], rel: f64, abs: f64, keys: (&str, &str)) -> Option<Reading> {
    let (a, b) = (args.first()?, args.get(1)?);
    let (mut rel, mut abs, mut stated) = (rel, abs, false);
    for (i, arg) in args.iter().enumerate().skip(2) {
        match arg.split_once('=') {
            Some((k, v)) if k == keys.0 => rel = number(v)?,
            Some((k, v)) if k == keys.1 => abs = number(v)?,
            Some(_) => continue,
            None if i == 2 => rel = number(arg)?,
            None if i == 3 => abs = number(arg)?,
            None => continue,
        }
        stated = true;
    }
    let mut r = within(a, b, rel, stated, true)?;
    r.width = r.width.max(abs);
    Some(r)
}

/// An equality: exact, unless its expected value is `pytest.approx(…)` (or Catch2's
/// `Approx(…)`, Hamcrest's `closeTo(…)`), or a delta follows the two values
/// (`assertEquals(170.0, got, 1e-9)`, NUnit's `Is.EqualTo(2.0).Within(0.1)`, xUnit's
/// `Assert.Equal(0.3333, got, 4)` in decimal places).
fn equality(c: &Check, ops: &[&str]) -> Option<Reading> {
    for (i, op) in ops.iter().enumerate() {
        let others = || {
            ops.iter()
                .enumerate()
                .filter(|&(j, o)| j != i && !is_message(o))
                .map(|(_, o)| (*o).to_owned())
                .collect::<Vec<_>>()
        };
        if let Some(args) = call(op, &["pytest.approx", "approx", "Approx"]) {
            return approx(&args, others());
        }
        if let Some(args) = call(op, &["closeTo", "Matchers.closeTo", "Is.closeTo"]) {
            let [e, d] = args[..] else { return None };
            let mut r = within(e, "", number(d)?, true, false)?;
            r.subjects = others();
            return Some(r);
        }
        // NUnit: Is.EqualTo(2.0).Within(0.1), read as `2.0).Within(0.1`.
        if let Some((e, d)) = op.split_once(").Within(") {
            let d = d.strip_suffix(')').unwrap_or(d);
            let (d, relative) = match d.split_once(").Percent") {
                Some((d, _)) => (d, true),
                None => (d, false),
            };
            let mut r = within(e, "", number(d)?, true, relative)?;
            r.subjects = others();
            return Some(r);
        }
    }
    let values: Vec<&str> = ops.iter().copied().filter(|o| !is_message(o)).collect();
    if let [a, b] = values[..] {
        let r = within(a, b, 0.0, false, false)?;
        return r.expected.is_some().then_some(r);
    }
    // A delta after the two values: JUnit and MSTest (a message may come first, in JUnit 4),
    // xUnit in decimal places when a whole number.
    let xunit = c.family == "Assert.Equal";
    let delta_last = xunit
        || matches!(
            matcher(c).as_str(),
            "assertequals" | "areequal" | "assertarrayequals"
        );
    let (e, a, d) = match *ops {
        [e, a, d] => (e, a, d),
        [m, e, a, d] if is_message(m) => (e, a, d),
        _ => return None,
    };
    if !delta_last || is_message(e) || is_message(a) {
        return None;
    }
    let places = xunit && !d.contains(['.', 'e', 'E']);
    let d = number(d)?;
    let width = if places { 0.5 * 10f64.powf(-d) } else { d };
    within(e, a, width, true, false)
}

/// `pytest.approx(expected, rel=None, abs=None)`: with neither, a millionth of the value (at
/// least 1e-12); with `abs` alone, `abs` only.
fn approx(args: &[&str], subjects: Vec<String>) -> Option<Reading> {
    let expected = number(args.first()?);
    let (mut rel, mut abs) = (None, None);
    for (i, arg) in args.iter().enumerate().skip(1) {
        match arg.split_once('=') {
            Some(("rel" | "epsilon", v)) => rel = Some(number(v)?),
            Some(("abs" | "margin", v)) => abs = Some(number(v)?),
            Some(_) => continue,
            None if i == 1 => rel = Some(number(arg)?),
            None if i == 2 => abs = Some(number(arg)?),
            None => continue,
        }
    }
    let scale = expected.map(f64::abs).filter(|&m| m > 0.0).unwrap_or(1.0);
    let width = match (rel, abs) {
        (None, None) => (1e-6 * scale).max(1e-12),
        (None, Some(a)) => a,
        (Some(r), None) => (r * scale).max(1e-12),
        (Some(r), Some(a)) => (r * scale).max(a),
    };
    Some(Reading {
        subjects,
        expected,
        width,
        stated: rel.is_some() || abs.is_some(),
    })
}

fn is_message(op: &str) -> bool {
    op.starts_with('"') || op.starts_with("f\"") || op.starts_with('`')
}

/// The arguments of `op` when it is a call of one of `names`: `approx(20.0,abs=1e-9)`.
fn call<'a>(op: &'a str, names: &[&str]) -> Option<Vec<&'a str>> {
    let open = op.find('(')?;
    if !names.contains(&&op[..open]) {
        return None;
    }
    let inner = op[open + 1..].strip_suffix(')')?;
    let close = super::text::match_close(op.as_bytes(), open)?;
    if close != op.len() - 1 {
        return None;
    }
    Some(
        split_top(inner.as_bytes(), b',')
            .into_iter()
            .map(|r| &inner[r])
            .filter(|a| !a.is_empty())
            .collect(),
    )
}

/// A number written out: `20.0`, `-1e-9`, `1_000`, `1e-4_f64`, `0.5f`, `1.0F`, `2d`, a float
/// type's epsilon.
fn number(op: &str) -> Option<f64> {
    let op = op.trim();
    match op {
        "f64::EPSILON"
        | "std::f64::EPSILON"
        | "Number.EPSILON"
        | "sys.float_info.epsilon"
        | "np.finfo(float).eps"
        | "math.ulp(1.0)" => return Some(f64::EPSILON),
        "f32::EPSILON" | "std::f32::EPSILON" => return Some(f64::from(f32::EPSILON)),
        _ => {}
    }
    let digits = op.trim_start_matches(['-', '+']);
    if !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let mut s: String = op.chars().filter(|&c| c != '_').collect();
    for suffix in ["f64", "f32", "f", "F", "d", "D", "m", "M", "L"] {
        if let Some(rest) = s.strip_suffix(suffix) {
            s = rest.to_owned();
            break;
        }
    }
    s.parse::<f64>().ok().filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests;
