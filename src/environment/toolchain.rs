//! The toolchain versions a repository declares, and whether the version a sandbox has
//! satisfies them.
//!
//! [`declared`] reads the root's files (`go.mod`, `.python-version`, `.nvmrc`,
//! `rust-toolchain.toml`, ...) and the operator's `[environment.toolchains]` overrides;
//! [`probe_command`] is the script that asks a sandbox what it has, [`read_probe`] reads its
//! answer, and [`satisfied`] compares the two.
//!
//! What a requirement means is told by its tool and its shape, the way each tool reads it:
//!
//! - Python: a bare version (`3.12`, from `.python-version`) matches by prefix, `3.12` any
//!   3.12.x and `3.12.1` only itself; anything else is a PEP 440 specifier set
//!   (`requires-python`: `>=3.9`, `>=3.8,<4`, `~=3.10`, `==3.11.*`).
//! - Node: an npm semver range, where a bare `20` already means any 20.x.x (`.nvmrc`, or
//!   `engines.node`: `^20.0.0`, `18.x || 20.x`, `>=14.17 <21`, `1.2 - 2.3`).
//! - Go: a minimum. Since Go 1.21 the `go` line is the least version a module needs, and a
//!   `toolchain go1.25.0` line makes an older `go` switch to at least that one.
//! - Rust: a minimum (`rust-version` is one). A numeric `rust-toolchain` channel names an exact
//!   release, which rustup would install; it is checked as a minimum too, since a newer stable
//!   compiler builds the code an older one did (Rust's stability promise).
//!
//! A requirement this module cannot read is [`satisfied`]'s `Err`: the caller reports it as
//! unreadable, never as satisfied. Nothing here panics on content, the sandbox's included.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use super::ENV_DIR;
use crate::detect::{RepoPath, Tree};

/// A toolchain whose version a repository may declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tool {
    Python,
    Node,
    Go,
    Rust,
}

/// What this module knows of a tool, one row per [`Tool`], in its order.
struct ToolInfo {
    name: &'static str,
    /// The command printing its version in the sandbox; its first word is the program.
    command: &'static str,
    /// What the version follows in that command's output (`Python 3.11.2`).
    prefix: &'static str,
    /// Whether a version satisfies a requirement, as the tool reads it.
    check: fn(&str, &Version) -> Result<bool, String>,
    /// The `sh` command installing a version meeting a requirement into the environment with
    /// the ecosystem's own installer, its programs linked into [`installed_bin`]; `None` for a
    /// requirement it cannot pass on. Absent for a tool forgeward installs no version of.
    install: Option<fn(&str) -> Option<String>>,
}

const TOOLS: [ToolInfo; 4] = [
    ToolInfo {
        name: "python",
        command: "python3 --version",
        install: None,
        prefix: "Python ",
        check: python_requirement,
    },
    ToolInfo {
        name: "node",
        command: "node --version",
        install: Some(install_node),
        prefix: "v",
        check: npm_range,
    },
    ToolInfo {
        name: "go",
        command: "go env GOVERSION",
        install: None,
        prefix: "go",
        check: go_minimum,
    },
    ToolInfo {
        name: "rust",
        command: "rustc --version",
        install: None,
        prefix: "rustc ",
        check: rust_minimum,
    },
];

impl Tool {
    /// Every tool, in order.
    pub const ALL: [Tool; 4] = [Tool::Python, Tool::Node, Tool::Go, Tool::Rust];

    fn info(self) -> &'static ToolInfo {
        &TOOLS[self as usize]
    }

    /// Its name, as `[environment.toolchains]` keys and the probe's lines spell it: `python`,
    /// `node`, `go`, `rust`.
    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    /// The ecosystem a step installing it belongs to.
    pub fn ecosystem(self) -> super::Ecosystem {
        match self {
            Tool::Python => super::Ecosystem::Python,
            Tool::Node => super::Ecosystem::Node,
            Tool::Go => super::Ecosystem::Go,
            Tool::Rust => super::Ecosystem::Rust,
        }
    }

    /// The tool of a name [`Tool::as_str`] gives.
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// The command printing its version in the sandbox: `python3 --version` (`Python 3.11.2`),
    /// `node --version` (`v20.20.2`), `go env GOVERSION` (`go1.19.8`), `rustc --version`
    /// (`rustc 1.95.0 (…)`).
    pub fn version_command(self) -> &'static str {
        self.info().command
    }

    /// The program the version command runs.
    fn program(self) -> &'static str {
        let command = self.info().command;
        command.split(' ').next().unwrap_or(command)
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A release version, as the sandbox's tools report theirs (a pre-release is read as its
/// release: `go1.21rc2` as 1.21.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// The first component: 3 of 3.11.2.
    pub major: u64,
    /// The second: 11 of 3.11.2.
    pub minor: u64,
    /// The third: 2 of 3.11.2 (0 where the tool gives two).
    pub patch: u64,
}

impl Version {
    /// The version of up to three components, the missing ones 0.
    fn from_parts(parts: &[u64]) -> Version {
        let at = |i: usize| parts.get(i).copied().unwrap_or(0);
        Version {
            major: at(0),
            minor: at(1),
            patch: at(2),
        }
    }

    fn parts(&self) -> [u64; 3] {
        [self.major, self.minor, self.patch]
    }

