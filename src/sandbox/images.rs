//! The images the Docker backend runs sandboxes in: the sandbox base (`docker/sandbox/Dockerfile`)
//! and, on it, the toolchains a checkout's ecosystems need (Python, Node, Go, Rust: one
//! Dockerfile each, layered in that order). An image holds toolchains only: a repository's
//! dependencies are its environment's (`jobs::environment`), installed by its setup through
//! the egress gateway and lent to each sandbox like on every backend, never fetched by an
//! image build.
//!
//! [`Images::image_for`] looks at a checkout's root, picks the ecosystems ([`Language::detect`]),
//! and returns the ID (`sha256:…`) of an image built from the Dockerfiles compiled into this
//! binary, FROM the configured base. Each layer is tagged by a sha256 over its Dockerfile and
//! the ID of the image it is built FROM, so it is built once — lazily, on first need — and
//! reused until one of them changes. Two jobs of one process needing the same tag wait for one
//! build (two processes sharing a daemon may both build it; either result is the same recipe).
//! A failed build is an error naming the image and the build's last lines; there is never a
//! fallback to another image.
//!
//! This module must not run workers (see [`super::docker`]) and reads no file of the checkout:
//! it only looks at which names exist at its root, never through a symlink.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::SandboxError;
use super::docker_cli::{cli, command};

/// The sandbox base's Dockerfile, and each language's, as shipped in `docker/sandbox/`.
const SANDBOX_DOCKERFILE: &str = include_str!("../../docker/sandbox/Dockerfile");
const PYTHON_DOCKERFILE: &str = include_str!("../../docker/sandbox/python.Dockerfile");
const NODE_DOCKERFILE: &str = include_str!("../../docker/sandbox/node.Dockerfile");
const GO_DOCKERFILE: &str = include_str!("../../docker/sandbox/go.Dockerfile");
const RUST_DOCKERFILE: &str = include_str!("../../docker/sandbox/rust.Dockerfile");

/// Bumped when the way a tag is computed changes, so old tags are never mistaken for new ones.
const TAG_SCHEME: &str = "forgeward-image-v2";

/// Hex digits of the sha256 kept in a tag: 128 bits, far beyond any chance of two recipes
/// meeting, and a tag short enough to read.
const TAG_HEX: usize = 32;

/// How long one image build may take: a toolchain's packages install in a minute or two; past
/// this the package mirror or the build is stuck.
const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Lines of the build's output an error quotes.
const LOG_TAIL_LINES: usize = 12;

/// A toolchain a checkout's ecosystem needs to run its tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// None recognised: the sandbox base (bash, coreutils, git).
    Plain,
    /// `requirements*.txt` or `pyproject.toml`: python3, venv and pip, pytest.
    Python,
    /// `package.json`: Node.js and npm.
    Node,
    /// `go.mod`: Go.
    Go,
    /// `Cargo.toml`: cargo and rustc.
    Rust,
}

impl Language {
    /// The toolchains the checkout at `dir` needs, from the files at its root, in the order
    /// their layers are built (Python, Node, Go, Rust); empty for none. Only regular files
    /// count; a symlink is not looked through.
    pub fn detect(dir: &Path) -> Vec<Language> {
        let is_file = |name: &str| {
            dir.join(name)
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_file())
        };
        let mut found = Vec::new();
        if has_python_requirements(dir) || is_file("pyproject.toml") {
            found.push(Language::Python);
        }
        if is_file("package.json") {
            found.push(Language::Node);
        }
        if is_file("go.mod") {
            found.push(Language::Go);
        }
        if is_file("Cargo.toml") {
            found.push(Language::Rust);
        }
        found
    }

    /// The image repository its tags live in.
    pub fn repository(self) -> &'static str {
        match self {
            Language::Plain => "forgeward/sandbox",
            Language::Python => "forgeward/sandbox-python",
            Language::Node => "forgeward/sandbox-node",
            Language::Go => "forgeward/sandbox-go",
            Language::Rust => "forgeward/sandbox-rust",
        }
    }

    fn dockerfile(self) -> &'static str {
        match self {
            Language::Plain => SANDBOX_DOCKERFILE,
            Language::Python => PYTHON_DOCKERFILE,
            Language::Node => NODE_DOCKERFILE,
            Language::Go => GO_DOCKERFILE,
            Language::Rust => RUST_DOCKERFILE,
        }
    }
}

