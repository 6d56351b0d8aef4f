//! The images the Docker backend runs workers in: the sandbox base (`docker/sandbox/Dockerfile`)
//! and one image per language, with the repository's dependencies installed at build time since
//! the worker has no network.
//!
//! [`Images::image_for`] looks at a checkout, picks the language ([`Language::detect`]), and
//! returns the ID (`sha256:…`) of an image built from the Dockerfile compiled into this binary,
//! FROM the configured base, with only the repository's dependency files in the build context.
//! Each image is tagged by a sha256 over its Dockerfile, its base image's ID and those files, so
//! it is built once — lazily, on first need — and reused until one of them changes. Two jobs
//! of one process needing the same tag wait for one build (two processes sharing a daemon may
//! both build it; either result is the same recipe). A failed build is an error naming the image and the
//! build's last lines; there is never a fallback to another image.
//!
//! This module must not run workers (see [`super::docker`]) and never reads a dependency file
//! through a symlink: a repository could point one at a host file to have it copied into an
//! image the worker can read.

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
const TAG_SCHEME: &str = "forgeward-image-v1";

/// Hex digits of the sha256 kept in a tag: 128 bits, far beyond any chance of two recipes
/// meeting, and a tag short enough to read.
const TAG_HEX: usize = 32;

/// The largest dependency file copied into a build context: lock files of big Node projects
/// run to a few megabytes; anything far past that is not a dependency list.
const MAX_DEPENDENCY_FILE: u64 = 32 * 1024 * 1024;

/// How long one image build may take: a Python or Node image with many dependencies builds in
/// minutes; past this the registry or the build is stuck.
const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Lines of the build's output an error quotes.
const LOG_TAIL_LINES: usize = 12;

/// What a checkout needs to run its tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// None recognised: the sandbox base (bash, coreutils, git).
    Plain,
    /// `requirements*.txt` or `pyproject.toml`.
    Python,
    /// `package-lock.json`.
    Node,
    /// `go.mod`.
    Go,
    /// `Cargo.lock`.
    Rust,
}

impl Language {
    /// The language of the checkout at `dir`, from the files at its root (in this order:
    /// Python, Node, Go, Rust). Only regular files count; a symlink is not looked through.
    pub fn detect(dir: &Path) -> Language {
        let is_file = |name: &str| {
            dir.join(name)
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_file())
        };
        if !python_requirements(dir).is_empty() || is_file("pyproject.toml") {
            Language::Python
        } else if is_file("package-lock.json") {
            Language::Node
        } else if is_file("go.mod") {
            Language::Go
        } else if is_file("Cargo.lock") {
            Language::Rust
        } else {
            Language::Plain
        }
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

    /// The files at the checkout's root its image is built from: `(required, name)`.
    fn dependency_files(self, dir: &Path) -> Vec<(bool, String)> {
        let fixed = |names: &[(bool, &str)]| -> Vec<(bool, String)> {
            names.iter().map(|(r, n)| (*r, n.to_string())).collect()
        };
        match self {
            Language::Plain => Vec::new(),
            Language::Python => {
                let mut files: Vec<(bool, String)> = python_requirements(dir)
                    .into_iter()
                    .map(|n| (true, n))
                    .collect();
                files.push((false, "pyproject.toml".into()));
                files
            }
            Language::Node => fixed(&[(true, "package.json"), (true, "package-lock.json")]),
            Language::Go => fixed(&[(true, "go.mod"), (false, "go.sum")]),
            Language::Rust => fixed(&[(true, "Cargo.toml"), (true, "Cargo.lock")]),
        }
    }
}

/// `requirements*.txt` at the root of `dir`, sorted.
fn python_requirements(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("requirements") && n.ends_with(".txt"))
        .collect();
    names.sort();
    names
}

