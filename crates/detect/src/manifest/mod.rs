//! Dependency manifests: which packages a project declares, and the names they are imported by.
//!
//! This module owns parsing dependency manifests (pip requirements files, `pyproject.toml`,
//! `setup.cfg`, `Pipfile`, `package.json`) into the dependency names they declare, and telling
//! the top-level module names each dependency can be imported as (`PyYAML` is imported as `yaml`).
//! The `shadow-module` rule uses it to notice a new local file or package that would hide a real
//! dependency. It does no IO: it is handed the path and contents of one file at a time.

mod import_names;

use super::change::RepoPath;
use forgeward_text::{line_column, one_line};
use import_names::{PYTHON_IMPORT_NAMES, PYTHON_NAMESPACE_PREFIXES};

/// The package ecosystem a dependency belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ecosystem {
    Python,
    Node,
}

/// One dependency declared in a manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependency {
    /// The distribution name as written in the manifest (e.g. "PyYAML", "@types/node", "lodash").
    pub name: String,
    pub ecosystem: Ecosystem,
    /// The manifest it was declared in.
    pub manifest: RepoPath,
}

/// A one-line reason a manifest could not be read, e.g.
/// "pyproject.toml: TOML parse error at line 3, column 7: ...".
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct ManifestError {
    pub path: RepoPath,
    pub reason: String,
}

/// The manifest formats this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A pip requirements file.
    Requirements,
    PyProject,
    SetupCfg,
    Pipfile,
    PackageJson,
}

impl Kind {
    fn of(path: &RepoPath) -> Option<Kind> {
        // A vendored package's manifest declares that package's dependencies, not the project's.
        if path.dirs().any(|d| d == b"node_modules".as_slice()) {
            return None;
        }
        let name = path.file_name();
        match name {
            b"pyproject.toml" => return Some(Kind::PyProject),
            b"setup.cfg" => return Some(Kind::SetupCfg),
            b"Pipfile" => return Some(Kind::Pipfile),
            b"package.json" => return Some(Kind::PackageJson),
            _ => {}
        }
        let lower = name.to_ascii_lowercase();
        if lower.len() > 4 && lower.ends_with(b".txt") {
            let in_requirements_dir = path.dirs().any(|d| d.eq_ignore_ascii_case(b"requirements"));
            let named_requirements = lower.windows(12).any(|w| w == b"requirements");
            if in_requirements_dir || named_requirements {
                return Some(Kind::Requirements);
            }
        }
        None
    }
}

/// True when the file at `path` is a manifest this module reads: `pyproject.toml`, `setup.cfg`,
/// `Pipfile`, `package.json`, any `*.txt` whose name contains "requirements"
/// (`requirements.txt`, `requirements-dev.txt`, `dev-requirements.txt`) and any `*.txt` inside a
/// directory named `requirements/`. Anything under a `node_modules/` directory is not.
pub fn is_manifest(path: &RepoPath) -> bool {
    Kind::of(path).is_some()
}

/// Parses one manifest. Never panics; a file that does not parse is an Err (the caller skips it
/// with a warning). A requirements file or `setup.cfg` never fails: lines that cannot be read are
/// skipped.
pub fn parse(path: &RepoPath, content: &[u8]) -> Result<Vec<Dependency>, ManifestError> {
    let fail = |reason: String| ManifestError {
        path: path.clone(),
        reason,
    };
    let Some(kind) = Kind::of(path) else {
        return Err(fail(
            "not a dependency manifest this module reads".to_owned(),
        ));
    };
    let content = content.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(content);
    let (names, ecosystem) = match kind {
        Kind::Requirements => (
            requirements_names(&String::from_utf8_lossy(content)),
            Ecosystem::Python,
        ),
        Kind::SetupCfg => (
            setup_cfg_names(&String::from_utf8_lossy(content)),
            Ecosystem::Python,
        ),
        Kind::PyProject => (
            pyproject_names(&parse_toml(content).map_err(fail)?),
            Ecosystem::Python,
        ),
        Kind::Pipfile => (
            pipfile_names(&parse_toml(content).map_err(fail)?),
            Ecosystem::Python,
        ),
        Kind::PackageJson => (package_json_names(content).map_err(fail)?, Ecosystem::Node),
    };
    let mut deps: Vec<Dependency> = Vec::with_capacity(names.len());
    for name in names {
        if !deps.iter().any(|d| d.name == name) {
            deps.push(Dependency {
                name,
                ecosystem,
                manifest: path.clone(),
            });
        }
    }
    Ok(deps)
}