/// Whether the root of `dir` has a `requirements*.txt` (a regular file).
fn has_python_requirements(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .any(|n| n.starts_with("requirements") && n.ends_with(".txt"))
}

/// Why no image could be had for a checkout.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("base image {base} not found: build or pull it first ({reason})")]
    BaseMissing { base: String, reason: String },
    #[error("image {image} not found: build or pull it first ({reason})")]
    ImageMissing { image: String, reason: String },
    #[error("building image {image} failed: {log_tail}")]
    Build { image: String, log_tail: String },
    #[error("{0}")]
    Docker(String),
}

impl From<ImageError> for SandboxError {
    fn from(e: ImageError) -> SandboxError {
        SandboxError {
            backend: "docker",
            message: e.to_string(),
        }
    }
}

/// Builds and finds the sandbox images on one daemon.
pub struct Images {
    program: PathBuf,
    base: String,
    /// One lock per tag: a second job wanting an image being built waits for that build.
    building: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    seq: AtomicU64,
}

impl Images {
    /// Images built FROM `base`: a Debian 12 image reference (`debian:bookworm-slim`, or one
    /// made locally where no registry is reachable).
    pub fn new(base: impl Into<String>) -> Images {
        Images {
            program: PathBuf::from("docker"),
            base: base.into(),
            building: Mutex::new(HashMap::new()),
            seq: AtomicU64::new(0),
        }
    }

    /// Uses this `docker` executable instead of the one on `PATH`.
    pub fn with_program(mut self, program: impl Into<PathBuf>) -> Images {
        self.program = program.into();
        self
    }

    /// The ID of the image to run the sandbox in for the checkout at `checkout`: the sandbox
    /// base with a layer for each toolchain it needs, built first where it does not exist yet.
    pub async fn image_for(&self, checkout: &Path) -> Result<String, ImageError> {
        let (mut tag, mut id) = self.sandbox().await?;
        for language in Language::detect(checkout) {
            // FROM the image below's tag, which is content-addressed: a builder may not
            // resolve a bare image ID on a FROM line.
            (tag, id) = self.ensure(language, &id, &tag).await?;
        }
        Ok(id)
    }

    /// The ID an image reference (a tag, or already an ID) has now.
    pub async fn resolve(&self, reference: &str) -> Result<String, ImageError> {
        self.image_id(reference)
            .await
            .map_err(|reason| ImageError::ImageMissing {
                image: reference.to_owned(),
                reason,
            })
    }

    /// The ID of the sandbox base image (no language), built first if needed.
    pub async fn sandbox_image(&self) -> Result<String, ImageError> {
        Ok(self.sandbox().await?.1)
    }

    async fn sandbox(&self) -> Result<(String, String), ImageError> {
        let base_id =
            self.image_id(&self.base)
                .await
                .map_err(|reason| ImageError::BaseMissing {
                    base: self.base.clone(),
                    reason,
                })?;
        // FROM the configured reference; its ID is in the tag, so a moved reference (a newer
        // debian:bookworm-slim pulled) makes a new tag and a new build.
        self.ensure(Language::Plain, &base_id, &self.base).await
    }

    /// The tag and ID of the image for this recipe, built if the tag does not exist yet.
    async fn ensure(
        &self,
        language: Language,
        base_id: &str,
        from: &str,
    ) -> Result<(String, String), ImageError> {
        let tag = image_tag(language, base_id);
        let lock = {
            let mut building = self
                .building
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            building.entry(tag.clone()).or_default().clone()
        };
        let _held = lock.lock().await;
        if let Ok(id) = self.image_id(&tag).await {
            return Ok((tag, id));
        }
        tracing::info!(image = %tag, "building sandbox image");
        self.build(&tag, language.dockerfile(), from).await?;
        let id = self.image_id(&tag).await.map_err(|reason| {
            ImageError::Docker(format!("image {tag} missing after its build: {reason}"))
        })?;
        Ok((tag, id))
    }

    /// The ID of the image a reference names, or why there is none.
    async fn image_id(&self, reference: &str) -> Result<String, String> {
        let out = cli(
            &self.program,
            ["image", "inspect", "--format", "{{.Id}}", reference],
        )
        .await
        .map_err(|e| e.message)?;
        let id = out.trim();
        if id.starts_with("sha256:") {
            Ok(id.to_string())
        } else {
            Err(format!("unexpected image ID {id:?}"))
        }
    }