/// Why no image could be had for a checkout.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("base image {base} not found: build or pull it first ({reason})")]
    BaseMissing { base: String, reason: String },
    #[error("image {image} not found: build or pull it first ({reason})")]
    ImageMissing { image: String, reason: String },
    #[error("dependency file {path}: {reason}")]
    DependencyFile { path: String, reason: String },
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

    /// The ID of the image to run the worker in for the checkout at `checkout`, built first if
    /// it does not exist yet.
    pub async fn image_for(&self, checkout: &Path) -> Result<String, ImageError> {
        let language = Language::detect(checkout);
        let files = read_dependency_files(checkout, language)?;
        let (sandbox_tag, sandbox_id) = self.sandbox().await?;
        if language == Language::Plain {
            return Ok(sandbox_id);
        }
        // FROM the sandbox image's tag, which is content-addressed: a builder may not resolve
        // a bare image ID on a FROM line.
        let (_, id) = self
            .ensure(language, &sandbox_id, &sandbox_tag, &files)
            .await?;
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
        self.ensure(Language::Plain, &base_id, &self.base, &[])
            .await
    }

    /// The tag and ID of the image for this recipe, built if the tag does not exist yet.
    async fn ensure(
        &self,
        language: Language,
        base_id: &str,
        from: &str,
        files: &[(String, Vec<u8>)],
    ) -> Result<(String, String), ImageError> {
        let tag = image_tag(language, base_id, files);
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
        self.build(&tag, language.dockerfile(), from, files).await?;
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

    async fn build(
        &self,
        tag: &str,
        dockerfile: &str,
        from: &str,
        files: &[(String, Vec<u8>)],
    ) -> Result<(), ImageError> {
        let dir = BuildDir::new(self.seq.fetch_add(1, Ordering::Relaxed))
            .map_err(|e| ImageError::Docker(format!("making a build context: {e}")))?;
        let context = dir.path.join("context");
        let write = || -> std::io::Result<()> {
            std::fs::create_dir(&context)?;
            std::fs::write(dir.path.join("Dockerfile"), dockerfile)?;
            for (name, bytes) in files {
                std::fs::write(context.join(name), bytes)?;
            }
            Ok(())
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

/// `repository:<sha256 over the recipe>`: the Dockerfile, the base image's ID and each
/// dependency file by name and content.
pub fn image_tag(language: Language, base_id: &str, files: &[(String, Vec<u8>)]) -> String {
    let mut hash = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    field(TAG_SCHEME.as_bytes());
    field(language.dockerfile().as_bytes());
    field(base_id.as_bytes());
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, bytes) in sorted {
        field(name.as_bytes());
        field(bytes);
    }
    let digest = hash.finalize();
    let mut hex = String::with_capacity(TAG_HEX);
    for byte in digest.iter().take(TAG_HEX / 2) {
        let _ = write!(hex, "{byte:02x}");
    }
    format!("{}:{hex}", language.repository())
}

/// Reads the language's dependency files from the checkout's root: regular files only, never
/// through a symlink, each at most [`MAX_DEPENDENCY_FILE`].
pub fn read_dependency_files(
    checkout: &Path,
    language: Language,
) -> Result<Vec<(String, Vec<u8>)>, ImageError> {
    let mut files = Vec::new();
    for (required, name) in language.dependency_files(checkout) {
        let path = checkout.join(&name);
        let fail = |reason: String| ImageError::DependencyFile {
            path: name.clone(),
            reason,
        };
        let meta = match path.symlink_metadata() {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => continue,
            Err(e) => return Err(fail(e.to_string())),
        };
        if meta.file_type().is_symlink() {
            return Err(fail(
                "is a symlink; dependency files must be regular files".into(),
            ));
        }
        if !meta.is_file() {
            return Err(fail("is not a regular file".into()));
        }
        if meta.len() > MAX_DEPENDENCY_FILE {
            return Err(fail(format!(
                "is {} bytes, more than the {MAX_DEPENDENCY_FILE} a dependency file may have",
                meta.len()
            )));
        }
        let bytes = std::fs::read(&path).map_err(|e| fail(e.to_string()))?;
        files.push((name, bytes));
    }
    Ok(files)
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
