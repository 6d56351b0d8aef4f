//! The setup a repository gets when its `.forgeward.toml` names none, told from the base
//! commit's files.
//!
//! Every ecosystem present gets its steps, in every directory that holds a project of its own
//! (lockfiles below the root included), so one repository may get several. Each ecosystem has a
//! planner below, driven by a table of the files that trigger it and the command each means; the
//! steps are then put in order by directory (root first), then by ecosystem in
//! [`Ecosystem`]'s order.
//!
//! What every planner shares:
//!
//! - Files under [`SKIPPED_DIRS`] (installed dependencies, build output, test fixtures) are not
//!   the project's: a lockfile in `node_modules/` or `testdata/` triggers nothing.
//! - A file read for detail that does not parse declares nothing: a `pyproject.toml` that is not
//!   TOML is no installable project (pip could not install it either), a `package.json` or
//!   `Cargo.toml` that does not parse declares no workspace. Nothing here panics on content.
//! - Steps run with `sh -c` in `/workspace/<dir>`; every argument taken from the repository is
//!   shell-quoted. They install into the checkout's own places (`node_modules/`, `.venv/`,
//!   `*.egg-info/`) and may write files a tool generates (a `Cargo.lock` where none was).
//!
//! Python is the one ecosystem with shared state: one virtual environment, `/workspace/.venv`,
//! for the whole repository, made with `--system-site-packages` so that the host's test runner
//! stays visible, and created by the first Python step.

use std::collections::{BTreeMap, BTreeSet};

use super::{Ecosystem, Step};
use crate::detect::{RepoPath, Tree};

/// Directories whose files are never the project's own manifests: installed dependencies,
/// build output, and test fixtures (a lockfile in a fixture is test data).
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".venv",
    "node_modules",
    "vendor",
    "target",
    "testdata",
    "test_data",
    "test-data",
    "fixtures",
    "__fixtures__",
];

/// Names of extras and dependency groups that a test run wants installed, compared after
/// PEP 685 normalization (lowercase, runs of `-`, `_`, `.` as one `-`).
pub const TEST_NAMES: &[&str] = &[
    "test",
    "tests",
    "testing",
    "dev",
    "develop",
    "development",
    "ci",
    "all",
];

/// The first Python step runs this before its own command.
const MAKE_VENV: &str = "python3 -m venv --system-site-packages /workspace/.venv";

/// pip, as the virtual environment's.
const PIP: &str = "/workspace/.venv/bin/python -m pip install";

/// The default setup for a repository whose `.forgeward.toml` gives none: each ecosystem
/// present, in every directory that is a project of its own, in order by directory (root
/// first) and then by ecosystem. Empty for a repository with nothing to install.
pub fn derive(tree: &dyn Tree) -> Vec<Step> {
    derive_with_notes(tree).0
}

/// [`derive`]'s steps, and a line for each project passed over because the repository carries
/// its dependencies itself (`node in web: node_modules is in the repository`): installing
/// them again would replace what its tests are meant to run with.
pub fn derive_with_notes(tree: &dyn Tree) -> (Vec<Step>, Vec<String>) {
    let index = Index::new(tree);
    let mut notes = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    for plan in PLANNERS {
        for step in plan(tree, &index) {
            match CARRIED
                .iter()
                .find(|c| c.ecosystem == step.ecosystem && index.carries(&step.dir, c.marker))
            {
                Some(carried) => notes.push(format!(
                    "{}: {} is in the repository; not installed again",
                    where_(&step),
                    carried.shown
                )),
                None => steps.push(step),
            }
        }
    }
    // Stable: within one directory and ecosystem, a planner's own order stays.
    steps.sort_by(|a, b| (&a.dir, a.ecosystem).cmp(&(&b.dir, b.ecosystem)));
    if let Some(first) = steps.iter_mut().find(|s| s.ecosystem == Ecosystem::Python) {
        first.command = format!("{MAKE_VENV} && {}", first.command);
    }
    (steps, notes)
}

/// Dependencies a repository may carry in its own tree, by ecosystem: the file whose presence
/// (tracked, in the project's directory) says so, and how it is named to people.
struct Carried {
    ecosystem: Ecosystem,
    /// A path relative to the project's directory.
    marker: &'static str,
    shown: &'static str,
}

const CARRIED: &[Carried] = &[
    Carried {
        ecosystem: Ecosystem::Node,
        marker: "node_modules/",
        shown: "node_modules",
    },
    Carried {
        ecosystem: Ecosystem::Go,
        marker: "vendor/modules.txt",
        shown: "vendor/modules.txt",
    },
];

/// `python`, `node in web`: where a step is, for people.
fn where_(step: &Step) -> String {
    match step.dir.as_str() {
        "" => step.ecosystem.as_str().to_owned(),
        dir => format!("{} in {dir}", step.ecosystem.as_str()),
    }
}

