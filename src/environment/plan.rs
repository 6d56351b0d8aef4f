//! What a repository's environment is made of, read from its base commit: the setup's steps
//! (`[environment] setup`, else [`super::derive`]), the toolchains it declares, and the files
//! that decide the result — which, with the steps, the toolchains, the sandbox and the image,
//! make the key a prepared environment is kept under.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::Step;
use super::toolchain::{self, Tool, Wanted};
use crate::config::repo::RepoConfig;
use crate::detect::{RepoPath, Tree};

/// Bumped when what a kept environment holds, or how its key is made, changes.
const KEY_SCHEME: &str = "forgeward-environment-v2";

pub use super::ENV_DIR;

/// Names of the files that decide what a setup installs, wherever they are in the tree (below
/// a dependency directory excepted).
const INPUT_NAMES: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "Pipfile",
    "Pipfile.lock",
    "uv.lock",
    "poetry.lock",
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "yarn.lock",
    ".yarnrc.yml",
    ".npmrc",
    "bun.lock",
    "bun.lockb",
    "go.mod",
    "go.sum",
    "go.work",
    "Cargo.toml",
    "Cargo.lock",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    "gradle.properties",
    ".python-version",
    ".nvmrc",
    ".node-version",
    "rust-toolchain",
    "rust-toolchain.toml",
    "Makefile",
    crate::config::FILE_NAME,
];

/// Directories whose files never decide a setup: what a setup writes, and vendored copies.
const NOT_INPUTS: &[&str] = &["node_modules", ".venv", ENV_DIR, "target", ".git"];

/// A repository's environment, as its base commit describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub steps: Vec<Step>,
    /// The steps are the repository's own (`[environment] setup`), not derived.
    pub configured: bool,
    /// Projects the derived setup passed over, and why (their dependencies are in the
    /// repository), for the phase's log and the job's environment line.
    pub notes: Vec<String>,
    pub wanted: Vec<Wanted>,
    /// The toolchains the first steps install, one step each: those the sandbox falls short
    /// of ([`Plan::with_installs`]).
    pub installs: Vec<Tool>,
    /// The files that decide the result, with their contents, by path.
    inputs: BTreeMap<String, Vec<u8>>,
}

impl Plan {
    /// The plan `tree` (the base commit) and its configuration give.
    pub fn read(tree: &dyn Tree, config: &RepoConfig) -> Plan {
        let environment = &config.environment;
        let (steps, configured, notes) = match &environment.setup {
            Some(setup) => (
                setup
                    .get_ref()
                    .iter()
                    .map(|command| Step {
                        ecosystem: super::Ecosystem::Custom,
                        dir: String::new(),
                        command: command.clone(),
                        why: format!("{} [environment] setup", crate::config::FILE_NAME),
                    })
                    .collect(),
                true,
                Vec::new(),
            ),
            None => {
                let (steps, notes) = super::derive::derive_with_notes(tree);
                (steps, false, notes)
            }
        };
        let overrides: BTreeMap<String, String> = environment
            .toolchains
            .iter()
            .map(|(k, v)| (k.get_ref().clone(), v.clone()))
            .collect();
        let wanted = toolchain::declared(tree, &overrides);
        let mut inputs = BTreeMap::new();
        if !steps.is_empty() {
            for path in tree.files() {
                let text = String::from_utf8_lossy(path.as_bytes()).into_owned();
                let mut parts = text.split('/');
                let name = text.rsplit('/').next().unwrap_or(&text);
                let inside = parts.any(|p| NOT_INPUTS.contains(&p));
                let is_input = INPUT_NAMES.contains(&name)
                    || (name.starts_with("requirements") && name.ends_with(".txt"))
                    || (name.ends_with("requirements.txt"))
                    || text.starts_with("requirements/");
                if is_input
                    && !inside
                    && let Some(content) = tree.read(&path)
                {
                    inputs.insert(text, content);
                }
            }
            // A configured command may name a file of its own (`pip install -r ci/deps.txt`).
            if configured {
                for step in &steps {
                    for word in step.command.split_whitespace() {
                        let word = word.trim_matches(|c| c == '"' || c == '\'');
                        let path = RepoPath::from(word);
                        if !inputs.contains_key(word)
                            && let Some(content) = tree.read(&path)
                        {
                            inputs.insert(word.to_owned(), content);
                        }
                    }
                }
            }
        }
        Plan {
            steps,
            configured,
            notes,
            wanted,
            installs: Vec::new(),
            inputs,
        }
    }