    /// Whether its first components are `parts` (`3.12.4` starts with `3.12`).
    fn starts_with(&self, parts: &[u64]) -> bool {
        parts.len() <= 3 && self.parts().iter().zip(parts).all(|(a, b)| a == b)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A toolchain version a repository wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// The toolchain it is for.
    pub tool: Tool,
    /// The requirement as written: `>=3.9`, `1.25.0`, `go1.22.3`, `20`, `^20.0.0`.
    pub requirement: String,
    /// Where it is written, for people: `go.mod: go 1.25.0`, `.nvmrc`,
    /// `pyproject.toml requires-python`.
    pub source: String,
}

/// Where a requirement may be written, for one tool, in the order they are asked: the first
/// that names a version is the tool's requirement.
type Source = fn(&dyn Tree) -> Option<Wanted>;

const SOURCES: &[(Tool, Source)] = &[
    (Tool::Python, python_version_file),
    (Tool::Python, requires_python),
    (Tool::Node, |tree| node_version_file(tree, ".nvmrc")),
    (Tool::Node, |tree| node_version_file(tree, ".node-version")),
    (Tool::Node, engines_node),
    (Tool::Go, |tree| go_mod(tree, "toolchain")),
    (Tool::Go, |tree| go_mod(tree, "go")),
    (Tool::Rust, rust_toolchain_toml),
    (Tool::Rust, rust_toolchain_legacy),
    (Tool::Rust, cargo_rust_version),
];

/// The toolchain versions a repository declares, one per tool at most, in [`Tool`]'s order.
///
/// `overrides` are `.forgeward.toml`'s `[environment.toolchains]` (`go = "1.22"`): an override
/// replaces what the files say for its tool and is taken as written (an unreadable one is
/// [`satisfied`]'s `Err`); a key that names no tool is the configuration's to report, and is
/// passed over here. Otherwise the root's files are asked in order, and the first that names a
/// version wins: a file naming none (`.nvmrc` `lts/*`, `.python-version` `system` or
/// `pypy3.10`, a `stable` or `nightly` channel) gives way to the next source
/// (`rust-toolchain.toml` `stable` beside a `rust-version` gives that minimum). A file that
/// does not parse names nothing.
pub fn declared(tree: &dyn Tree, overrides: &BTreeMap<String, String>) -> Vec<Wanted> {
    let mut wanted: BTreeMap<Tool, Wanted> = BTreeMap::new();
    for (key, value) in overrides {
        if let Some(tool) = Tool::from_name(key) {
            let source = format!(".forgeward.toml [environment.toolchains] {key}");
            wanted.insert(tool, want(tool, value.trim(), source));
        }
    }
    for &(tool, source) in SOURCES {
        if !wanted.contains_key(&tool)
            && let Some(found) = source(tree)
        {
            wanted.insert(tool, found);
        }
    }
    wanted.into_values().collect()
}

fn want(tool: Tool, requirement: &str, source: impl Into<String>) -> Wanted {
    Wanted {
        tool,
        requirement: requirement.to_string(),
        source: source.into(),
    }
}

fn read_text(tree: &dyn Tree, name: &str) -> Option<String> {
    String::from_utf8(tree.read(&RepoPath::from(name))?).ok()
}

fn read_toml(tree: &dyn Tree, name: &str) -> Option<toml::Table> {
    read_text(tree, name)?.parse().ok()
}

/// The first line of a file, trimmed, if not empty.
fn first_line(tree: &dyn Tree, name: &str) -> Option<String> {
    let text = read_text(tree, name)?;
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_string())
}

/// A non-empty string at a path of tables.
fn toml_str<'a>(doc: &'a toml::Table, path: &[&str]) -> Option<&'a str> {
    let (last, tables) = path.split_last()?;
    let mut table = doc;
    for key in tables {
        table = table.get(*key)?.as_table()?;
    }
    let value = table.get(*last)?.as_str()?.trim();
    (!value.is_empty()).then_some(value)
}

/// `.python-version`'s first line, when it is a version (`3.12`, `3.12.1`; not `system`,
/// `pypy3.10`, `3.12.1/envs/x`).
fn python_version_file(tree: &dyn Tree) -> Option<Wanted> {
    let line = first_line(tree, ".python-version")?;
    exact_parts(&line)?;
    Some(want(Tool::Python, &line, ".python-version"))
}

fn requires_python(tree: &dyn Tree) -> Option<Wanted> {
    let doc = read_toml(tree, "pyproject.toml")?;
    let spec = toml_str(&doc, &["project", "requires-python"])?;
    Some(want(Tool::Python, spec, "pyproject.toml requires-python"))
}

/// `.nvmrc` or `.node-version`, when it is a version (`20`, `v20.1.0`; not `lts/*`, `node`).
fn node_version_file(tree: &dyn Tree, name: &str) -> Option<Wanted> {
    let line = first_line(tree, name)?;
    exact_parts(line.strip_prefix('v').unwrap_or(&line))?;
    Some(want(Tool::Node, &line, name))
}

fn engines_node(tree: &dyn Tree) -> Option<Wanted> {
    let json: serde_json::Value = serde_json::from_str(&read_text(tree, "package.json")?).ok()?;
    let range = json.get("engines")?.get("node")?.as_str()?.trim();
    (!range.is_empty()).then(|| want(Tool::Node, range, "package.json engines.node"))
}

/// `go.mod`'s first `directive` line (`go 1.21`, `toolchain go1.22.3`), `//` comments aside.
fn go_mod(tree: &dyn Tree, directive: &str) -> Option<Wanted> {
    let text = read_text(tree, "go.mod")?;
    text.lines().find_map(|line| {
        let code = line.split("//").next().unwrap_or(line);
        let mut words = code.split_whitespace();
        let (Some(word), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return None;
        };
        (word == directive).then(|| want(Tool::Go, value, format!("go.mod: {directive} {value}")))
    })
}

/// A numeric `rust-toolchain` channel (`1.80`, `1.80.0`); `stable`, `beta`, `nightly-…` name
/// no version.
fn numeric_channel(channel: &str) -> Option<&str> {
    exact_parts(channel).map(|_| channel)
}

