//! Literals as code writes them: numbers, strings, booleans, null and collections of them,
//! read from a token range, with what makes one distinctive.

use crate::rules::tokens::{Kind, Tokens};

/// A literal value, as code writes it.
#[derive(Clone, Debug)]
pub(crate) enum Lit {
    Num {
        text: String,
        value: Option<f64>,
    },
    Str(Vec<u8>),
    /// The start of a string an input is asked to begin with (`s.startswith("EDUC")`).
    Prefix(Vec<u8>),
    Bool(bool),
    Null,
    Seq(Vec<Lit>),
}

impl PartialEq for Lit {
    fn eq(&self, other: &Lit) -> bool {
        match (self, other) {
            (Lit::Num { text: a, value: x }, Lit::Num { text: b, value: y }) => match (x, y) {
                (Some(x), Some(y)) => x == y,
                _ => a == b,
            },
            (Lit::Str(a), Lit::Str(b)) | (Lit::Prefix(a), Lit::Prefix(b)) => a == b,
            // A test's string that begins with the prefix is an input the branch answers.
            (Lit::Prefix(p), Lit::Str(s)) | (Lit::Str(s), Lit::Prefix(p)) => s.starts_with(p),
            (Lit::Seq(a), Lit::Seq(b)) => a == b,
            (Lit::Bool(a), Lit::Bool(b)) => a == b,
            _ => false,
        }
    }
}

/// Addresses with a meaning of their own (every interface, loopback, broadcast): code that maps
/// one to another (`"0.0.0.0"` → `"127.0.0.1"`, to connect where a server listens) names a
/// convention, not a test's input.
const WELL_KNOWN_ADDRESSES: &[&str] = &[
    "0.0.0.0",
    "127.0.0.1",
    "localhost",
    "::",
    "::1",
    "[::]",
    "[::1]",
    "255.255.255.255",
];

/// Words that spell a yes, a no or nothing: code that reads them (`if answer == "true"`) is
/// parsing a setting or a flag, not singling out a test's input.
const BOOLEAN_WORDS: &[&str] = &[
    "true",
    "false",
    "yes",
    "no",
    "on",
    "off",
    "null",
    "none",
    "nil",
    "undefined",
];

impl Lit {
    /// Distinctive enough that code comparing with it is looking for that one input.
    pub(super) fn distinctive(&self) -> bool {
        match self {
            Lit::Num { value, .. } => value.is_none_or(|v| {
                // -2..=2 and their halves: boundaries and base cases.
                !(v.abs() <= 2.0 && (v * 2.0).fract() == 0.0)
            }),
            Lit::Str(s) => {
                let s = String::from_utf8_lossy(s);
                s.chars().count() >= 3
                    && s != "__main__"
                    && !WELL_KNOWN_ADDRESSES.contains(&s.as_ref())
                    && !BOOLEAN_WORDS.contains(&s.to_ascii_lowercase().as_str())
                    && s.chars().any(char::is_alphanumeric)
            }
            // A start that reads as data (`"EDUC"`, `"SKU1"`); a word (`"http"`, `"Bearer"`)
            // or a mark (`"#"`) names a kind of input, not one input.
            Lit::Prefix(p) => {
                p.len() >= 4
                    && p.iter().all(u8::is_ascii_alphanumeric)
                    && (p.iter().any(u8::is_ascii_digit) || !p.iter().any(u8::is_ascii_lowercase))
            }
            Lit::Seq(items) => {
                !items.is_empty() && (items.len() >= 2 || items.iter().any(Lit::distinctive))
            }
            Lit::Bool(_) | Lit::Null => false,
        }
    }

    /// An input no program's logic singles out for a yes-or-no answer: a number from 10 up
    /// that is not round, a power of two, an HTTP status or a year (`49`, `561`), or a string
    /// of six or more letters and digits, a digit among them, broken by a separator other than
    /// a dot (`"2024-02-30"`, not `"127.0.0.1"` or `"v1.2.3"`).
    pub(super) fn datum(&self) -> bool {
        match self {
            Lit::Num { value: Some(v), .. } => {
                let n = v.abs();
                v.fract() == 0.0
                    && n >= 10.0
                    && n % 10.0 != 0.0
                    && !(n as u64).is_power_of_two()
                    && !(100.0..600.0).contains(&n)
                    && !(1900.0..=2100.0).contains(&n)
            }
            Lit::Str(s) => {
                let alnum = s.iter().filter(|c| c.is_ascii_alphanumeric()).count();
                alnum >= 6
                    && s.iter().any(u8::is_ascii_digit)
                    && s.iter().any(|c| b"-/:_ ".contains(c))
            }
            _ => false,
        }
    }

