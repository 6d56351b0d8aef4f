//! The environment a repository's tests need: its dependencies installed, its toolchain
//! checked, prepared once per base and lent to every sandbox of a job (the worker's and each
//! verification run's).
//!
//! - [`derive`]: the setup a repository gets when its `.forgeward.toml` names none, told from
//!   the base's files (each ecosystem present, lockfiles below the root included).
//! - [`toolchain`]: the toolchain versions a repository declares, and whether what the sandbox
//!   has satisfies them.
//! - [`plan`]: the steps, the toolchains and the files that decide them, read from the base,
//!   and the key a prepared environment is kept under.
//! - [`kept`]: prepared environments kept between jobs.
//! - [`lend`]: a kept environment lent to each workspace copy-on-write (an overlay, else hard
//!   links or copies), and taken back after its run.
//!
//! Running the setup in a sandbox is the jobs' (`jobs::environment`): this module runs
//! nothing.

pub mod derive;
pub mod kept;
pub mod lend;
pub mod plan;
pub mod toolchain;

/// Where the environment's own caches and installed toolchains live inside the workspace (the
/// module cache, Cargo's registry, npm's cache, `toolchains/`): kept and lent with the rest,
/// never committed (the bot's commit leaves it out like `.venv`).
pub const ENV_DIR: &str = ".forgeward-env";

/// An ecosystem a setup step prepares.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    Python,
    Node,
    Go,
    Rust,
    Jvm,
    /// A step the repository wrote itself (`[environment] setup`).
    Custom,
}

impl Ecosystem {
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Python => "python",
            Ecosystem::Node => "node",
            Ecosystem::Go => "go",
            Ecosystem::Rust => "rust",
            Ecosystem::Jvm => "jvm",
            Ecosystem::Custom => "custom",
        }
    }
}

/// One command of a setup, run by `sh -c` in `/workspace/<dir>`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Step {
    pub ecosystem: Ecosystem,
    /// The directory it runs in, relative to the workspace (`""`: the root).
    pub dir: String,
    /// The shell command.
    pub command: String,
    /// Why this step, for people: `package-lock.json`, `pyproject.toml [test] extra`,
    /// `.forgeward.toml [environment] setup`.
    pub why: String,
}