/// One line for people naming each step and the files that chose it:
/// `python (pyproject.toml (extras: test)), node in web (package-lock.json)`; `none` for no
/// steps.
pub fn describe(steps: &[Step]) -> String {
    if steps.is_empty() {
        return "none".to_string();
    }
    steps
        .iter()
        .map(|s| format!("{} ({})", where_(s), s.why))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A planner: one ecosystem's steps for the whole repository.
type Planner = fn(&dyn Tree, &Index) -> Vec<Step>;

/// The planners, in [`Ecosystem`]'s order.
const PLANNERS: &[Planner] = &[python, node, go, rust, jvm];

// ---------------------------------------------------------------------------------------------
// The files, by directory

/// The base's files by directory, without those under [`SKIPPED_DIRS`] or with a path that is
/// not UTF-8 (no command could name it faithfully). A file in a directory named `requirements`
/// is filed under that directory's parent, as `requirements/<name>`: such a directory holds the
/// requirements files of the project above it, and is no project of its own.
struct Index {
    dirs: BTreeMap<String, BTreeSet<String>>,
    /// The [`CARRIED`] markers the tree has, as paths (`web/node_modules/`,
    /// `vendor/modules.txt`).
    carried: BTreeSet<String>,
}

impl Index {
    fn new(tree: &dyn Tree) -> Index {
        let mut dirs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut carried = BTreeSet::new();
        for path in tree.files() {
            let Ok(path) = std::str::from_utf8(path.as_bytes()) else {
                continue;
            };
            let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
            if parent.split('/').any(|c| SKIPPED_DIRS.contains(&c)) {
                // The first skipped directory of the path is where a carried one would be.
                if let Some(at) = path.find("node_modules/")
                    && (at == 0 || path.as_bytes()[at - 1] == b'/')
                {
                    carried.insert(path[..at + "node_modules/".len()].to_owned());
                }
                if path == "vendor/modules.txt" || path.ends_with("/vendor/modules.txt") {
                    carried.insert(path.to_owned());
                }
                continue;
            }
            let (dir, name) = match parent.rsplit_once('/').unwrap_or(("", parent)) {
                (above, "requirements") => (above, format!("requirements/{name}")),
                _ => (parent, name.to_string()),
            };
            dirs.entry(dir.to_string()).or_default().insert(name);
        }
        Index { dirs, carried }
    }

    /// Whether the project in `dir` carries `marker` (a [`Carried`] path).
    fn carries(&self, dir: &str, marker: &str) -> bool {
        let path = match dir {
            "" => marker.to_owned(),
            dir => format!("{dir}/{marker}"),
        };
        self.carried.contains(&path)
    }

    /// Whether `dir` holds `name`.
    fn has(&self, dir: &str, name: &str) -> bool {
        self.dirs.get(dir).is_some_and(|names| names.contains(name))
    }

    /// The directories holding `name`, in order.
    fn holding<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.dirs
            .iter()
            .filter(move |(_, names)| names.contains(name))
            .map(|(dir, _)| dir.as_str())
    }

    /// The directories holding any of `names`, in order.
    fn holding_any<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = &'a str> + 'a {
        self.dirs
            .iter()
            .filter(move |(_, held)| names.iter().any(|n| held.contains(*n)))
            .map(|(dir, _)| dir.as_str())
    }
}

/// The text of `dir/name`, if it is there and UTF-8.
fn read_text(tree: &dyn Tree, dir: &str, name: &str) -> Option<String> {
    let bytes = tree.read(&RepoPath::join(dir.as_bytes(), name.as_bytes()))?;
    String::from_utf8(bytes).ok()
}

/// The directories above `dir`, root first (none for the root itself).
fn ancestors(dir: &str) -> impl Iterator<Item = &str> {
    let root = (!dir.is_empty()).then_some("");
    root.into_iter()
        .chain(dir.match_indices('/').map(move |(i, _)| &dir[..i]))
}

/// Whether a directory above `dir` is one of `roots`.
fn below_any(dir: &str, roots: &BTreeSet<&str>) -> bool {
    ancestors(dir).any(|a| roots.contains(a))
}

fn step(ecosystem: Ecosystem, dir: &str, command: String, why: String) -> Step {
    Step {
        ecosystem,
        dir: dir.to_string(),
        command,
        why,
    }
}