/// Normalises a module or distribution name for comparison: lowercase, `-` and `.` become `_`.
pub fn normalize(name: &str) -> String {
    name.to_lowercase().replace(['-', '.'], "_")
}

/// The normalised top-level module names a dependency can be imported as. Always includes the
/// normalised distribution name; adds the known import name where it differs (PyYAML → yaml,
/// beautifulsoup4 → bs4, scikit-learn → sklearn, Pillow → PIL (normalised: "pil"),
/// python-dateutil → dateutil, …). For Node, scoped packages (`@scope/x`) give no names (a local
/// file cannot be imported as a scoped name); `@types/x` gives nothing.
pub fn import_names(dep: &Dependency) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        let n = normalize(name);
        if !n.is_empty() && !out.contains(&n) {
            out.push(n);
        }
    };
    match dep.ecosystem {
        Ecosystem::Node => {
            if !dep.name.starts_with('@') {
                add(&dep.name);
            }
        }
        Ecosystem::Python => {
            let norm = normalize(&dep.name);
            add(&norm);
            // The general rules: `python-X` is imported as `X`; `X-binary` and `X-headless` are
            // builds of `X`.
            let mut candidates = vec![norm.clone()];
            if let Some(rest) = norm.strip_prefix("python_").filter(|r| !r.is_empty()) {
                candidates.push(rest.to_owned());
            }
            for suffix in ["_binary", "_headless"] {
                if let Some(base) = norm.strip_suffix(suffix).filter(|b| !b.is_empty()) {
                    candidates.push(base.to_owned());
                }
            }
            for c in &candidates {
                add(c);
                if let Some((_, names)) = PYTHON_IMPORT_NAMES.iter().find(|(d, _)| d == c) {
                    for n in *names {
                        add(n);
                    }
                }
            }
            // Namespace packages shared by a family of distributions.
            for (prefix, module) in PYTHON_NAMESPACE_PREFIXES {
                if norm.starts_with(prefix) {
                    add(module);
                }
            }
            // A dotted distribution (`zope.interface`, `ruamel.yaml`, `discord.py`) is usually
            // imported by its first component.
            if let Some((first, _)) = dep.name.split_once('.')
                && !first.is_empty()
            {
                add(first);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Requirement strings (pip requirements lines and PEP 508 strings)
// ---------------------------------------------------------------------------------------------

/// The distribution names in a pip requirements file.
fn requirements_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in join_continuations(text) {
        let line = strip_comment(&line);
        if let Some(name) = requirement_name(line) {
            names.push(name.to_owned());
        }
    }
    names
}

/// Joins lines ending in `\` with the next one, as pip does. A comment line ends a continuation.
fn join_continuations(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let is_comment = line.trim_start().starts_with('#');
        match line.strip_suffix('\\') {
            Some(head) if !is_comment => {
                pending.push_str(head);
            }
            _ => {
                pending.push_str(line);
                out.push(std::mem::take(&mut pending));
            }
        }
    }
    if !pending.is_empty() {
        out.push(pending);
    }
    out
}

/// Cuts a pip comment: a `#` at the start of the line or after whitespace, to the end of the
/// line. A `#` inside a word (a URL's `#egg=` fragment) is kept.
fn strip_comment(line: &str) -> &str {
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        if c == '#' && prev_space {
            return &line[..i];
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// The distribution name a single requirement names: a PEP 508 string (`name[extras] >= 1;
/// marker`, `name @ url`), a pip option line (`-e url#egg=name`), a URL or a path (`#egg=name`, or
/// an archive's file name). None for anything else (other options, local paths, unreadable
/// lines).
fn requirement_name(line: &str) -> Option<&str> {
    let s = line.trim();
    if s.is_empty() {
        return None;
    }
    if let Some(option) = s.strip_prefix('-') {
        // Only an editable install names a package; `-r`, `-c`, `--index-url`, `--hash`… do not.
        let target = option
            .strip_prefix("-editable")
            .or_else(|| option.strip_prefix('e'))?;
        let target = target.trim_start_matches(|c: char| c.is_whitespace() || c == '=');
        return url_or_path_name(target);
    }
    let first_token = s.split(|c: char| c.is_whitespace() || c == ';').next()?;
    if archive_name(first_token).is_some() && !first_token.contains(['[', '<', '>', '=', '!', '~'])
    {
        return url_or_path_name(s);
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .unwrap_or(s.len());
    let (name, rest) = s.split_at(end);
    if is_name(name) {
        let spaced = rest.starts_with(char::is_whitespace);
        let rest = rest.trim_start();
        let ok = rest.is_empty()
            || rest.starts_with(['[', '(', '<', '>', '=', '!', '~', ';', '@', ','])
            || (spaced && rest.starts_with(['-', '#']));
        if ok {
            return Some(name);
        }
    }
    url_or_path_name(s)
}

/// True when `s` is a valid distribution name (PEP 508): ASCII letters, digits, `.`, `_`, `-`,
/// starting and ending with a letter or digit.
fn is_name(s: &str) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        }
        _ => false,
    }
}

/// The name a URL or path requirement installs: its `#egg=name` fragment, or the distribution
/// named by a wheel or sdist file name. None for a plain local directory or VCS URL.
fn url_or_path_name(s: &str) -> Option<&str> {
    let token = s.split(char::is_whitespace).next()?;
    if let Some(i) = token.find("#egg=").or_else(|| token.find("&egg=")) {
        let frag = &token[i + 5..];
        let end = frag
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            .unwrap_or(frag.len());
        let name = frag[..end].trim_end_matches(['.', '_', '-']);
        return is_name(name).then_some(name);
    }
    let without_fragment = token.split(['#', '?']).next()?;
    archive_name(without_fragment)
}

/// The distribution named by an archive's file name (last path component of `s`): a wheel
/// (`name-1.0-py3-none-any.whl`) or an sdist (`name-1.0.tar.gz`).
fn archive_name(s: &str) -> Option<&str> {
    let file = s.rsplit(['/', '\\']).next()?;
    let lower = file.to_ascii_lowercase();
    if lower.ends_with(".whl") {
        let name = file.split('-').next()?;
        return is_name(name).then_some(name);
    }
    let stem_len = [".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tar", ".zip"]
        .iter()
        .find(|ext| lower.ends_with(*ext))
        .map(|ext| file.len() - ext.len())?;
    let stem = file.get(..stem_len)?;
    // The version starts at the last `-` followed by a digit.
    let split = stem
        .match_indices('-')
        .map(|(i, _)| i)
        .rfind(|&i| stem[i + 1..].starts_with(|c: char| c.is_ascii_digit()))?;
    let name = &stem[..split];
    is_name(name).then_some(name)
}

// ---------------------------------------------------------------------------------------------
// TOML manifests: pyproject.toml, Pipfile
// ---------------------------------------------------------------------------------------------

fn parse_toml(content: &[u8]) -> Result<toml::Table, String> {
    let text = std::str::from_utf8(content)
        .map_err(|e| format!("not valid UTF-8 (at byte {})", e.valid_up_to()))?;
    toml::from_str::<toml::Table>(text).map_err(|e| {
        let message = one_line(e.message());
        match e.span() {
            Some(span) => {
                let (line, column) = line_column(text, span.start);
                format!("TOML parse error at line {line}, column {column}: {message}")
            }
            None => format!("TOML parse error: {message}"),
        }
    })
}

fn sub_table<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Table> {
    table.get(key).and_then(toml::Value::as_table)
}

/// Pushes the names of an array of requirement strings (non-strings, such as PEP 735
/// `{include-group = …}` tables, are skipped).
fn push_requirement_array(value: Option<&toml::Value>, out: &mut Vec<String>) {
    let Some(items) = value.and_then(toml::Value::as_array) else {
        return;
    };
    for item in items {
        if let Some(name) = item.as_str().and_then(requirement_name) {
            out.push(name.to_owned());
        }
    }
}

/// Pushes the keys of a table of `name = spec` entries (Poetry, Pipfile), skipping `python`.
fn push_keys(value: Option<&toml::Value>, out: &mut Vec<String>) {
    let Some(table) = value.and_then(toml::Value::as_table) else {
        return;
    };
    for key in table.keys() {
        if is_name(key) && !key.eq_ignore_ascii_case("python") {
            out.push(key.clone());
        }
    }
}

fn pyproject_names(doc: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(project) = sub_table(doc, "project") {
        push_requirement_array(project.get("dependencies"), &mut out);
        if let Some(extras) = sub_table(project, "optional-dependencies") {
            for list in extras.values() {
                push_requirement_array(Some(list), &mut out);
            }
        }
    }
    if let Some(groups) = sub_table(doc, "dependency-groups") {
        for list in groups.values() {
            push_requirement_array(Some(list), &mut out);
        }
    }
    if let Some(tool) = sub_table(doc, "tool") {
        if let Some(poetry) = sub_table(tool, "poetry") {
            push_keys(poetry.get("dependencies"), &mut out);
            push_keys(poetry.get("dev-dependencies"), &mut out);
            if let Some(groups) = sub_table(poetry, "group") {
                for group in groups.values() {
                    if let Some(group) = group.as_table() {
                        push_keys(group.get("dependencies"), &mut out);
                    }
                }
            }
        }
        if let Some(uv) = sub_table(tool, "uv") {
            push_requirement_array(uv.get("dev-dependencies"), &mut out);
        }
        if let Some(pdm_groups) =
            sub_table(tool, "pdm").and_then(|p| sub_table(p, "dev-dependencies"))
        {
            for list in pdm_groups.values() {
                push_requirement_array(Some(list), &mut out);
            }
        }
    }
    out
}

fn pipfile_names(doc: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    push_keys(doc.get("packages"), &mut out);
    push_keys(doc.get("dev-packages"), &mut out);
    out
}

// ---------------------------------------------------------------------------------------------
// setup.cfg
// ---------------------------------------------------------------------------------------------

/// One `key = value` entry of an INI file; a multi-line value keeps its line breaks.
struct IniEntry {
    section: String,
    key: String,
    value: String,
}

/// A small INI reader in the manner of Python's `configparser` (as setuptools uses it): `[section]`
/// headers, `key = value` or `key: value` (keys lowercased), indented continuation lines, whole-line
/// `#` and `;` comments. Lines it cannot read are skipped.
fn read_ini(text: &str) -> Vec<IniEntry> {
    let mut entries: Vec<IniEntry> = Vec::new();
    let mut section = String::new();
    // Whether the last entry may still take continuation lines.
    let mut open = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        let indented = line.starts_with(char::is_whitespace);
        if indented && open {
            if let Some(entry) = entries.last_mut() {
                entry.value.push('\n');
                entry.value.push_str(trimmed);
            }
            continue;
        }
        open = false;
        if trimmed.starts_with('[') {
            if let Some(end) = trimmed.find(']') {
                section = trimmed[1..end].trim().to_owned();
            }
            continue;
        }
        if let Some(i) = trimmed.find(['=', ':']) {
            entries.push(IniEntry {
                section: section.clone(),
                key: trimmed[..i].trim().to_ascii_lowercase(),
                value: trimmed[i + 1..].trim().to_owned(),
            });
            open = true;
        }
    }
    entries
}