fn rust_toolchain_toml(tree: &dyn Tree) -> Option<Wanted> {
    let doc = read_toml(tree, "rust-toolchain.toml")?;
    let channel = numeric_channel(toml_str(&doc, &["toolchain", "channel"])?)?;
    Some(want(Tool::Rust, channel, "rust-toolchain.toml channel"))
}

/// The legacy `rust-toolchain` file: the channel alone, or the same TOML as
/// `rust-toolchain.toml`.
fn rust_toolchain_legacy(tree: &dyn Tree) -> Option<Wanted> {
    let text = read_text(tree, "rust-toolchain")?;
    let from_toml = text.parse::<toml::Table>().ok();
    let channel = match &from_toml {
        Some(doc) => toml_str(doc, &["toolchain", "channel"])?,
        None => text.lines().next()?.trim(),
    };
    Some(want(
        Tool::Rust,
        numeric_channel(channel)?,
        "rust-toolchain",
    ))
}

fn cargo_rust_version(tree: &dyn Tree) -> Option<Wanted> {
    let doc = read_toml(tree, "Cargo.toml")?;
    let (version, source) = match toml_str(&doc, &["package", "rust-version"]) {
        Some(v) => (v, "Cargo.toml rust-version"),
        None => (
            toml_str(&doc, &["workspace", "package", "rust-version"])?,
            "Cargo.toml workspace.package.rust-version",
        ),
    };
    Some(want(Tool::Rust, version, source))
}

// ---------------------------------------------------------------------------------------------
// Versions

/// The output of a version command longer than this is not one.
const MAX_LINE: usize = 512;

/// The numeric components at the start of `text` (up to three, `.`-separated), and what
/// follows them. `None` when a component overflows.
fn leading_parts(text: &str) -> Option<(Vec<u64>, &str)> {
    let mut parts = Vec::new();
    let mut rest = text;
    while parts.len() < 3 {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            break;
        }
        parts.push(number(&rest[..digits])?);
        rest = &rest[digits..];
        match rest.strip_prefix('.') {
            Some(after) if after.starts_with(|c: char| c.is_ascii_digit()) => rest = after,
            _ => break,
        }
    }
    Some((parts, rest))
}

/// A component: ASCII digits only (`str::parse` would take `+1`).
fn number(text: &str) -> Option<u64> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| text.parse().ok()).flatten()
}

/// A version of one to three numeric components and nothing else (`3`, `3.12`, `3.12.1`).
fn exact_parts(text: &str) -> Option<Vec<u64>> {
    match leading_parts(text)? {
        (parts, "") if !parts.is_empty() => Some(parts),
        _ => None,
    }
}

fn unreadable(requirement: &str) -> String {
    format!("`{requirement}` is not a version requirement this check can read")
}

/// The version a tool's [`Tool::version_command`] printed (its first line), or `None` when it
/// printed none (a shim that found no toolchain, an error).
pub fn parse_available(tool: Tool, output: &str) -> Option<Version> {
    let line = output.lines().next()?.trim();
    if line.len() > MAX_LINE {
        return None;
    }
    let (parts, rest) = leading_parts(line.strip_prefix(tool.info().prefix)?)?;
    // `go1.21` and `go1.21rc2` are whole versions; `go1.21.` or `3x` are not.
    let whole = rest.is_empty() || rest.starts_with(|c: char| !c.is_ascii_digit() && c != '.');
    (parts.len() >= 2 && whole).then(|| Version::from_parts(&parts))
}

/// Whether `available` satisfies `wanted`, as `wanted`'s tool reads the requirement (see the
/// module's documentation). `Err` says why the requirement cannot be read.
pub fn satisfied(wanted: &Wanted, available: &Version) -> Result<bool, String> {
    match wanted.requirement.trim() {
        // npm would read an empty range as any version; here it says nothing.
        "" => Err("the requirement is empty".to_string()),
        requirement => (wanted.tool.info().check)(requirement, available),
    }
}

fn go_minimum(requirement: &str, available: &Version) -> Result<bool, String> {
    let version = requirement.strip_prefix("go").unwrap_or(requirement);
    // A pre-release (`1.21rc1`) comes before its release: 1.21.0 satisfies it.
    let (parts, rest) = leading_parts(version).ok_or_else(|| unreadable(requirement))?;
    let pre_release = ["rc", "beta"].iter().any(|p| {
        rest.strip_prefix(p)
            .is_some_and(|n| exact_parts(n).is_some())
    });
    if parts.is_empty() || !(rest.is_empty() || pre_release) {
        return Err(unreadable(requirement));
    }
    Ok(*available >= Version::from_parts(&parts))
}

fn rust_minimum(requirement: &str, available: &Version) -> Result<bool, String> {
    let parts = exact_parts(requirement).ok_or_else(|| unreadable(requirement))?;
    Ok(*available >= Version::from_parts(&parts))
}

/// Python: a bare version matches by prefix (`.python-version`), anything else is PEP 440.
fn python_requirement(requirement: &str, available: &Version) -> Result<bool, String> {
    if requirement.starts_with(|c: char| c.is_ascii_digit()) {
        let parts = exact_parts(requirement).ok_or_else(|| unreadable(requirement))?;
        return Ok(available.starts_with(&parts));
    }
    pep440(requirement, available)
}

/// Compares a version with up to three components, the missing ones 0 (PEP 440's padding).
fn compare(available: &Version, parts: &[u64]) -> Ordering {
    available.cmp(&Version::from_parts(parts))
}