    /// Unmistakably test data: no program's vocabulary looks like this.
    pub(super) fn unmistakable(&self) -> bool {
        match self {
            Lit::Str(s) => {
                s.windows(2).any(|w| w == b"**") || s.iter().any(|c| b"*+^()[]{}=<>".contains(c))
            }
            Lit::Num { value: Some(v), .. } => {
                if v.fract() != 0.0 {
                    // 3.14159, 2.718: three decimals or more.
                    let shown = format!("{v}");
                    shown.split('.').nth(1).is_some_and(|d| d.len() >= 3)
                } else {
                    let n = v.abs();
                    let round = n % 10.0 == 0.0 || (n as u64).is_power_of_two();
                    let status = (100.0..600.0).contains(&n);
                    let year = (1900.0..=2100.0).contains(&n);
                    (100.0..1e15).contains(&n) && !round && !status && !year
                }
            }
            Lit::Seq(items) => items.len() >= 3 && items.iter().any(Lit::distinctive),
            _ => false,
        }
    }

    /// A constant a test can be seen expecting.
    pub(super) fn matchable(&self) -> bool {
        !matches!(self, Lit::Bool(_) | Lit::Null) && self.distinctive()
    }

    /// Whether a branch returning it answers something (`None`, `""`, `[]` are guards).
    pub(super) fn answers(&self) -> bool {
        match self {
            Lit::Null => false,
            Lit::Str(s) => !s.is_empty(),
            Lit::Seq(items) => !items.is_empty(),
            _ => true,
        }
    }

    /// The bytes a test file must contain to hold this literal (a quick filter).
    pub(super) fn needle(&self) -> Option<Vec<u8>> {
        match self {
            Lit::Num { text, .. } => Some(text.as_bytes().to_vec()),
            Lit::Str(s) | Lit::Prefix(s) => Some(s.clone()),
            Lit::Seq(items) => items.iter().filter_map(Lit::needle).max_by_key(Vec::len),
            _ => None,
        }
    }

    /// A test's literal `t` is this constant: equal, or a float written to fewer decimals.
    pub(super) fn expected_by(&self, t: &Lit) -> bool {
        if self == t {
            return true;
        }
        let (
            Lit::Num { value: Some(c), .. },
            Lit::Num {
                text,
                value: Some(v),
            },
        ) = (self, t)
        else {
            return false;
        };
        let Some(decimals) = text
            .split('.')
            .nth(1)
            .map(|d| d.trim_end_matches(|c: char| !c.is_ascii_digit()).len())
        else {
            return false;
        };
        decimals >= 2 && (c - v).abs() <= 0.5 * 10f64.powi(-(decimals as i32)) + f64::EPSILON
    }
}

/// Wrappers that keep a literal a literal: `Ok(…)`, `Some(…)`, `String::from(…)`, `List.of(…)`.
pub(super) const WRAPPERS: &[&str] = &[
    "Ok",
    "Some",
    "Right",
    "Just",
    "tuple",
    "list",
    "set",
    "frozenset",
    "listOf",
    "setOf",
    "arrayOf",
    "mutableListOf",
    "intArrayOf",
    "array",
    "Decimal",
    "BigDecimal",
    "Integer",
    "Long",
    "Double",
    "float",
    "int",
    "str",
    "String",
    "Number",
    "Array",
];
pub(super) const QUALIFIED_WRAPPERS: &[(&str, &str)] = &[
    ("String", "from"),
    ("List", "of"),
    ("Set", "of"),
    ("Arrays", "asList"),
    ("Array", "of"),
    ("BigDecimal", "valueOf"),
    ("Map", "of"),
];
/// Conversions after a literal that keep it a literal: `"x".to_string()`, `42.into()`.
pub(super) const CONVERSIONS: &[&str] = &[
    "to_string",
    "to_owned",
    "into",
    "to_vec",
    "toString",
    "ToString",
    "freeze",
    "to_sym",
    "to_f",
    "to_i",
    "to_s",
];