fn setup_cfg_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in read_ini(text) {
        let wanted = match entry.section.as_str() {
            "options" => matches!(entry.key.as_str(), "install_requires" | "tests_require"),
            "options.extras_require" => true,
            _ => false,
        };
        if wanted {
            push_requirement_list(&entry.value, &mut out);
        }
    }
    out
}

/// Environment-marker variables: what a single-line `install_requires = a; python_version < "3"`
/// wrongly splits off as a requirement.
const MARKER_VARIABLES: &[&str] = &[
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
];

/// A setuptools requirements list: one requirement a line, or a single line of `;`-separated
/// requirements. A `file:` directive is another file, which is not read here.
fn push_requirement_list(value: &str, out: &mut Vec<String>) {
    let value = value.trim();
    if value.starts_with("file:") {
        return;
    }
    let items: Vec<&str> = if value.contains('\n') {
        value.lines().collect()
    } else {
        value.split(';').collect()
    };
    for item in items {
        let item = strip_comment(item);
        if let Some(name) = requirement_name(item)
            && !MARKER_VARIABLES.contains(&name)
        {
            out.push(name.to_owned());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// package.json
// ---------------------------------------------------------------------------------------------

fn package_json_names(content: &[u8]) -> Result<Vec<String>, String> {
    let doc: serde_json::Value = serde_json::from_slice(content).map_err(|e| {
        let text = e.to_string();
        if e.line() == 0 {
            return format!("JSON parse error: {}", one_line(&text));
        }
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = text.strip_suffix(&suffix).unwrap_or(&text);
        format!(
            "JSON parse error at line {}, column {}: {}",
            e.line(),
            e.column(),
            one_line(message)
        )
    })?;
    let Some(doc) = doc.as_object() else {
        return Err("expected a JSON object at the top level".to_owned());
    };
    let mut out = Vec::new();
    for section in [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ] {
        if let Some(deps) = doc.get(section).and_then(serde_json::Value::as_object) {
            out.extend(deps.keys().filter(|k| !k.trim().is_empty()).cloned());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