/// PEP 440's comparison operators, longest first so that `<=` is not read as `<`.
const PEP440_OPS: &[&str] = &["===", "~=", "==", "!=", "<=", ">=", "<", ">"];

/// A PEP 440 specifier set, the subset release versions need: `>=`, `<=`, `>`, `<`, `==`,
/// `!=`, `~=`, wildcards after `==` and `!=` (`==3.11.*`), clauses joined by `,` (and).
fn pep440(spec: &str, available: &Version) -> Result<bool, String> {
    let mut all = true;
    for clause in spec.split(',').map(str::trim) {
        let op = PEP440_OPS
            .iter()
            .find(|op| clause.starts_with(**op))
            .ok_or_else(|| unreadable(spec))?;
        let version = clause[op.len()..].trim();
        let (version, wildcard) = match version.strip_suffix(".*") {
            Some(prefix) => (prefix, true),
            None => (version, false),
        };
        let parts = exact_parts(version).ok_or_else(|| unreadable(spec))?;
        let order = compare(available, &parts);
        let holds = match (*op, wildcard) {
            ("==", true) => available.starts_with(&parts),
            ("!=", true) => !available.starts_with(&parts),
            ("==", false) => order == Ordering::Equal,
            ("!=", false) => order != Ordering::Equal,
            ("<=", false) => order != Ordering::Greater,
            (">=", false) => order != Ordering::Less,
            ("<", false) => order == Ordering::Less,
            (">", false) => order == Ordering::Greater,
            // `~=3.10` is `>=3.10, ==3.*`; it needs two components at least.
            ("~=", false) if parts.len() >= 2 => {
                order != Ordering::Less && available.starts_with(&parts[..parts.len() - 1])
            }
            // `===` (arbitrary equality), `~=3`, a wildcard after another operator.
            _ => return Err(unreadable(spec)),
        };
        all &= holds;
    }
    Ok(all)
}

/// One bound of an npm range, after its sugar (`^`, `~`, `x`, hyphens) is taken apart.
#[derive(Clone, Copy)]
enum Bound {
    AtLeast(Version),
    Above(Version),
    Below(Version),
    AtMost(Version),
    Exactly(Version),
    /// Matches nothing (`>*`, `<*`, `<0.0.0`).
    Never,
}

impl Bound {
    fn holds(self, v: &Version) -> bool {
        match self {
            Bound::AtLeast(b) => *v >= b,
            Bound::Above(b) => *v > b,
            Bound::Below(b) => *v < b,
            Bound::AtMost(b) => *v <= b,
            Bound::Exactly(b) => *v == b,
            Bound::Never => false,
        }
    }
}

/// The version after a partial one in its last given component: `1.2` → 1.3.0, `1` → 2.0.0.
fn next_after(parts: &[u64]) -> Version {
    let mut bumped = parts.to_vec();
    if let Some(last) = bumped.last_mut() {
        *last = last.saturating_add(1);
    }
    Version::from_parts(&bumped)
}

/// A partial version of an npm range, its given components before any wildcard: `1.2.x`,
/// `1.2`, `v1.2.3`, `*`. A pre-release or build (`1.2.3-beta`) is not read.
fn npm_partial(text: &str) -> Option<Vec<u64>> {
    let text = text.strip_prefix(['v', '=']).unwrap_or(text);
    let mut parts = Vec::new();
    let mut wild = false;
    for piece in text.split('.') {
        if matches!(piece, "x" | "X" | "*") {
            wild = true;
        } else if wild || parts.len() == 3 {
            return None;
        } else {
            parts.push(number(piece)?);
        }
    }
    (text.split('.').count() <= 3).then_some(parts)
}

/// The operators an npm comparator may start with, longest first.
const NPM_OPS: &[&str] = &[">=", "<=", "~>", ">", "<", "=", "~", "^"];

/// One npm comparator (`>=1.2`, `^20.0.0`, `~1.2`, `1.x`) as bounds.
fn npm_comparator(token: &str) -> Option<Vec<Bound>> {
    let op = NPM_OPS
        .iter()
        .find(|op| token.starts_with(**op))
        .copied()
        .unwrap_or("");
    let parts = npm_partial(token[op.len()..].trim())?;
    let n = parts.len();
    let floor = Version::from_parts(&parts);
    let next = next_after(&parts);
    let bounds = match (op, n) {
        (_, 0) if matches!(op, ">" | "<") => vec![Bound::Never],
        (_, 0) => Vec::new(),
        ("" | "=", 3) => vec![Bound::Exactly(floor)],
        ("" | "=", _) => vec![Bound::AtLeast(floor), Bound::Below(next)],
        ("~" | "~>", 1) => vec![Bound::AtLeast(floor), Bound::Below(next)],
        ("~" | "~>", _) => vec![Bound::AtLeast(floor), Bound::Below(next_after(&parts[..2]))],
        ("^", _) => {
            // The first non-zero component is the one that may not change (all zeros: the
            // last given one): ^1.2.3 <2.0.0, ^0.2.3 <0.3.0, ^0.0.3 <0.0.4, ^0.0 <0.1.0.
            let fixed = parts.iter().position(|&p| p != 0).unwrap_or(n - 1);
            vec![
                Bound::AtLeast(floor),
                Bound::Below(next_after(&parts[..=fixed])),
            ]
        }
        (">", 3) => vec![Bound::Above(floor)],
        (">", _) => vec![Bound::AtLeast(next)],
        (">=", _) => vec![Bound::AtLeast(floor)],
        ("<", _) => vec![Bound::Below(floor)],
        ("<=", 3) => vec![Bound::AtMost(floor)],
        ("<=", _) => vec![Bound::Below(next)],
        _ => return None,
    };
    Some(bounds)
}