    async fn build(&self, tag: &str, dockerfile: &str, from: &str) -> Result<(), ImageError> {
        let dir = BuildDir::new(self.seq.fetch_add(1, Ordering::Relaxed))
            .map_err(|e| ImageError::Docker(format!("making a build context: {e}")))?;
        // The context is empty: a toolchain layer copies nothing in.
        let context = dir.path.join("context");
        let write = || -> std::io::Result<()> {
            std::fs::create_dir(&context)?;
            std::fs::write(dir.path.join("Dockerfile"), dockerfile)
        };
        write().map_err(|e| ImageError::Docker(format!("writing the build context: {e}")))?;

        // One pipe for both streams, so the log reads in the order the build printed it.
        let (reader, writer) =
            std::io::pipe().map_err(|e| ImageError::Docker(format!("pipe: {e}")))?;
        let writer2 = writer
            .try_clone()
            .map_err(|e| ImageError::Docker(format!("pipe: {e}")))?;
        let mut child = {
            let mut cmd = command(&self.program);
            cmd.arg("build")
                .arg("--build-arg")
                .arg(format!("BASE={from}"))
                // A failed step's container is otherwise kept by the classic builder.
                .arg("--force-rm")
                .arg("--label")
                .arg("forgeward.image=1")
                .arg("--tag")
                .arg(tag)
                .arg("--file")
                .arg(dir.path.join("Dockerfile"))
                .arg(&context)
                .stdout(Stdio::from(writer))
                .stderr(Stdio::from(writer2));
            cmd.spawn()
                .map_err(|e| ImageError::Docker(format!("docker build: {e}")))?
        };
        let log = tokio::task::spawn_blocking(move || {
            let mut log = Vec::new();
            let mut reader = reader;
            let _ = reader.read_to_end(&mut log);
            log
        });
        let status = match tokio::time::timeout(BUILD_TIMEOUT, child.wait()).await {
            Ok(status) => status.map_err(|e| ImageError::Docker(format!("docker build: {e}")))?,
            Err(_) => {
                let _ = child.kill().await;
                return Err(ImageError::Build {
                    image: tag.to_string(),
                    log_tail: format!("no result within {} min", BUILD_TIMEOUT.as_secs() / 60),
                });
            }
        };
        let log = log.await.unwrap_or_default();
        if status.success() {
            return Ok(());
        }
        Err(ImageError::Build {
            image: tag.to_string(),
            log_tail: log_tail(&String::from_utf8_lossy(&log)),
        })
    }
}

/// `repository:<sha256 over the recipe>`: the Dockerfile and the ID of the image it is built
/// FROM.
pub fn image_tag(language: Language, base_id: &str) -> String {
    let mut hash = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    field(TAG_SCHEME.as_bytes());
    field(language.dockerfile().as_bytes());
    field(base_id.as_bytes());
    let digest = hash.finalize();
    let mut hex = String::with_capacity(TAG_HEX);
    for byte in digest.iter().take(TAG_HEX / 2) {
        let _ = write!(hex, "{byte:02x}");
    }
    format!("{}:{hex}", language.repository())
}

/// The last lines of a build's output on one line, terminal colours removed.
fn log_tail(log: &str) -> String {
    let lines: Vec<String> = log
        .lines()
        .map(strip_ansi)
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        // The CLI's notice that the classic builder is deprecated says nothing about the build.
        .filter(|l| {
            !l.starts_with("DEPRECATED: The legacy builder")
                && !l.starts_with("Install the buildx component")
                && !l.starts_with("https://docs.docker.com/go/buildx")
        })
        .collect();
    let from = lines.len().saturating_sub(LOG_TAIL_LINES);
    if lines.is_empty() {
        "the build printed nothing".into()
    } else {
        lines[from..].join(" | ")
    }
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-byte (a letter).
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A private build context directory under the system's temporary directory, removed on drop.
struct BuildDir {
    path: PathBuf,
}

impl BuildDir {
    fn new(seq: u64) -> std::io::Result<BuildDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "forgeward-build-{}-{seq}-{nanos:x}",
            std::process::id()
        ));
        // create_dir, not create_dir_all: an existing directory of that name is not ours.
        std::fs::create_dir(&path)?;
        Ok(BuildDir { path })
    }
}

impl Drop for BuildDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests;