/// `text` as one `sh` word: as it stands when it is made of characters no shell treats
/// specially, else in single quotes, an embedded `'` written `'\''`.
fn quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// A name as PEP 685 and PEP 735 compare them: lowercase, each run of `-`, `_`, `.` one `-`.
fn normalized(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

fn is_test_name(name: &str) -> bool {
    TEST_NAMES.contains(&normalized(name).as_str())
}

// ---------------------------------------------------------------------------------------------
// Python

/// A lockfile whose own tool installs a Python project, when that tool is on the sandbox's
/// PATH; without it, the directory's pip install runs instead.
struct PythonLock {
    file: &'static str,
    tool: &'static str,
    /// The command, run with the tool present.
    command: &'static str,
}

const PYTHON_LOCKS: &[PythonLock] = &[
    PythonLock {
        file: "uv.lock",
        tool: "uv",
        // `--inexact`: a plain sync removes what the lockfile does not name, pip included,
        // which later steps in other directories use. No download of a Python of its own:
        // the sandbox's is the one checked.
        command: "UV_PROJECT_ENVIRONMENT=/workspace/.venv UV_PYTHON_DOWNLOADS=never \
                  uv sync --frozen --all-extras --inexact",
    },
    PythonLock {
        file: "poetry.lock",
        tool: "poetry",
        // Poetry installs into an activated environment (`VIRTUAL_ENV`), and makes none of
        // its own elsewhere.
        command: "VIRTUAL_ENV=/workspace/.venv POETRY_VIRTUALENVS_CREATE=false \
                  poetry install --no-interaction --all-extras",
    },
];

/// Requirements files by name, in a project's own directory.
const REQUIREMENTS_NAMES: &[&str] = &[
    "requirements.txt",
    "dev-requirements.txt",
    "test-requirements.txt",
];

/// Requirements files by prefix (`requirements-dev.txt`, `requirements_test.txt`).
const REQUIREMENTS_PREFIXES: &[&str] = &["requirements-", "requirements_"];

/// Whether an indexed name is a requirements file to install: one of the names above, or in a
/// `requirements/` directory a `.txt` whose name says requirements or a test name
/// (`requirements/test.txt`, `requirements/dev-requirements.txt`; not `requirements/docs.txt`).
fn is_requirements(name: &str) -> bool {
    if let Some(inner) = name.strip_prefix("requirements/") {
        return inner.strip_suffix(".txt").is_some_and(|stem| {
            !stem.contains('/') && (stem.contains("requirements") || is_test_name(stem))
        });
    }
    REQUIREMENTS_NAMES.contains(&name)
        || REQUIREMENTS_PREFIXES
            .iter()
            .any(|p| name.starts_with(p) && name.ends_with(".txt"))
}

/// What a `pyproject.toml` that parses declares.
struct Pyproject {
    /// A `[project]` or `[build-system]` table: pip can install it.
    installable: bool,
    /// Its test extras (`[project.optional-dependencies]`), as written.
    extras: Vec<String>,
    /// Its test dependency groups (PEP 735), as written.
    groups: Vec<String>,
    /// Their requirement strings, includes resolved one level, in order, without repeats.
    group_requirements: Vec<String>,
}

fn read_pyproject(text: &str) -> Option<Pyproject> {
    let doc: toml::Table = text.parse().ok()?;
    let project = doc.get("project").and_then(toml::Value::as_table);
    let test_keys = |table: Option<&toml::Table>| -> Vec<String> {
        table
            .map(|t| t.keys().filter(|k| is_test_name(k)).cloned().collect())
            .unwrap_or_default()
    };
    let extras = test_keys(
        project
            .and_then(|p| p.get("optional-dependencies"))
            .and_then(toml::Value::as_table),
    );
    let all_groups = doc.get("dependency-groups").and_then(toml::Value::as_table);
    let groups = test_keys(all_groups);
    let mut group_requirements = Vec::new();
    if let Some(all) = all_groups {
        for group in &groups {
            for entry in all
                .get(group)
                .and_then(toml::Value::as_array)
                .into_iter()
                .flatten()
            {
                match entry {
                    toml::Value::String(req) => group_requirements.push(req.clone()),
                    toml::Value::Table(t) => {
                        let included = t.get("include-group").and_then(toml::Value::as_str);
                        group_requirements.extend(
                            included
                                .into_iter()
                                .flat_map(|name| group_strings(all, name)),
                        );
                    }
                    _ => {}
                }
            }
        }
    }
    // A requirement never starts with `-`: one that does would be an option to pip.
    group_requirements.retain(|r| !r.trim().is_empty() && !r.trim_start().starts_with('-'));
    let mut seen = BTreeSet::new();
    group_requirements.retain(|r| seen.insert(r.clone()));
    Some(Pyproject {
        installable: project.is_some() || doc.contains_key("build-system"),
        extras,
        groups,
        group_requirements,
    })
}

/// The requirement strings a dependency group lists itself (an include inside an included
/// group is not followed).
fn group_strings(all: &toml::Table, name: &str) -> Vec<String> {
    let wanted = normalized(name);
    all.iter()
        .filter(|(key, _)| normalized(key) == wanted)
        .filter_map(|(_, v)| v.as_array())
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// The test extras `setup.cfg` declares in `[options.extras_require]`.
fn setup_cfg_extras(text: &str) -> Vec<String> {
    let mut inside = false;
    let mut extras = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            inside = trimmed == "[options.extras_require]";
            continue;
        }
        // Keys start at the margin; indented lines continue a value.
        if !inside || line.starts_with([' ', '\t']) || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if let Some((key, _)) = trimmed.split_once(['=', ':']) {
            let key = key.trim();
            if is_test_name(key) {
                extras.push(key.to_string());
            }
        }
    }
    extras
}

/// One pip install for a directory: its arguments and the files that chose them.
#[derive(Default)]
struct PipPlan {
    args: Vec<String>,
    why: Vec<String>,
}

impl PipPlan {
    fn command(&self) -> String {
        format!("{PIP} {}", self.args.join(" "))
    }

    /// `-e .`, or `-e '.[a,b]'` with extras.
    fn editable(&mut self, extras: &[String]) {
        self.args.push("-e".to_string());
        self.args.push(match extras {
            [] => ".".to_string(),
            _ => quote(&format!(".[{}]", extras.join(","))),
        });
    }
}

/// The why of a file with the extras and groups it gave: `pyproject.toml (extras: test)`.
fn with_names(file: &str, parts: &[(&str, &[String])]) -> String {
    let said: Vec<String> = parts
        .iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(label, names)| format!("{label}: {}", names.join(", ")))
        .collect();
    match said.as_slice() {
        [] => file.to_string(),
        _ => format!("{file} ({})", said.join("; ")),
    }
}

/// What pip installs for the project in `dir`: its requirements files (`-r`), the project
/// itself (`-e`, with its test extras) when a `pyproject.toml` or `setup.py` makes it
/// installable, and the requirements of its test dependency groups (pip cannot install groups
/// by name, so their strings are named directly).
fn pip_plan(tree: &dyn Tree, index: &Index, dir: &str) -> PipPlan {
    let mut plan = PipPlan::default();
    let names = index.dirs.get(dir).into_iter().flatten();
    for file in names.filter(|n| is_requirements(n)) {
        plan.args.push("-r".to_string());
        plan.args.push(quote(file));
        plan.why.push(file.clone());
    }
    let pyproject = index
        .has(dir, "pyproject.toml")
        .then(|| read_text(tree, dir, "pyproject.toml"))
        .flatten()
        .and_then(|text| read_pyproject(&text));
    let installable = pyproject.as_ref().is_some_and(|p| p.installable);
    if let Some(p) = pyproject.as_ref().filter(|p| p.installable) {
        plan.editable(&p.extras);
    } else if index.has(dir, "setup.py") {
        let extras = read_text(tree, dir, "setup.cfg")
            .map(|text| setup_cfg_extras(&text))
            .unwrap_or_default();
        plan.editable(&extras);
        plan.why.push(match extras.as_slice() {
            [] => "setup.py".to_string(),
            _ => with_names("setup.py, setup.cfg", &[("extras", &extras)]),
        });
    }
    if let Some(p) = pyproject.filter(|p| installable || !p.group_requirements.is_empty()) {
        let parts: [(&str, &[String]); 2] = [("extras", &p.extras), ("groups", &p.groups)];
        plan.why.push(with_names("pyproject.toml", &parts));
        plan.args
            .extend(p.group_requirements.iter().map(|r| quote(r)));
    }
    plan
}