/// One alternative of an npm range (between `||`s) as bounds that must all hold.
fn npm_alternative(text: &str) -> Option<Vec<Bound>> {
    let text = text.trim();
    // A hyphen range: `1.2 - 2.3` is `>=1.2.0 <2.4.0`, `1.2.3 - 2.3.4` is `>=1.2.3 <=2.3.4`.
    if let Some((low, high)) = text.split_once(" - ") {
        let low = npm_partial(low.trim())?;
        let high = npm_partial(high.trim())?;
        let mut bounds = vec![Bound::AtLeast(Version::from_parts(&low))];
        match high.len() {
            0 => {}
            3 => bounds.push(Bound::AtMost(Version::from_parts(&high))),
            _ => bounds.push(Bound::Below(next_after(&high))),
        }
        return Some(bounds);
    }
    let mut bounds = Vec::new();
    let mut pending = String::new();
    for word in text.split_whitespace() {
        pending.push_str(word);
        // An operator alone (`>= 18`) belongs to the next word.
        if word.chars().all(|c| "<>=~^".contains(c)) {
            continue;
        }
        bounds.extend(npm_comparator(&pending)?);
        pending.clear();
    }
    pending.is_empty().then_some(bounds)
}

/// An npm semver range, the subset release versions need: `>=`, `<=`, `>`, `<`, `=`, `^`,
/// `~`, `x`/`X`/`*` wildcards, hyphen ranges, spaces (and), `||` (or).
fn npm_range(range: &str, available: &Version) -> Result<bool, String> {
    let alternatives = range
        .split("||")
        .map(npm_alternative)
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| unreadable(range))?;
    Ok(alternatives
        .iter()
        .any(|bounds| bounds.iter().all(|b| b.holds(available))))
}

// ---------------------------------------------------------------------------------------------
// Installing a version the sandbox lacks

/// Where installed toolchains' programs are linked, inside the sandbox: first on every
/// sandbox's `PATH` once the environment is kept, so the installed version is the one found.
pub fn installed_bin() -> String {
    format!("/workspace/{ENV_DIR}/bin")
}

/// The command installing a version meeting `wanted` into the environment (through the egress
/// gateway: the setup's network), or why there is none: the tool has no installer here, or
/// its requirement cannot be passed on.
pub fn install_command(wanted: &Wanted) -> Result<String, String> {
    let Some(install) = wanted.tool.info().install else {
        return Err(format!(
            "forgeward installs no {} version: the sandbox's image or host must provide it",
            wanted.tool
        ));
    };
    install(wanted.requirement.trim())
        .ok_or_else(|| format!("{:?} cannot be passed to the installer", wanted.requirement))
}

/// Node.js by npm, from the registry the setup's npm is configured with: the
/// `node-linux-<arch>` package, which holds the release's `node` executable, installed under
/// the environment and linked into [`installed_bin`]. Later steps and runs find npm's own
/// scripts run by it (npm starts with `#!/usr/bin/env node`).
fn install_node(requirement: &str) -> Option<String> {
    let range = requirement.strip_prefix('v').unwrap_or(requirement);
    // Only what an npm range is made of; anything else is no version npm would resolve.
    if range.is_empty()
        || !range
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " .<>=~^|*-".contains(c))
    {
        return None;
    }
    let dir = format!("/workspace/{ENV_DIR}/toolchains/node");
    let bin = installed_bin();
    Some(format!(
        "arch=$(uname -m | sed 's/^x86_64$/x64/; s/^aarch64$/arm64/') \
         && npm install --prefix {dir} --no-save --no-audit --no-fund --loglevel=error \"node-linux-$arch@{range}\" \
         && mkdir -p {bin} \
         && ln -sf \"../toolchains/node/node_modules/node-linux-$arch/bin/node\" {bin}/node"
    ))
}

// ---------------------------------------------------------------------------------------------
// Asking the sandbox

/// What each of the probe's lines starts with.
const PROBE_PREFIX: &str = "forgeward-toolchain ";