/// The literal `a..b` spells, if it is one.
pub(super) fn literal(t: &Tokens<'_>, a: usize, b: usize) -> Option<Lit> {
    let (mut a, mut b) = t.trim_newlines(a, b);
    if a >= b {
        return None;
    }
    while t.is(a, "&") || t.is(a, "new") || t.is(a, "+") {
        a += 1;
    }
    // `"x".to_string()`, `.into()`, Ruby `.freeze`.
    loop {
        if b >= a + 4
            && t.is(b - 1, ")")
            && t.pair(b - 1) == Some(b - 2)
            && t.is(b - 4, ".")
            && CONVERSIONS.iter().any(|w| t.is(b - 3, w))
        {
            b -= 4;
        } else if b >= a + 3
            && ((t.is(b - 2, ".") && CONVERSIONS.iter().any(|w| t.is(b - 1, w)))
                || (t.is(b - 2, "as") && t.kind(b - 1) == Some(Kind::Ident)))
        {
            b -= 2;
        } else {
            break;
        }
    }
    if a >= b {
        return None;
    }
    if b == a + 1 {
        return match t.kind(a)? {
            Kind::Str if t.toks[a].plain => Some(Lit::Str(t.content(a).to_vec())),
            Kind::Num => Some(number(t.text(a), false)),
            Kind::Ident => match t.text(a) {
                b"true" | b"True" | b"TRUE" => Some(Lit::Bool(true)),
                b"false" | b"False" | b"FALSE" => Some(Lit::Bool(false)),
                b"None" | b"null" | b"nil" | b"undefined" | b"nullptr" | b"NULL" => Some(Lit::Null),
                _ => None,
            },
            _ => None,
        };
    }
    if b == a + 2 && t.is(a, "-") && t.kind(a + 1) == Some(Kind::Num) {
        return Some(number(t.text(a + 1), true));
    }
    // Bracketed collections, possibly after a constructor.
    let mut open = a;
    if WRAPPERS.iter().any(|w| t.is(open, w)) && t.is(open + 1, "(") {
        open += 1;
    } else if QUALIFIED_WRAPPERS.iter().any(|(x, y)| {
        t.is(open, x) && (t.is(open + 1, ".") || t.is(open + 1, "::")) && t.is(open + 2, y)
    }) && t.is(open + 3, "(")
    {
        open += 3;
    } else if t.is(open, "vec") && t.is(open + 1, "!") {
        open += 2;
    } else if t.is(open, "[") && t.pair(open) == Some(open + 1) {
        // Go `[]int{…}`, C# `new[] {…}`, Java `new int[] {…}` (after `new`).
        open += 2;
        while open < b && (t.kind(open) == Some(Kind::Ident) || t.is(open, ".")) {
            open += 1;
        }
    } else if t.kind(open) == Some(Kind::Ident)
        && t.is(open + 1, "[")
        && t.pair(open + 1) == Some(open + 2)
    {
        open += 3;
    }
    if !t.opener(open) || t.pair(open) != Some(b - 1) {
        return None;
    }
    let wrapped = open != a;
    let inner = (open + 1, b - 1);
    let parts: Vec<(usize, usize)> = t
        .split(inner.0, inner.1, |k| t.is(k, ","))
        .into_iter()
        .map(|(x, y)| t.trim_newlines(x, y))
        .filter(|(x, y)| x < y)
        .collect();
    let mut items = Vec::new();
    for (x, y) in parts {
        // `key: value` and `key => value` pairs of a map literal.
        if let Some(sep) = t.find(x, y, |k| t.is(k, ":") || t.is(k, "=>")) {
            items.push(Lit::Seq(vec![literal(t, x, sep)?, literal(t, sep + 1, y)?]));
        } else {
            items.push(literal(t, x, y)?);
        }
    }
    if wrapped && items.len() == 1 && !t.is(open, "[") && !t.is(open, "{") {
        // `Ok(42)`, `Some("x")`, `float(3)`: the one value inside.
        return items.pop();
    }
    Some(Lit::Seq(items))
}

pub(super) fn number(text: &[u8], negative: bool) -> Lit {
    let s = String::from_utf8_lossy(text).replace('_', "");
    let lower = s.to_ascii_lowercase();
    let value = if let Some(hex) = lower.strip_prefix("0x") {
        u64::from_str_radix(hex.trim_end_matches(['u', 'l']), 16)
            .ok()
            .map(|v| v as f64)
    } else {
        strip_type_suffix(&lower).parse::<f64>().ok()
    };
    let value = value.map(|v| if negative { -v } else { v });
    let text = if negative { format!("-{s}") } else { s };
    Lit::Num { text, value }
}

/// `42u32`, `1.5f64`, `10L`, `2.0f`, `3m`: the number without its type.
pub(super) fn strip_type_suffix(s: &str) -> &str {
    for suffix in [
        "usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8",
        "f64", "f32", "ul", "lu", "l", "u", "f", "d", "m", "n",
    ] {
        if let Some(rest) = s.strip_suffix(suffix)
            && rest.ends_with(|c: char| c.is_ascii_digit() || c == '.' || c == '_')
        {
            return rest.trim_end_matches('_');
        }
    }
    s
}

pub(super) fn shown_lit(l: &Lit) -> String {
    let s = match l {
        Lit::Num { text, .. } => text.clone(),
        Lit::Str(s) => format!("\"{}\"", String::from_utf8_lossy(s)),
        Lit::Prefix(s) => format!("\"{}…\"", String::from_utf8_lossy(s)),
        Lit::Bool(v) => v.to_string(),
        Lit::Null => "null".to_owned(),
        Lit::Seq(items) => format!(
            "[{}]",
            items.iter().map(shown_lit).collect::<Vec<_>>().join(", ")
        ),
    };
    const MAX: usize = 40;
    match s.char_indices().nth(MAX) {
        Some((k, _)) => format!("{}…", &s[..k]),
        None => s,
    }
}