/// Python: each directory with a project of its own (an installable `pyproject.toml`, a
/// `setup.py`, requirements files, a lockfile below), unless a directory above it has a
/// `uv.lock` or `poetry.lock`, whose tool installs its workspace. A directory with such a
/// lockfile gets that tool's install, falling back to its pip install where the tool is
/// missing; any other gets one pip install of everything it declares.
fn python(tree: &dyn Tree, index: &Index) -> Vec<Step> {
    let locks: Vec<&str> = PYTHON_LOCKS.iter().map(|l| l.file).collect();
    let locked: BTreeSet<&str> = index.holding_any(&locks).collect();
    let mut steps = Vec::new();
    for dir in index.dirs.keys().map(String::as_str) {
        if below_any(dir, &locked) {
            continue;
        }
        let pip = pip_plan(tree, index, dir);
        let lock = PYTHON_LOCKS.iter().find(|l| index.has(dir, l.file));
        match lock {
            Some(lock) => {
                let (fallback, why) = match pip.args.is_empty() {
                    true => (format!("{PIP} -e ."), lock.file.to_string()),
                    false => (
                        pip.command(),
                        format!(
                            "{}, or without {}: {}",
                            lock.file,
                            lock.tool,
                            pip.why.join(", ")
                        ),
                    ),
                };
                let command = format!(
                    "if command -v {} >/dev/null; then {}; else {fallback}; fi",
                    lock.tool, lock.command
                );
                steps.push(step(Ecosystem::Python, dir, command, why));
            }
            None if !pip.args.is_empty() => {
                steps.push(step(
                    Ecosystem::Python,
                    dir,
                    pip.command(),
                    pip.why.join(", "),
                ));
            }
            None => {}
        }
    }
    steps
}

// ---------------------------------------------------------------------------------------------
// Node

/// A Node lockfile and the install that keeps to it.
struct NodeLock {
    file: &'static str,
    /// The package manager that writes it (`npm`, `pnpm`, `yarn`, `bun`).
    manager: &'static str,
    /// Its install's arguments.
    args: &'static str,
    /// A mark in the lockfile that calls for other arguments instead, and why.
    marked: Option<(&'static [u8], &'static str, &'static str)>,
}

/// Node's lockfiles; where a directory has several, the first here wins.
const NODE_LOCKS: &[NodeLock] = &[
    NodeLock {
        file: "npm-shrinkwrap.json",
        manager: "npm",
        args: "ci",
        marked: None,
    },
    NodeLock {
        file: "package-lock.json",
        manager: "npm",
        args: "ci",
        marked: None,
    },
    NodeLock {
        file: "pnpm-lock.yaml",
        manager: "pnpm",
        args: "install --frozen-lockfile",
        marked: None,
    },
    NodeLock {
        file: "yarn.lock",
        manager: "yarn",
        args: "install --frozen-lockfile",
        // Yarn 2+ (berry) writes a `__metadata:` entry; it spells "frozen" `--immutable`.
        marked: Some((b"__metadata:", "install --immutable", "berry")),
    },
    NodeLock {
        file: "bun.lock",
        manager: "bun",
        args: "install --frozen-lockfile",
        marked: None,
    },
    NodeLock {
        file: "bun.lockb",
        manager: "bun",
        args: "install --frozen-lockfile",
        marked: None,
    },
];

/// The version of `manager` a `package.json`'s `packageManager` names (`pnpm@10.28.0+sha512.…`
/// gives `10.28.0` for `pnpm`), when it names that manager and a version a command may carry.
fn declared_manager(tree: &dyn Tree, dir: &str, manager: &str) -> Option<String> {
    let text = read_text(tree, dir, "package.json")?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let field = json.get("packageManager")?.as_str()?;
    let (name, version) = field.split_once('@')?;
    let version = version.split('+').next()?;
    let plain = !version.is_empty()
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    (name == manager && plain).then(|| version.to_owned())
}

/// How the install runs `manager`: npm as it is; the others by npx, at the version the
/// project declares, from the registry npm is configured with, since a sandbox has npm with
/// Node but seldom pnpm, Yarn or Bun. Yarn 2+ is `@yarnpkg/cli-dist` when a version is declared,
/// else Yarn 1, which hands over to the release a project commits (`.yarnrc.yml`'s `yarnPath`).
fn manager_command(manager: &str, version: Option<&str>, berry: bool) -> String {
    match (manager, version) {
        ("npm", _) => "npm".to_owned(),
        ("yarn", Some(v)) if berry => format!("npx --yes -p @yarnpkg/cli-dist@{v} yarn"),
        ("yarn", None) => "npx --yes yarn@1".to_owned(),
        (manager, Some(v)) => format!("npx --yes {manager}@{v}"),
        (manager, None) => format!("npx --yes {manager}"),
    }
}

/// The install for a `package.json` with no lockfile beside it.
const NODE_UNLOCKED: &str = "npm install";

/// Whether the project in `dir` declares workspaces: a `workspaces` field in its
/// `package.json` (npm, yarn, bun) or a `pnpm-workspace.yaml`.
fn declares_workspaces(tree: &dyn Tree, index: &Index, dir: &str) -> bool {
    index.has(dir, "pnpm-workspace.yaml")
        || read_text(tree, dir, "package.json")
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .is_some_and(|json| json.get("workspaces").is_some_and(|w| !w.is_null()))
}

/// Node: each directory with a `package.json` and a lockfile beside it gets that lockfile's
/// install; one with no lockfile gets `npm install`, unless it is inside a workspace whose root
/// has a lockfile (and declares workspaces), whose install covers it. Install scripts stay on:
/// real projects need their `postinstall`.
fn node(tree: &dyn Tree, index: &Index) -> Vec<Step> {
    let locked = |dir: &str| NODE_LOCKS.iter().find(|l| index.has(dir, l.file));
    let roots: BTreeSet<&str> = index
        .holding("package.json")
        .filter(|dir| locked(dir).is_some() && declares_workspaces(tree, index, dir))
        .collect();
    let mut steps = Vec::new();
    for dir in index.holding("package.json") {
        match locked(dir) {
            Some(lock) => {
                let marked = lock.marked.and_then(|mark| {
                    let bytes = tree.read(&RepoPath::join(dir.as_bytes(), lock.file.as_bytes()))?;
                    memchr::memmem::find(&bytes, mark.0).map(|_| mark)
                });
                let (args, why) = match marked {
                    Some((_, args, kind)) => (args, format!("{} ({kind})", lock.file)),
                    None => (lock.args, lock.file.to_string()),
                };
                let version = declared_manager(tree, dir, lock.manager);
                let program = manager_command(lock.manager, version.as_deref(), marked.is_some());
                steps.push(step(Ecosystem::Node, dir, format!("{program} {args}"), why));
            }
            None if below_any(dir, &roots) => {}
            None => {
                let why = "package.json (no lockfile)".to_string();
                steps.push(step(Ecosystem::Node, dir, NODE_UNLOCKED.to_string(), why));
            }
        }
    }
    steps
}

// ---------------------------------------------------------------------------------------------
// Go, Rust, JVM

/// Go: `go mod download` in each module's directory (a `go.work` changes nothing: downloading
/// per module fetches the same).
fn go(_tree: &dyn Tree, index: &Index) -> Vec<Step> {
    index
        .holding("go.mod")
        .map(|dir| {
            let command = "go mod download".to_string();
            step(Ecosystem::Go, dir, command, "go.mod".to_string())
        })
        .collect()
}

/// Rust: `cargo fetch` for each independent tree: every `Cargo.toml` not below a directory
/// whose `Cargo.toml` is a `[workspace]`, `--locked` when a `Cargo.lock` is beside it.
fn rust(tree: &dyn Tree, index: &Index) -> Vec<Step> {
    let is_workspace = |dir: &str| {
        read_text(tree, dir, "Cargo.toml")
            .and_then(|text| text.parse::<toml::Table>().ok())
            .is_some_and(|doc| doc.contains_key("workspace"))
    };
    let workspaces: BTreeSet<&str> = index
        .holding("Cargo.toml")
        .filter(|d| is_workspace(d))
        .collect();
    index
        .holding("Cargo.toml")
        .filter(|dir| !below_any(dir, &workspaces))
        .map(|dir| {
            let (command, why) = match index.has(dir, "Cargo.lock") {
                true => ("cargo fetch --locked", "Cargo.toml, Cargo.lock"),
                false => ("cargo fetch", "Cargo.toml"),
            };
            step(Ecosystem::Rust, dir, command.to_string(), why.to_string())
        })
        .collect()
}

/// A JVM build tool: the files that make a directory its build, its wrapper script, and the
/// command that fetches the dependencies, through the wrapper when the repository has one.
struct JvmBuild {
    files: &'static [&'static str],
    wrapper: &'static str,
    wrapped: &'static str,
    bare: &'static str,
}

