//! Mock expectations, read as checks: Mockery, PHPUnit and Prophecy in PHP, Mocha in Ruby.

use std::ops::Range;

use super::super::text::{self, Source};
use super::{Check, chain, hash, make, sense};

/// Calls on a mock that only configure it: it answers, it allows protected methods, it ignores
/// what it was not told about. They check nothing.
fn mock_configures(name: &str) -> bool {
    matches!(name, "allows" | "stubs")
        || [
            "shouldAllowMocking",
            "shouldIgnoreMissing",
            "shouldDeferMissing",
        ]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Whether `name` sets up a mock's expectation or configuration: the start of the next one in
/// a chain.
fn mock_maker(name: &str) -> bool {
    matches!(name, "expects" | "allows" | "stubs")
        || name
            .strip_prefix("should")
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// A mock's expectation counts once per occurrence, when it can fail the test:
/// Mockery's `expects('m')` and `shouldReceive('m')` with a call count (`once()`, `times(2)`,
/// `never()`, `atLeast()`…), PHPUnit's `expects($this->once())` (not `any()`),
/// `shouldNotReceive`, the spies' `shouldHaveReceived`, Prophecy's `shouldBeCalled`, Mocha's
/// `expects(:m)`. A stub (`allows`, `stubs`, `shouldReceive` without a count, or with
/// `zeroOrMoreTimes()`) and the mock's configuration weigh nothing, but are read, so that no
/// name among them is taken for a check. The check spans only the call that sets it up, so an
/// assertion inside a later `with(…)` is read on its own.
pub(super) fn expectation(src: &Source<'_>, start: usize) -> Option<(Check, Range<usize>)> {
    let m = &src.masked;
    let c = chain(src, start)?;
    let maker = c.segments.first()?.0.clone();
    // Where the setting-up call ends: past its arguments.
    let name_at = (start..c.span.end).find(|&i| m[i].is_ascii_alphabetic())?;
    let after_name = text::skip_ws(m, text::ident_at(m, name_at).end);
    let own_end = match m.get(after_name) {
        Some(b'(') => src.args(after_name).map_or(after_name, |(_, end)| end),
        _ => after_name,
    };
    let mut family = Vec::new();
    let mut negated = false;
    let mut operands = Vec::new();
    let mut modifiers = Vec::new();
    for (i, (name, args)) in c.segments.iter().enumerate() {
        if i > 0 && mock_maker(name) {
            break;
        }
        let (n, neg) = sense(name);
        negated ^= neg;
        if i > 0 {
            modifiers.push(name.as_str());
        }
        family.push(n);
        operands.extend(args.iter().map(|a| src.norm(a.clone())));
    }
    let counted = modifiers.iter().any(|n| {
        matches!(
            *n,
            "once" | "twice" | "times" | "never" | "atLeast" | "atMost" | "between"
        )
    });
    let stub = modifiers
        .iter()
        .any(|n| matches!(*n, "zeroOrMoreTimes" | "any_number_of_times"));
    let weight = match maker.as_str() {
        _ if stub || mock_configures(&maker) => 0,
        "shouldReceive" => usize::from(counted),
        // PHPUnit's `expects($this->any())` is a stub.
        "expects" => usize::from(!operands.first().is_some_and(|o| o.ends_with("any()"))),
        _ => 1,
    };
    let family = family.join(".");
    let key = hash(&format!("mock {family}({})", operands.join(",")));
    let mut check = make(src, start..c.span.end, family, negated, operands);
    check.key = key;
    check.weight = weight;
    check.vacuous = false;
    Some((check, start..own_end))
}