    /// The plan with a step installing each of `installs` run before its steps: the
    /// toolchains the sandbox falls short of, installed first so that the setup's own steps
    /// run with them. They are in the key like every step.
    pub fn with_installs(&self, installs: Vec<(Tool, Step)>) -> Plan {
        let mut plan = self.clone();
        let (tools, steps): (Vec<Tool>, Vec<Step>) = installs.into_iter().unzip();
        plan.installs = tools;
        plan.steps.splice(0..0, steps);
        plan
    }

    /// Whether there is anything to set up.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The files the key is made from, for people (`requirements.txt, pyproject.toml`).
    pub fn input_names(&self) -> Vec<&str> {
        self.inputs.keys().map(String::as_str).collect()
    }

    /// The key a prepared environment is kept under: the same steps over the same files, with
    /// the same toolchains, in the same sandbox and image, with the same setup variables, make
    /// the same environment.
    pub fn key(
        &self,
        backend: &str,
        image: Option<&str>,
        setup_env: &[(String, String)],
    ) -> String {
        let mut hash = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        };
        field(KEY_SCHEME.as_bytes());
        field(backend.as_bytes());
        field(image.unwrap_or("").as_bytes());
        for step in &self.steps {
            field(step.dir.as_bytes());
            field(step.command.as_bytes());
        }
        for wanted in &self.wanted {
            field(wanted.tool.as_str().as_bytes());
            field(wanted.requirement.as_bytes());
        }
        for (name, value) in setup_env {
            field(name.as_bytes());
            field(value.as_bytes());
        }
        for (path, content) in &self.inputs {
            field(path.as_bytes());
            field(content);
        }
        let digest = hash.finalize();
        digest[..16].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The variables every sandbox of a job with an environment gets: each ecosystem's caches in
/// the workspace's [`ENV_DIR`], the virtual environment when there is one.
pub fn variables(has_venv: bool) -> Vec<(String, String)> {
    let env = format!("/workspace/{ENV_DIR}");
    let mut vars = vec![
        ("GOPATH".to_owned(), format!("{env}/go")),
        ("GOMODCACHE".to_owned(), format!("{env}/go/mod")),
        // The module cache's files writable by their owner, so that a kept one can be removed.
        ("GOFLAGS".to_owned(), "-modcacherw".to_owned()),
        ("CARGO_HOME".to_owned(), format!("{env}/cargo")),
        ("npm_config_cache".to_owned(), format!("{env}/npm")),
        ("PIP_DISABLE_PIP_VERSION_CHECK".to_owned(), "1".to_owned()),
        ("PIP_NO_CACHE_DIR".to_owned(), "1".to_owned()),
    ];
    if has_venv {
        vars.push(("VIRTUAL_ENV".to_owned(), "/workspace/.venv".to_owned()));
    }
    vars
}

/// Whether `name` is one of the [`variables`] an environment gives its sandboxes.
pub fn is_environment_variable(name: &str) -> bool {
    variables(true).iter().any(|(n, _)| n == name)
}

/// Directories put before `PATH`: installed toolchains' programs, the virtual environment's,
/// the root package's.
pub fn path_prefix(kept: &[String]) -> Vec<String> {
    let mut path = Vec::new();
    if kept.iter().any(|k| k == ENV_DIR) {
        path.push(toolchain::installed_bin());
    }
    if kept.iter().any(|k| k == ".venv") {
        path.push("/workspace/.venv/bin".to_owned());
    }
    if kept.iter().any(|k| k == "node_modules") {
        path.push("/workspace/node_modules/.bin".to_owned());
    }
    path
}

/// Whether a directory the setup left in the workspace is part of the environment (kept and
/// lent): virtual environments, installed packages, the environment's caches, a Python
/// package's build metadata. Other files it left are not kept (they would be the worker's
/// change).
pub fn is_kept(name: &[u8]) -> bool {
    matches!(name, b".venv" | b"node_modules")
        || name == ENV_DIR.as_bytes()
        || name.ends_with(b".egg-info")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Files(Vec<(&'static str, &'static str)>);

    impl Tree for Files {
        fn exists(&self, path: &RepoPath) -> bool {
            self.read(path).is_some()
        }
        fn read(&self, path: &RepoPath) -> Option<Vec<u8>> {
            self.0
                .iter()
                .find(|(p, _)| p.as_bytes() == path.as_bytes())
                .map(|(_, c)| c.as_bytes().to_vec())
        }
        fn files(&self) -> Vec<RepoPath> {
            self.0.iter().map(|(p, _)| RepoPath::from(*p)).collect()
        }
    }

    fn config(text: &str) -> RepoConfig {
        RepoConfig::parse(".forgeward.toml", text).expect("parses")
    }

    #[test]
    fn the_key_changes_with_a_lockfile_and_not_with_source() {
        let base = Files(vec![
            ("package.json", "{}"),
            ("package-lock.json", "{\"v\": 1}"),
            ("src/index.js", "a"),
        ]);
        let edited = Files(vec![
            ("package.json", "{}"),
            ("package-lock.json", "{\"v\": 1}"),
            ("src/index.js", "b"),
        ]);
        let locked = Files(vec![
            ("package.json", "{}"),
            ("package-lock.json", "{\"v\": 2}"),
            ("src/index.js", "a"),
        ]);
        let none = RepoConfig::default();
        let key = |t: &Files| Plan::read(t, &none).key("bwrap", None, &[]);
        assert_eq!(key(&base), key(&edited));
        assert_ne!(key(&base), key(&locked));
        let plan = Plan::read(&base, &none);
        assert_ne!(
            plan.key("bwrap", None, &[]),
            plan.key("docker", Some("sha256:1"), &[])
        );
        assert_ne!(
            plan.key("bwrap", None, &[]),
            plan.key("bwrap", None, &[("PIP_INDEX_URL".into(), "x".into())])
        );
        assert_eq!(plan.input_names(), ["package-lock.json", "package.json"]);
    }

    #[test]
    fn a_configured_setup_replaces_the_derived_one_and_keys_on_the_files_it_names() {
        let tree = Files(vec![
            ("requirements.txt", "x"),
            ("ci/deps.txt", "pytest"),
            (
                ".forgeward.toml",
                "[environment]\nsetup = [\"pip install -r ci/deps.txt\"]\n",
            ),
        ]);
        let plan = Plan::read(
            &tree,
            &config("[environment]\nsetup = [\"pip install -r ci/deps.txt\"]\n"),
        );
        assert!(plan.configured);
        assert_eq!(plan.steps.len(), 1);
        assert_eq!(plan.steps[0].command, "pip install -r ci/deps.txt");
        assert!(plan.input_names().contains(&"ci/deps.txt"));
        let off = Plan::read(&tree, &config("[environment]\nsetup = []\n"));
        assert!(off.is_empty() && off.configured);
    }

    #[test]
    fn what_the_setup_leaves_is_kept_only_when_it_is_an_environment() {
        assert!(is_kept(b".venv") && is_kept(b"node_modules") && is_kept(b".forgeward-env"));
        assert!(is_kept(b"httpx.egg-info"));
        assert!(!is_kept(b"build") && !is_kept(b"version.py") && !is_kept(b"venv2"));
        assert_eq!(
            path_prefix(&[".venv".into(), "web/node_modules".into()]),
            ["/workspace/.venv/bin"]
        );
    }
}
