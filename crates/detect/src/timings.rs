//! Where a check's time goes: per rule, and per reading the rules share (lexing, indexing
//! lines, the test model), in CPU time summed over every thread, when a caller asks for it
//! (`forgeward check --timings`).
//!
//! Each span is the thread's own CPU time, not the clock: on a loaded machine a thread that
//! waits for a core would otherwise count the wait, and the shares would add up to more than
//! the process spent. Off by default, when it costs one relaxed load per pass. The figures are process-wide, so
//! that the threads a caller spreads files over add to the same totals without handing
//! anything back; a process that checks several ranges reads the sum of them all.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::Rule;

static ON: AtomicBool = AtomicBool::new(false);

/// Room for every rule: `Rule`'s discriminants are its indices (tested).
const RULE_SLOTS: usize = 32;

static RULES: [AtomicU64; RULE_SLOTS] = [const { AtomicU64::new(0) }; RULE_SLOTS];
static SHARED: [AtomicU64; Shared::ALL.len()] = [const { AtomicU64::new(0) }; Shared::ALL.len()];

/// A reading that no one rule owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// Two versions of a file diffed line by line.
    LineDiff,
    /// A version of a file lexed. Its views (masked, comments only) are made on first use, so
    /// most of their cost counts to the reader that asks first: the test model or a rule.
    Lexing,
    /// A masked version indexed by line for the line rules.
    Indexing,
    /// The occurrences the line rules found, judged new or lost.
    Occurrences,
    /// Both versions of a test file read into the test model, and compared.
    TestModel,
    /// The whole change judged at once ([`crate::Detector::finish`]), the rules' passes across
    /// the change included (which count to their rules as well).
    Finish,
}

impl Shared {
    pub const ALL: [Shared; 6] = [
        Shared::LineDiff,
        Shared::Lexing,
        Shared::Indexing,
        Shared::Occurrences,
        Shared::TestModel,
        Shared::Finish,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shared::LineDiff => "line diff",
            Shared::Lexing => "lexing",
            Shared::Indexing => "line index",
            Shared::Occurrences => "occurrences",
            Shared::TestModel => "test model",
            Shared::Finish => "across the change",
        }
    }
}

/// Starts counting, for the rest of the process.
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The calling thread's CPU time so far, in nanoseconds.
fn thread_cpu() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the struct it is handed.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return 0;
    }
    (t.tv_sec as u64) * 1_000_000_000 + t.tv_nsec as u64
}

fn add(slot: &AtomicU64, since: u64) {
    slot.fetch_add(thread_cpu().saturating_sub(since), Ordering::Relaxed);
}

/// Runs `f`, counting its time to `rule` when counting is on.
pub(crate) fn rule<T>(rule: Rule, f: impl FnOnce() -> T) -> T {
    if !on() {
        return f();
    }
    let start = thread_cpu();
    let out = f();
    add(&RULES[rule as usize], start);
    out
}

/// Runs `f`, counting its time to `reading` when counting is on.
pub fn shared<T>(reading: Shared, f: impl FnOnce() -> T) -> T {
    if !on() {
        return f();
    }
    let start = thread_cpu();
    let out = f();
    add(&SHARED[reading as usize], start);
    out
}

/// What was counted so far, most costly first.
pub struct Counted {
    /// Each rule that took any time.
    pub rules: Vec<(Rule, Duration)>,
    /// Each shared reading.
    pub shared: Vec<(Shared, Duration)>,
}

/// What was counted so far.
pub fn counted() -> Counted {
    let read = |slot: &AtomicU64| Duration::from_nanos(slot.load(Ordering::Relaxed));
    let mut rules: Vec<(Rule, Duration)> = Rule::all()
        .map(|r| (r, read(&RULES[r as usize])))
        .filter(|(_, d)| !d.is_zero())
        .collect();
    rules.sort_by_key(|r| std::cmp::Reverse(r.1));
    let mut shared: Vec<(Shared, Duration)> = Shared::ALL
        .iter()
        .map(|&s| (s, read(&SHARED[s as usize])))
        .collect();
    shared.sort_by_key(|s| std::cmp::Reverse(s.1));
    Counted { rules, shared }
}

#[cfg(test)]
mod tests {
    use super::{RULE_SLOTS, Shared};
    use crate::Rule;

    #[test]
    fn every_rule_and_reading_has_a_slot_of_its_own() {
        for (i, r) in Rule::all().enumerate() {
            assert_eq!(r as usize, i, "{r}");
            assert!(i < RULE_SLOTS, "{r}");
        }
        for (i, s) in Shared::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "{s:?}");
        }
    }
}