/// One `sh` script printing, for each tool, `forgeward-toolchain <tool> <first line of its
/// version command>`, or `forgeward-toolchain <tool> missing` when the program is not on
/// PATH. Run where the tests run: a directory's `rust-toolchain.toml` or `.python-version` may
/// change which version a shim (rustup, pyenv) answers with.
pub fn probe_command(tools: &[Tool]) -> String {
    tools
        .iter()
        .map(|tool| {
            let (name, program, command) = (tool.as_str(), tool.program(), tool.version_command());
            format!(
                "if command -v {program} >/dev/null 2>&1; then \
                 printf '{PROBE_PREFIX}{name} %s\\n' \"$({command} 2>&1 | head -n 1)\"; \
                 else echo '{PROBE_PREFIX}{name} missing'; fi"
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The versions a [`probe_command`]'s output reports, by tool: `None` for a tool missing or
/// whose version could not be read; a tool without a line is absent. Lines that are not the
/// probe's are passed over, and where a tool has several lines the first counts.
pub fn read_probe(output_lines: &[String]) -> BTreeMap<Tool, Option<Version>> {
    let mut found = BTreeMap::new();
    for line in output_lines.iter().filter(|l| l.len() <= MAX_LINE) {
        let Some(rest) = line.trim_end().strip_prefix(PROBE_PREFIX) else {
            continue;
        };
        let (name, said) = rest.split_once(' ').unwrap_or((rest, ""));
        if let Some(tool) = Tool::from_name(name) {
            let version = (said != "missing")
                .then(|| parse_available(tool, said))
                .flatten();
            found.entry(tool).or_insert(version);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::MemTree;

    fn tree(files: &[(&str, &str)]) -> MemTree {
        MemTree(
            files
                .iter()
                .map(|(p, c)| (RepoPath::from(*p), c.as_bytes().to_vec()))
                .collect(),
        )
    }

    fn found(files: &[(&str, &str)]) -> Vec<(Tool, String, String)> {
        declared(&tree(files), &BTreeMap::new())
            .into_iter()
            .map(|w| (w.tool, w.requirement, w.source))
            .collect()
    }

    fn v(text: &str) -> Version {
        let parts = exact_parts(text).expect("a version");
        Version::from_parts(&parts)
    }

    fn check(tool: Tool, requirement: &str, available: &str) -> Result<bool, String> {
        let wanted = want(tool, requirement, "test");
        satisfied(&wanted, &v(available))
    }

    fn yes(tool: Tool, requirement: &str, available: &str) {
        assert_eq!(
            check(tool, requirement, available),
            Ok(true),
            "{requirement} vs {available}"
        );
    }

    fn no(tool: Tool, requirement: &str, available: &str) {
        assert_eq!(
            check(tool, requirement, available),
            Ok(false),
            "{requirement} vs {available}"
        );
    }

    fn unread(tool: Tool, requirement: &str) {
        assert!(check(tool, requirement, "1.2.3").is_err(), "{requirement}");
    }

    #[test]
    fn go_mod_toolchain_line_wins_over_go_line() {
        let go_mod = "module x\n\ngo 1.21 // minimum\n\ntoolchain go1.22.3\n";
        assert_eq!(
            found(&[("go.mod", go_mod)]),
            [(
                Tool::Go,
                "go1.22.3".into(),
                "go.mod: toolchain go1.22.3".into()
            )]
        );
        let go_mod = "module x\n// go 1.99\ngo 1.25.0\nrequire (\n\tgolang.org/x/go v1.0.0\n)\n";
        assert_eq!(
            found(&[("go.mod", go_mod)]),
            [(Tool::Go, "1.25.0".into(), "go.mod: go 1.25.0".into())]
        );
    }

    #[test]
    fn go_requirements_are_minimums() {
        no(Tool::Go, "1.21", "1.19.8");
        yes(Tool::Go, "1.21", "1.21.0");
        yes(Tool::Go, "1.21", "1.22.1");
        yes(Tool::Go, "go1.22.3", "1.22.3");
        no(Tool::Go, "go1.22.3", "1.22.2");
        yes(Tool::Go, "1.21rc1", "1.21.0");
        no(Tool::Go, "1.21rc1", "1.20.9");
        unread(Tool::Go, "go1.21-custom");
        unread(Tool::Go, "latest");
        unread(Tool::Go, "");
    }

    #[test]
    fn python_version_file_wins_and_names_must_be_versions() {
        let pyproject = "[project]\nrequires-python = \">=3.9\"\n";
        assert_eq!(
            found(&[
                (".python-version", "3.12\n3.11\n"),
                ("pyproject.toml", pyproject)
            ]),
            [(Tool::Python, "3.12".into(), ".python-version".into())]
        );
        for name in ["pypy3.10", "system", "3.12.1/envs/x", "3.12-dev", ""] {
            assert_eq!(
                found(&[(".python-version", name), ("pyproject.toml", pyproject)]),
                [(
                    Tool::Python,
                    ">=3.9".into(),
                    "pyproject.toml requires-python".into()
                )],
                "{name}"
            );
        }
        assert!(found(&[("pyproject.toml", "[project\nrequires-python = '>=3'")]).is_empty());
    }

    #[test]
    fn python_bare_versions_match_by_prefix() {
        yes(Tool::Python, "3.12", "3.12.1");
        no(Tool::Python, "3.12", "3.13.0");
        no(Tool::Python, "3.1", "3.12.0");
        yes(Tool::Python, "3.12.1", "3.12.1");
        no(Tool::Python, "3.12.1", "3.12.2");
        unread(Tool::Python, "3.12.1.4");
        unread(Tool::Python, "3.x");
    }

    #[test]
    fn pep440_operators() {
        yes(Tool::Python, ">=3.9", "3.11.2");
        no(Tool::Python, ">=3.9", "3.8.10");
        no(Tool::Python, "<3.11", "3.11.2");
        yes(Tool::Python, "<3.11", "3.10.12");
        yes(Tool::Python, "<=3.11", "3.11.0");
        no(Tool::Python, "<=3.11", "3.11.2");
        yes(Tool::Python, ">3.11", "3.11.2");
        no(Tool::Python, ">3.11", "3.11.0");
        yes(Tool::Python, ">=3.8,<4", "3.12.0");
        no(Tool::Python, ">=3.8, <4", "4.0.0");
        yes(Tool::Python, "~=3.10", "3.12.0");
        no(Tool::Python, "~=3.10", "3.9.0");
        no(Tool::Python, "~=3.10", "4.0.0");
        yes(Tool::Python, "~=3.10.1", "3.10.4");
        no(Tool::Python, "~=3.10.1", "3.11.0");
        yes(Tool::Python, "==3.11.*", "3.11.2");
        no(Tool::Python, "==3.11.*", "3.12.0");
        no(Tool::Python, "==3.11", "3.11.2");
        yes(Tool::Python, "==3.11", "3.11.0");
        yes(Tool::Python, "!=3.10.*", "3.11.0");
        no(Tool::Python, "!=3.10.*", "3.10.5");
        no(Tool::Python, ">=3.8,!=3.11.2", "3.11.2");
        unread(Tool::Python, "~=3");
        unread(Tool::Python, ">=3.*");
        unread(Tool::Python, "===3.11.2");
        unread(Tool::Python, ">=3.9,");
        unread(Tool::Python, "=>3.9");
        unread(Tool::Python, ">=3.12rc1");
        unread(Tool::Python, "python3");
    }

    #[test]
    fn node_version_files_and_engines() {
        assert_eq!(
            found(&[(".nvmrc", "v20.1.0\n"), (".node-version", "18")]),
            [(Tool::Node, "v20.1.0".into(), ".nvmrc".into())]
        );
        let package = r#"{"engines": {"node": ">=18"}}"#;
        for alias in ["lts/*", "lts/hydrogen", "node", "stable"] {
            assert_eq!(
                found(&[(".nvmrc", alias), ("package.json", package)]),
                [(
                    Tool::Node,
                    ">=18".into(),
                    "package.json engines.node".into()
                )],
                "{alias}"
            );
            assert!(found(&[(".nvmrc", alias)]).is_empty());
        }
        assert_eq!(
            found(&[(".node-version", "20"), ("package.json", "{not json")]),
            [(Tool::Node, "20".into(), ".node-version".into())]
        );
        assert!(found(&[("package.json", r#"{"engines": {"node": 18}}"#)]).is_empty());
    }

    #[test]
    fn npm_ranges() {
        yes(Tool::Node, "20", "20.20.2");
        no(Tool::Node, "20", "21.0.0");
        yes(Tool::Node, "v20.1.0", "20.1.0");
        no(Tool::Node, "v20.1.0", "20.1.1");
        yes(Tool::Node, "^20.0.0", "20.20.2");
        no(Tool::Node, "^20.0.0", "21.0.0");
        no(Tool::Node, "^20.1.0", "20.0.9");
        yes(Tool::Node, "^0.2.3", "0.2.9");
        no(Tool::Node, "^0.2.3", "0.3.0");
        no(Tool::Node, "^0.0.3", "0.0.4");
        yes(Tool::Node, "~1.2.3", "1.2.9");
        no(Tool::Node, "~1.2.3", "1.3.0");
        yes(Tool::Node, "~1", "1.9.0");
        yes(Tool::Node, "18.x || 20.x", "20.1.0");
        no(Tool::Node, "18.x || 20.x", "19.0.0");
        yes(Tool::Node, ">=14.17 <21", "20.9.0");
        no(Tool::Node, ">=14.17 <21", "21.0.0");
        no(Tool::Node, ">=14.17 <21", "14.16.1");
        yes(Tool::Node, ">= 18", "18.0.0");
        yes(Tool::Node, ">18", "19.0.0");
        no(Tool::Node, ">18", "18.5.0");
        yes(Tool::Node, "<=18", "18.9.9");
        no(Tool::Node, "<=18.2.0", "18.2.1");
        yes(Tool::Node, "=20.0.0", "20.0.0");
        yes(Tool::Node, "1.2 - 2.3", "2.3.9");
        no(Tool::Node, "1.2 - 2.3", "2.4.0");
        no(Tool::Node, "1.2.3 - 2.3.4", "2.3.5");
        yes(Tool::Node, "*", "0.1.0");
        yes(Tool::Node, "20.X.x", "20.3.0");
        no(Tool::Node, ">*", "1.0.0");
        unread(Tool::Node, "lts/*");
        unread(Tool::Node, "^20.0.0-beta.1");
        unread(Tool::Node, "20.x.1");
        unread(Tool::Node, ">=18 ||| 20");
        unread(Tool::Node, "1.2.3.4");
        unread(Tool::Node, ">=");
        unread(Tool::Node, "+20");
        unread(Tool::Node, "");
        unread(Tool::Python, "  ");
    }

    #[test]
    fn rust_channels_and_rust_version() {
        assert_eq!(
            found(&[
                ("rust-toolchain.toml", "[toolchain]\nchannel = \"1.80\"\n"),
                ("Cargo.toml", "[package]\nrust-version = \"1.70\"\n"),
            ]),
            [(
                Tool::Rust,
                "1.80".into(),
                "rust-toolchain.toml channel".into()
            )]
        );
        for channel in ["stable", "nightly-2024-05-01", "beta"] {
            let toml = format!("[toolchain]\nchannel = \"{channel}\"\n");
            assert!(
                found(&[("rust-toolchain.toml", &toml)]).is_empty(),
                "{channel}"
            );
            assert!(
                found(&[("rust-toolchain", channel)]).is_empty(),
                "{channel}"
            );
        }
        // A channel naming no version gives way to the manifest's minimum.
        assert_eq!(
            found(&[
                ("rust-toolchain.toml", "[toolchain]\nchannel = \"stable\"\n"),
                (
                    "Cargo.toml",
                    "[workspace.package]\nrust-version = \"1.74\"\n"
                ),
            ]),
            [(
                Tool::Rust,
                "1.74".into(),
                "Cargo.toml workspace.package.rust-version".into()
            )]
        );
        assert_eq!(
            found(&[("rust-toolchain", "1.79.0\n")]),
            [(Tool::Rust, "1.79.0".into(), "rust-toolchain".into())]
        );
        assert_eq!(
            found(&[("rust-toolchain", "[toolchain]\nchannel = \"1.78\"\n")]),
            [(Tool::Rust, "1.78".into(), "rust-toolchain".into())]
        );
        assert!(
            found(&[(
                "Cargo.toml",
                "[package]\nrust-version = { workspace = true }\n"
            )])
            .is_empty()
        );
        // An exact channel is checked as a minimum: a newer stable builds it.
        yes(Tool::Rust, "1.80", "1.95.0");
        yes(Tool::Rust, "1.80.0", "1.80.0");
        no(Tool::Rust, "1.80", "1.79.9");
        unread(Tool::Rust, "stable");
        unread(Tool::Rust, ">=1.70");
    }

    #[test]
    fn overrides_win_over_files_and_unknown_keys_are_passed_over() {
        let overrides: BTreeMap<String, String> =
            [("go", " 1.22 "), ("ruby", "3.3"), ("node", "lts/*")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let got = declared(
            &tree(&[("go.mod", "go 1.19\n"), (".python-version", "3.11")]),
            &overrides,
        );
        let got: Vec<(Tool, &str, &str)> = got
            .iter()
            .map(|w| (w.tool, w.requirement.as_str(), w.source.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (Tool::Python, "3.11", ".python-version"),
                (
                    Tool::Node,
                    "lts/*",
                    ".forgeward.toml [environment.toolchains] node"
                ),
                (
                    Tool::Go,
                    "1.22",
                    ".forgeward.toml [environment.toolchains] go"
                ),
            ]
        );
        assert!(declared(&tree(&[]), &BTreeMap::new()).is_empty());
    }

    #[test]
    fn available_versions_from_each_command() {
        assert_eq!(
            parse_available(Tool::Python, "Python 3.11.2\n"),
            Some(v("3.11.2"))
        );
        assert_eq!(parse_available(Tool::Node, "v20.20.2"), Some(v("20.20.2")));
        assert_eq!(parse_available(Tool::Go, "go1.19.8"), Some(v("1.19.8")));
        assert_eq!(parse_available(Tool::Go, "go1.21rc2"), Some(v("1.21.0")));
        assert_eq!(
            parse_available(Tool::Rust, "rustc 1.95.0 (f2d3ce0bd 2026-03-21)"),
            Some(v("1.95.0"))
        );
        assert_eq!(
            parse_available(Tool::Rust, "rustc 1.80.0-nightly (x)"),
            Some(v("1.80.0"))
        );
        // The wrong tool's output, errors, garbage.
        assert_eq!(parse_available(Tool::Python, "v20.1.0"), None);
        assert_eq!(parse_available(Tool::Go, "devel go1.22-abc"), None);
        assert_eq!(
            parse_available(Tool::Rust, "error: no default toolchain"),
            None
        );
        assert_eq!(
            parse_available(Tool::Node, "v99999999999999999999999.1"),
            None
        );
        assert_eq!(parse_available(Tool::Node, "v20"), None);
        assert_eq!(parse_available(Tool::Node, ""), None);
        assert_eq!(
            parse_available(Tool::Node, &format!("v1.2.{}", "9".repeat(600))),
            None
        );
        assert_eq!(Version::from_parts(&[3, 11, 2]).to_string(), "3.11.2");
    }

    #[test]
    fn probe_script_and_its_answer() {
        let script = probe_command(&[Tool::Python, Tool::Go]);
        assert_eq!(
            script,
            "if command -v python3 >/dev/null 2>&1; then printf 'forgeward-toolchain python %s\\n' \
             \"$(python3 --version 2>&1 | head -n 1)\"; else echo 'forgeward-toolchain python missing'; fi\n\
             if command -v go >/dev/null 2>&1; then printf 'forgeward-toolchain go %s\\n' \
             \"$(go env GOVERSION 2>&1 | head -n 1)\"; else echo 'forgeward-toolchain go missing'; fi"
        );
        let lines: Vec<String> = [
            "noise from a profile",
            "forgeward-toolchain python Python 3.11.2\r",
            "forgeward-toolchain python Python 9.9.9",
            "forgeward-toolchain node missing",
            "forgeward-toolchain go rustup: command failed",
            "forgeward-toolchain ruby 3.3.0",
            "forgeward-toolchain rust",
            " forgeward-toolchain rust rustc 1.0.0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let got = read_probe(&lines);
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            [
                (Tool::Python, Some(v("3.11.2"))),
                (Tool::Node, None),
                (Tool::Go, None),
                (Tool::Rust, None),
            ]
        );
        assert!(read_probe(&["forgeward-toolchain ".repeat(100)]).is_empty());
    }

    #[test]
    fn tool_names_and_commands() {
        let names: Vec<&str> = Tool::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(names, ["python", "node", "go", "rust"]);
        assert_eq!(Tool::from_name("go"), Some(Tool::Go));
        assert_eq!(Tool::from_name("Go"), None);
        assert_eq!(Tool::Rust.version_command(), "rustc --version");
        assert_eq!(Tool::Go.program(), "go");
    }

    #[test]
    fn node_is_installed_by_npm_from_the_range_declared_and_other_tools_are_not() {
        let node = |requirement: &str| install_command(&want(Tool::Node, requirement, ".nvmrc"));
        let command = node("v22").expect("a command");
        assert!(
            command.contains("npm install --prefix /workspace/.forgeward-env/toolchains/node")
                && command.contains("\"node-linux-$arch@22\"")
                && command.ends_with(" /workspace/.forgeward-env/bin/node"),
            "{command}"
        );
        assert!(node("^20.1.0 || >=22").is_ok_and(|c| c.contains("@^20.1.0 || >=22\"")));
        // Nothing npm would read as a range, and nothing the shell would expand.
        for unusable in ["lts/iron", "22$(id)", "22\"", ""] {
            assert!(node(unusable).is_err(), "{unusable:?}");
        }
        let go = install_command(&want(Tool::Go, "1.25.0", "go.mod: go 1.25.0"));
        assert_eq!(
            go,
            Err(
                "forgeward installs no go version: the sandbox's image or host must provide it"
                    .to_owned()
            )
        );
        assert_eq!(
            installed_bin(),
            format!("/workspace/{ENV_DIR}/bin"),
            "first on PATH (plan::path_prefix)"
        );
    }
}