const JVM_BUILDS: &[JvmBuild] = &[
    JvmBuild {
        files: &["pom.xml"],
        wrapper: "mvnw",
        wrapped: "sh ./mvnw -B -q dependency:go-offline",
        bare: "mvn -B -q dependency:go-offline",
    },
    JvmBuild {
        files: &[
            "settings.gradle.kts",
            "settings.gradle",
            "build.gradle.kts",
            "build.gradle",
        ],
        wrapper: "gradlew",
        // Through `sh`, like Maven's: the wrapper's execute bit is not always kept.
        wrapped: "sh ./gradlew --no-daemon dependencies",
        bare: "gradle --no-daemon dependencies",
    },
];

/// JVM: each build tool's top-most build of each tree (one not below another of its own
/// kind: a multi-module build's modules are the root's to fetch).
fn jvm(_tree: &dyn Tree, index: &Index) -> Vec<Step> {
    let mut steps = Vec::new();
    for build in JVM_BUILDS {
        let dirs: BTreeSet<&str> = index.holding_any(build.files).collect();
        for &dir in dirs.iter().filter(|dir| !below_any(dir, &dirs)) {
            let file = build
                .files
                .iter()
                .find(|f| index.has(dir, f))
                .copied()
                .unwrap_or_default();
            let (command, why) = match index.has(dir, build.wrapper) {
                true => (build.wrapped, format!("{file}, {}", build.wrapper)),
                false => (build.bare, file.to_string()),
            };
            steps.push(step(Ecosystem::Jvm, dir, command.to_string(), why));
        }
    }
    steps
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

    fn steps(files: &[(&str, &str)]) -> Vec<Step> {
        derive(&tree(files))
    }

    /// (ecosystem, dir, command) of each step.
    fn summary(steps: &[Step]) -> Vec<(Ecosystem, &str, &str)> {
        steps
            .iter()
            .map(|s| (s.ecosystem, s.dir.as_str(), s.command.as_str()))
            .collect()
    }

    const HTTPX: &str = r#"
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "httpx"
dependencies = ["certifi", "httpcore==1.*"]

[project.optional-dependencies]
brotli = ["brotli"]
cli = ["click==8.*"]
http2 = ["h2>=3,<5"]
socks = ["socksio==1.*"]
zstd = ["zstandard>=0.18.0"]
"#;

    #[test]
    fn httpx_like_installs_its_requirements_and_itself_without_extras() {
        let got = steps(&[
            ("pyproject.toml", HTTPX),
            (
                "requirements.txt",
                "-e .[brotli,cli,http2,socks,zstd]\npytest==8.*\n",
            ),
            ("httpx/__init__.py", ""),
        ]);
        assert_eq!(
            summary(&got),
            [(
                Ecosystem::Python,
                "",
                "python3 -m venv --system-site-packages /workspace/.venv && \
                 /workspace/.venv/bin/python -m pip install -r requirements.txt -e ."
            )]
        );
        assert_eq!(got[0].why, "requirements.txt, pyproject.toml");
    }

    #[test]
    fn test_extras_are_installed_and_others_are_not() {
        let pyproject = "[project]\nname = \"p\"\n[project.optional-dependencies]\n\
                         test = [\"pytest\"]\ndocs = [\"sphinx\"]\ntesting-tools = [\"x\"]\n";
        let got = steps(&[("pyproject.toml", pyproject)]);
        assert_eq!(got.len(), 1);
        assert!(
            got[0].command.ends_with("pip install -e '.[test]'"),
            "{}",
            got[0].command
        );
        assert_eq!(got[0].why, "pyproject.toml (extras: test)");
        assert_eq!(describe(&got), "python (pyproject.toml (extras: test))");
    }

    #[test]
    fn extra_names_compare_normalized_and_keep_their_spelling() {
        let pyproject = "[project]\nname = \"p\"\n[project.optional-dependencies]\n\
                         Dev = []\n\"Te.st\" = []\n\"tests_\" = []\n";
        let got = steps(&[("pyproject.toml", pyproject)]);
        // `Dev` is `dev`; `Te.st` is `te-st` and `tests_` is `tests-`: neither a test name.
        assert!(
            got[0].command.ends_with("-e '.[Dev]'"),
            "{}",
            got[0].command
        );
    }

    #[test]
    fn dependency_groups_install_their_requirements_directly() {
        let pyproject = r#"
[project]
name = "p"
[dependency-groups]
lint = ["ruff"]
typing = ["mypy"]
test = ["pytest>=8", {include-group = "typing"}, "pytest>=8", "--index-url=http://x"]
"#;
        let got = steps(&[("pyproject.toml", pyproject)]);
        assert!(
            got[0]
                .command
                .ends_with("pip install -e . 'pytest>=8' mypy"),
            "{}",
            got[0].command
        );
        assert_eq!(got[0].why, "pyproject.toml (groups: test)");
    }

    #[test]
    fn dependency_groups_without_a_project_install_only_the_groups() {
        let pyproject = "[dependency-groups]\ndev = [\"pytest\"]\n";
        let got = steps(&[("pyproject.toml", pyproject)]);
        assert!(
            got[0].command.ends_with("pip install pytest"),
            "{}",
            got[0].command
        );
        // Beside a setup.py, the groups come with it.
        let got = steps(&[("pyproject.toml", pyproject), ("setup.py", "")]);
        assert!(
            got[0].command.ends_with("pip install -e . pytest"),
            "{}",
            got[0].command
        );
        assert_eq!(got[0].why, "setup.py, pyproject.toml (groups: dev)");
        // A pyproject of tool settings alone is no Python project.
        assert!(steps(&[("pyproject.toml", "[tool.ruff]\nline-length = 100\n")]).is_empty());
    }

    #[test]
    fn a_pyproject_that_does_not_parse_declares_nothing() {
        // Not TOML: pip could not install it either, so it is passed over without a panic.
        assert!(steps(&[("pyproject.toml", "[project\nname = ")]).is_empty());
        let got = steps(&[("pyproject.toml", "[project"), ("requirements.txt", "x\n")]);
        assert!(got[0].command.ends_with("pip install -r requirements.txt"));
        // Beside a setup.py, the setup.py still makes the project installable.
        let got = steps(&[("pyproject.toml", "= ="), ("setup.py", "")]);
        assert!(got[0].command.ends_with("pip install -e ."));
    }

    #[test]
    fn setup_py_installs_with_setup_cfg_test_extras() {
        let cfg = "[metadata]\nname = p\n[options.extras_require]\ntesting =\n    pytest\n\
                   docs = sphinx\n[flake8]\ntest = nothing\n";
        let got = steps(&[("setup.py", ""), ("setup.cfg", cfg)]);
        assert!(
            got[0].command.ends_with("-e '.[testing]'"),
            "{}",
            got[0].command
        );
        assert_eq!(got[0].why, "setup.py, setup.cfg (extras: testing)");
        // setup.cfg alone is no project pip can install.
        assert!(steps(&[("setup.cfg", cfg)]).is_empty());
    }

    #[test]
    fn requirements_files_by_name() {
        let got = steps(&[
            ("requirements.txt", ""),
            ("requirements-dev.txt", ""),
            ("requirements_test.txt", ""),
            ("test-requirements.txt", ""),
            ("requirements/ci.txt", ""),
            ("requirements/docs.txt", ""),
            ("requirements/base-requirements.txt", ""),
            ("requirements.in", ""),
            ("my-requirements.txt", ""),
            ("requirements-dev.txt.bak", ""),
        ]);
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].why,
            "requirements-dev.txt, requirements.txt, requirements/base-requirements.txt, \
             requirements/ci.txt, requirements_test.txt, test-requirements.txt"
        );
    }

    #[test]
    fn python_in_subdirectories_shares_the_one_venv() {
        let got = steps(&[
            ("services/api/requirements.txt", ""),
            ("tools/setup.py", ""),
        ]);
        assert_eq!(
            summary(&got),
            [
                (
                    Ecosystem::Python,
                    "services/api",
                    "python3 -m venv --system-site-packages /workspace/.venv && \
                     /workspace/.venv/bin/python -m pip install -r requirements.txt"
                ),
                (
                    Ecosystem::Python,
                    "tools",
                    "/workspace/.venv/bin/python -m pip install -e ."
                ),
            ]
        );
    }

    #[test]
    fn uv_and_poetry_lockfiles_use_their_tool_or_fall_back_to_pip() {
        let pyproject = "[project]\nname = \"p\"\n[project.optional-dependencies]\ntest = []\n";
        let got = steps(&[
            ("pyproject.toml", pyproject),
            ("uv.lock", ""),
            ("requirements.txt", ""),
            ("packages/a/pyproject.toml", pyproject),
        ]);
        // The member below the uv.lock is uv's to install.
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].command,
            "python3 -m venv --system-site-packages /workspace/.venv && \
             if command -v uv >/dev/null; then UV_PROJECT_ENVIRONMENT=/workspace/.venv \
             UV_PYTHON_DOWNLOADS=never uv sync --frozen --all-extras --inexact; \
             else /workspace/.venv/bin/python -m pip install -r requirements.txt -e '.[test]'; fi"
        );
        assert_eq!(
            got[0].why,
            "uv.lock, or without uv: requirements.txt, pyproject.toml (extras: test)"
        );
        let got = steps(&[("pyproject.toml", "[tool.poetry]\n"), ("poetry.lock", "")]);
        assert!(got[0].command.contains(
            "if command -v poetry >/dev/null; then VIRTUAL_ENV=/workspace/.venv \
             POETRY_VIRTUALENVS_CREATE=false poetry install --no-interaction --all-extras; \
             else /workspace/.venv/bin/python -m pip install -e .; fi"
        ));
        assert_eq!(got[0].why, "poetry.lock");
    }

    #[test]
    fn npm_workspace_members_are_covered_by_the_root() {
        let got = steps(&[
            ("package.json", r#"{"workspaces": ["packages/*"]}"#),
            ("package-lock.json", "{}"),
            ("packages/a/package.json", "{}"),
            ("packages/b/package.json", "{}"),
        ]);
        assert_eq!(summary(&got), [(Ecosystem::Node, "", "npm ci")]);
        assert_eq!(describe(&got), "node (package-lock.json)");
    }

    #[test]
    fn a_root_without_workspaces_does_not_cover_the_directories_below() {
        let got = steps(&[
            ("package.json", "{}"),
            ("package-lock.json", "{}"),
            ("docs/package.json", "{}"),
        ]);
        assert_eq!(
            summary(&got),
            [
                (Ecosystem::Node, "", "npm ci"),
                (Ecosystem::Node, "docs", "npm install")
            ]
        );
        assert_eq!(got[1].why, "package.json (no lockfile)");
        // pnpm's workspace file declares them too.
        let got = steps(&[
            ("package.json", "{}"),
            ("pnpm-lock.yaml", ""),
            ("pnpm-workspace.yaml", "packages: ['apps/*']\n"),
            ("apps/web/package.json", "{}"),
        ]);
        assert_eq!(
            summary(&got),
            [(
                Ecosystem::Node,
                "",
                "npx --yes pnpm install --frozen-lockfile"
            )]
        );
    }

    #[test]
    fn a_package_manager_is_run_at_the_version_the_project_declares() {
        let got = steps(&[
            (
                "package.json",
                r#"{"packageManager": "pnpm@10.28.0+sha512.abc123"}"#,
            ),
            ("pnpm-lock.yaml", ""),
            ("web/package.json", r#"{"packageManager": "yarn@4.5.1"}"#),
            ("web/yarn.lock", "__metadata:\n  version: 8\n"),
            // A declaration of another manager, or one the shell would read, is not used.
            ("api/package.json", r#"{"packageManager": "pnpm@9.0.0"}"#),
            ("api/yarn.lock", "# yarn lockfile v1\n"),
            ("cli/package.json", r#"{"packageManager": "bun@1.1;id"}"#),
            ("cli/bun.lock", "{}"),
        ]);
        assert_eq!(
            summary(&got),
            [
                (
                    Ecosystem::Node,
                    "",
                    "npx --yes pnpm@10.28.0 install --frozen-lockfile"
                ),
                (
                    Ecosystem::Node,
                    "api",
                    "npx --yes yarn@1 install --frozen-lockfile"
                ),
                (
                    Ecosystem::Node,
                    "cli",
                    "npx --yes bun install --frozen-lockfile"
                ),
                (
                    Ecosystem::Node,
                    "web",
                    "npx --yes -p @yarnpkg/cli-dist@4.5.1 yarn install --immutable"
                ),
            ]
        );
    }

    #[test]
    fn independent_node_projects_each_get_their_install() {
        let got = steps(&[
            ("web/package.json", "{}"),
            ("web/yarn.lock", "__metadata:\n  version: 6\n"),
            ("api/package.json", "{}"),
            ("api/yarn.lock", "# yarn lockfile v1\n"),
            ("cli/package.json", "{}"),
            ("cli/bun.lockb", "\0"),
        ]);
        assert_eq!(
            summary(&got),
            [
                (
                    Ecosystem::Node,
                    "api",
                    "npx --yes yarn@1 install --frozen-lockfile"
                ),
                (
                    Ecosystem::Node,
                    "cli",
                    "npx --yes bun install --frozen-lockfile"
                ),
                (
                    Ecosystem::Node,
                    "web",
                    "npx --yes yarn@1 install --immutable"
                ),
            ]
        );
        assert_eq!(got[2].why, "yarn.lock (berry)");
        assert_eq!(
            describe(&got),
            "node in api (yarn.lock), node in cli (bun.lockb), node in web (yarn.lock (berry))"
        );
    }

    #[test]
    fn lockfiles_in_installed_or_fixture_directories_are_not_the_projects() {
        let got = steps(&[
            ("node_modules/x/package.json", "{}"),
            ("node_modules/x/package-lock.json", "{}"),
            ("testdata/proj/package.json", "{}"),
            ("testdata/proj/go.mod", "module x\n"),
            ("src/__fixtures__/Cargo.toml", "[package]\n"),
            ("tests/fixtures/app/requirements.txt", ""),
            ("vendor/github.com/a/b/go.mod", ""),
            (".venv/lib/pyproject.toml", "[project]\n"),
        ]);
        assert!(got.is_empty(), "{got:?}");
        // A lookalike name is not a skipped directory.
        let got = steps(&[("my-testdata/go.mod", "module x\n")]);
        assert_eq!(
            summary(&got),
            [(Ecosystem::Go, "my-testdata", "go mod download")]
        );
    }

    #[test]
    fn dependencies_the_repository_carries_are_not_installed_again() {
        let (got, notes) = derive_with_notes(&tree(&[
            ("package.json", "{}"),
            ("package-lock.json", "{}"),
            ("node_modules/left-pad/index.js", ""),
            ("web/package.json", "{}"),
            ("web/package-lock.json", "{}"),
            ("go.mod", "module a\n"),
            ("vendor/modules.txt", "# example.com/b v1.0.0\n"),
            ("vendor/example.com/b/b.go", ""),
            ("tools/go.mod", "module t\n"),
        ]));
        // The root's node_modules and vendor/ are the repository's own; web/ and tools/ are not.
        assert_eq!(
            summary(&got),
            [
                (Ecosystem::Go, "tools", "go mod download"),
                (Ecosystem::Node, "web", "npm ci"),
            ]
        );
        assert_eq!(
            notes,
            [
                "node: node_modules is in the repository; not installed again",
                "go: vendor/modules.txt is in the repository; not installed again",
            ]
        );
        // A package named like the directory is not one.
        let (got, notes) = derive_with_notes(&tree(&[
            ("package.json", "{}"),
            ("package-lock.json", "{}"),
            ("lib/my_node_modules/x.js", ""),
        ]));
        assert_eq!(summary(&got), [(Ecosystem::Node, "", "npm ci")]);
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn every_go_module_is_downloaded() {
        let got = steps(&[
            ("go.mod", "module a\n"),
            ("tools/go.mod", "module b\n"),
            ("main.go", ""),
        ]);
        assert_eq!(
            summary(&got),
            [
                (Ecosystem::Go, "", "go mod download"),
                (Ecosystem::Go, "tools", "go mod download")
            ]
        );
    }

    #[test]
    fn a_cargo_workspace_is_fetched_once() {
        let got = steps(&[
            ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
            ("Cargo.lock", ""),
            ("crates/a/Cargo.toml", "[package]\nname = \"a\"\n"),
            ("crates/b/Cargo.toml", "[package]\nname = \"b\"\n"),
        ]);
        assert_eq!(
            summary(&got),
            [(Ecosystem::Rust, "", "cargo fetch --locked")]
        );
        assert_eq!(got[0].why, "Cargo.toml, Cargo.lock");
        // Below a package that is no workspace, a crate is a tree of its own.
        let got = steps(&[
            ("Cargo.toml", "[package]\nname = \"a\"\n"),
            ("fuzz/Cargo.toml", "[package]\nname = \"f\"\n"),
        ]);
        assert_eq!(
            summary(&got),
            [
                (Ecosystem::Rust, "", "cargo fetch"),
                (Ecosystem::Rust, "fuzz", "cargo fetch")
            ]
        );
    }

    #[test]
    fn jvm_builds_use_their_wrapper_and_only_the_top_most_build() {
        let got = steps(&[
            ("pom.xml", "<project/>"),
            ("mvnw", ""),
            ("core/pom.xml", "<project/>"),
            ("android/settings.gradle.kts", ""),
            ("android/gradlew", ""),
            ("android/app/build.gradle.kts", ""),
            ("plugin/build.gradle", ""),
        ]);
        assert_eq!(
            summary(&got),
            [
                (Ecosystem::Jvm, "", "sh ./mvnw -B -q dependency:go-offline"),
                (
                    Ecosystem::Jvm,
                    "android",
                    "sh ./gradlew --no-daemon dependencies"
                ),
                (Ecosystem::Jvm, "plugin", "gradle --no-daemon dependencies"),
            ]
        );
        assert_eq!(got[0].why, "pom.xml, mvnw");
        assert_eq!(got[1].why, "settings.gradle.kts, gradlew");
    }

    #[test]
    fn steps_are_ordered_by_directory_then_ecosystem() {
        let got = steps(&[
            ("web/package.json", "{}"),
            ("web/package-lock.json", "{}"),
            ("go.mod", ""),
            ("package.json", "{}"),
            ("requirements.txt", ""),
        ]);
        let order: Vec<(Ecosystem, &str)> =
            got.iter().map(|s| (s.ecosystem, s.dir.as_str())).collect();
        assert_eq!(
            order,
            [
                (Ecosystem::Python, ""),
                (Ecosystem::Node, ""),
                (Ecosystem::Go, ""),
                (Ecosystem::Node, "web")
            ]
        );
        assert_eq!(
            describe(&got),
            "python (requirements.txt), node (package.json (no lockfile)), go (go.mod), \
             node in web (package-lock.json)"
        );
    }

    #[test]
    fn an_empty_repository_needs_nothing() {
        assert!(steps(&[]).is_empty());
        assert!(steps(&[("README.md", "# hi"), ("src/main.c", "")]).is_empty());
        assert_eq!(describe(&[]), "none");
    }

    #[test]
    fn quoting_leaves_plain_words_and_quotes_the_rest() {
        assert_eq!(quote("requirements.txt"), "requirements.txt");
        assert_eq!(quote("pkg==1.0"), "pkg==1.0");
        assert_eq!(quote("pkg>=1"), "'pkg>=1'");
        assert_eq!(quote(".[test]"), "'.[test]'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn odd_characters_from_the_repository_are_quoted() {
        let pyproject = r#"
[project]
name = "p"
[project.optional-dependencies]
"Test" = []
[dependency-groups]
test = ["tomli; python_version < '3.11'", "a b"]
"#;
        let got = steps(&[
            ("pyproject.toml", pyproject),
            ("requirements/dev's-requirements.txt", ""),
        ]);
        assert!(
            got[0].command.ends_with(
                r"pip install -r 'requirements/dev'\''s-requirements.txt' -e '.[Test]' 'tomli; python_version < '\''3.11'\''' 'a b'"
            ),
            "{}",
            got[0].command
        );
    }

    #[test]
    fn non_utf8_paths_are_passed_over() {
        let mut t = tree(&[("go.mod", "")]);
        t.0.insert(RepoPath::new(b"bad\xff/go.mod".to_vec()), Vec::new());
        assert_eq!(
            summary(&derive(&t)),
            [(Ecosystem::Go, "", "go mod download")]
        );
    }
}
