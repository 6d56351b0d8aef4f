//! Test repositories on disk, driven through the real `git` and the real `forgeward` binary.
//!
//! Every command runs with a cleared environment: a temporary `HOME` holding the only git
//! configuration, no system configuration, `NO_COLOR`, and a `PATH` chosen by the caller. Tests
//! therefore do not depend on the machine or the user running them.
//!
//! `eventually` is how a test waits for something to happen.

#![allow(dead_code)] // Each test module uses its own share of the helpers.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The binary under test.
pub const FORGEWARD: &str = env!("CARGO_BIN_EXE_forgeward");

/// A sha that is all zeros: git's "no commit" in pre-push input.
pub const ZERO: &str = "0000000000000000000000000000000000000000";

/// What a command did: its exit code and what it printed.
pub struct Output {
    pub code: i32,
    /// Standard output, lossily decoded (see `raw_stdout` for the bytes).
    pub stdout: String,
    pub stderr: String,
    pub raw_stdout: Vec<u8>,
}

impl Output {
    fn from(out: std::process::Output) -> Output {
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            raw_stdout: out.stdout,
        }
    }

    pub fn stdout_lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    pub fn stderr_lines(&self) -> Vec<&str> {
        self.stderr.lines().collect()
    }

    /// The lines of stderr that report a flag (`path[:line]: rule: message`).
    pub fn stderr_flags(&self) -> Vec<&str> {
        self.stderr.lines().filter(|l| is_flag_line(l)).collect()
    }

    /// Standard output parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{self:?}"))
    }

    /// Asserts a usage or IO error: exit 2 and exactly one line on stderr, `forgeward: error: …`.
    /// Returns the message after the prefix.
    pub fn one_line_error(&self) -> &str {
        assert_eq!(self.code, 2, "expected an error exit:\n{self:?}");
        let lines = self.stderr_lines();
        assert_eq!(lines.len(), 1, "expected one line on stderr:\n{self:?}");
        lines[0]
            .strip_prefix("forgeward: error: ")
            .unwrap_or_else(|| panic!("expected `forgeward: error: …`:\n{self:?}"))
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "exit code: {}\n--- stdout ---\n{}--- stderr ---\n{}--------------",
            self.code, self.stdout, self.stderr
        )
    }
}

/// True for a line of a text report that is a flag rather than a summary or an allow.
pub fn is_flag_line(line: &str) -> bool {
    const RULES: [&str; 4] = [
        "skip-marker",
        "stubbed-import",
        "shadow-module",
        "stray-backup",
    ];
    RULES.iter().any(|r| line.contains(&format!(": {r}: "))) && !line.contains(": allowed: ")
}

/// Joins lines into a file's text, each ending in `\n`.
pub fn lines(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A git repository (with a working tree) in a temporary directory of its own, beside the
/// temporary `HOME` its commands run with and, once asked for, a bare remote.
pub struct TestRepo {
    /// Removed when the repository is dropped.
    _tmp: TempDir,
    /// The temporary directory, canonical (as git and forgeward print paths).
    dir: PathBuf,
    root: PathBuf,
}

impl TestRepo {
    /// An empty repository on branch `main`.
    pub fn new() -> TestRepo {
        let tmp = tempfile::Builder::new()
            .prefix("forgeward-it-")
            .tempdir()
            .expect("creating a temporary directory");
        let dir = tmp
            .path()
            .canonicalize()
            .expect("a canonical temporary directory");
        let home = dir.join("home");
        std::fs::create_dir(&home).expect("creating HOME");
        std::fs::write(
            home.join(".gitconfig"),
            "[user]\n\tname = Forgeward Tests\n\temail = tests@forgeward.invalid\n\
             [init]\n\tdefaultBranch = main\n\
             [commit]\n\tgpgsign = false\n\
             [core]\n\tautocrlf = false\n",
        )
        .expect("writing .gitconfig");
        let root = dir.join("repo");
        let repo = TestRepo {
            _tmp: tmp,
            dir,
            root,
        };
        let out = repo.run_in(
            &repo.dir,
            "git",
            ["init", "-q", "repo"],
            None,
            &default_path(),
        );
        assert_eq!(out.code, 0, "git init failed:\n{out:?}");
        repo
    }

    /// The working tree's top directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A path inside the working tree.
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join(rel)
    }

    /// A path beside the repository, in the same temporary directory (outside the repository).
    pub fn outside(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes a file of the working tree, creating its directories.
    pub fn write(&self, rel: impl AsRef<Path>, content: impl AsRef<[u8]>) -> &Self {
        let path = self.path(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("creating directories");
        }
        std::fs::write(&path, content).unwrap_or_else(|e| panic!("writing {path:?}: {e}"));
        self
    }

    /// Writes an executable script (a hook) at `rel`.
    pub fn write_script(&self, rel: impl AsRef<Path>, content: impl AsRef<[u8]>) -> &Self {
        use std::os::unix::fs::PermissionsExt;
        self.write(&rel, content);
        std::fs::set_permissions(self.path(rel), std::fs::Permissions::from_mode(0o755))
            .expect("making a script executable");
        self
    }

    /// Creates a directory of the working tree (and its parents).
    pub fn mkdir(&self, rel: impl AsRef<Path>) -> &Self {
        std::fs::create_dir_all(self.path(rel)).expect("creating directories");
        self
    }

    pub fn read(&self, rel: impl AsRef<Path>) -> Vec<u8> {
        let path = self.path(rel);
        std::fs::read(&path).unwrap_or_else(|e| panic!("reading {path:?}: {e}"))
    }

    /// Creates a symlink in the working tree pointing at `target`.
    pub fn symlink(&self, rel: impl AsRef<Path>, target: impl AsRef<Path>) -> &Self {
        let path = self.path(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("creating directories");
        }
        std::os::unix::fs::symlink(target, &path).expect("creating a symlink");
        self
    }

    /// Stages everything and commits it; returns the new commit's sha.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.rev("HEAD")
    }

    /// Creates a branch at `HEAD` and switches to it.
    pub fn branch(&self, name: &str) -> &Self {
        self.git(&["checkout", "-q", "-b", name]);
        self
    }

    pub fn checkout(&self, rev: &str) -> &Self {
        self.git(&["checkout", "-q", rev]);
        self
    }

    /// The sha a revision names.
    pub fn rev(&self, rev: &str) -> String {
        self.git(&["rev-parse", "--verify", rev]).trim().to_owned()
    }

    /// Runs git in the working tree, asserting success; returns its stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        assert_eq!(out.code, 0, "git {args:?} failed:\n{out:?}");
        out.stdout
    }

    /// Runs git in the working tree, whatever its outcome.
    pub fn git_output(&self, args: &[&str]) -> Output {
        self.run_in(&self.root, "git", args, None, &default_path())
    }

    /// `git push …` with `forgeward` on the `PATH`, as a user who installed it would run it.
    pub fn push(&self, args: &[&str]) -> Output {
        let mut argv = vec!["push"];
        argv.extend_from_slice(args);
        self.run_in(&self.root, "git", &argv, None, &path_with_forgeward())
    }

    /// The temporary `HOME` the commands run with.
    pub fn home(&self) -> PathBuf {
        self.dir.join("home")
    }

    /// Runs `forgeward` in the working tree.
    pub fn forgeward(&self, args: &[&str]) -> Output {
        self.forgeward_in(&self.root, args)
    }

    /// Runs `forgeward` in `dir`.
    pub fn forgeward_in(&self, dir: &Path, args: &[&str]) -> Output {
        self.run_in(dir, FORGEWARD, args, None, &default_path())
    }

    /// Runs `forgeward` in the working tree with `stdin` as its input.
    pub fn forgeward_stdin(&self, args: &[&str], stdin: &str) -> Output {
        self.run_in(
            &self.root,
            FORGEWARD,
            args,
            Some(stdin.as_bytes()),
            &default_path(),
        )
    }

    /// Runs any program in `dir` with the tests' environment and the `PATH` given.
    pub fn run_in<I, S>(
        &self,
        dir: &Path,
        program: impl AsRef<OsStr>,
        args: I,
        stdin: Option<&[u8]>,
        path: &OsStr,
    ) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let home = self.dir.join("home");
        let mut cmd = Command::new(program.as_ref());
        cmd.args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", path)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("NO_COLOR", "1")
            .env("LC_ALL", "C")
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("running {:?}: {e}", program.as_ref()));
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().expect("piped stdin");
            // A hook may exit without reading its input (as git allows): a closed pipe is fine.
            if let Err(e) = pipe.write_all(input) {
                assert_eq!(
                    e.kind(),
                    std::io::ErrorKind::BrokenPipe,
                    "writing stdin: {e}"
                );
            }
        }
        Output::from(child.wait_with_output().expect("waiting for the command"))
    }

    /// Creates an empty bare repository beside this one and adds it as `origin`; returns its
    /// path (also the URL git pushes to).
    pub fn add_remote(&self) -> PathBuf {
        let remote = self.outside("remote.git");
        let out = self.run_in(
            &self.dir,
            "git",
            ["init", "-q", "--bare", "remote.git"],
            None,
            &default_path(),
        );
        assert_eq!(out.code, 0, "git init --bare failed:\n{out:?}");
        self.git(&[
            "remote",
            "add",
            "origin",
            remote.to_str().expect("UTF-8 temp path"),
        ]);
        remote
    }

    /// The sha of a branch on the remote added by [`TestRepo::add_remote`], if it has it.
    pub fn remote_branch(&self, branch: &str) -> Option<String> {
        let remote = self.outside("remote.git");
        let git_dir = format!("--git-dir={}", remote.display());
        let refname = format!("refs/heads/{branch}");
        let out = self.run_in(
            &self.dir,
            "git",
            [
                git_dir.as_str(),
                "rev-parse",
                "--verify",
                "--quiet",
                refname.as_str(),
            ],
            None,
            &default_path(),
        );
        (out.code == 0).then(|| out.stdout.trim().to_owned())
    }
}

/// The `PATH` the tests were started with.
pub fn default_path() -> OsString {
    std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"))
}

/// The tests' `PATH` with the directory of the built `forgeward` first.
pub fn path_with_forgeward() -> OsString {
    let bin_dir = Path::new(FORGEWARD)
        .parent()
        .expect("the binary has a directory");
    let path = default_path();
    let dirs = std::iter::once(bin_dir.to_path_buf()).chain(std::env::split_paths(&path));
    std::env::join_paths(dirs).expect("a valid PATH")
}

/// The tests' `PATH` without any directory that holds a `forgeward` executable.
pub fn path_without_forgeward() -> OsString {
    let path = default_path();
    let dirs = std::env::split_paths(&path).filter(|d| !d.join("forgeward").exists());
    std::env::join_paths(dirs).expect("a valid PATH")
}

/// True when the file at `path` has an execute bit set.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// Asks `probe` until it answers `Ok`, and returns that answer.
///
/// The probe is asked at once, then every 100 ms: often enough for a test waiting seconds, rare
/// enough for a probe that reads a store or a log. Each `Err` says what the probe saw instead.
/// When `within` has passed with no `Ok`, the test fails with `what` (what did not happen, as the
/// failure should read), the time waited and the last `Err`.
pub async fn eventually<T, E: fmt::Display>(
    what: &str,
    within: Duration,
    mut probe: impl AsyncFnMut() -> Result<T, E>,
) -> T {
    let started = Instant::now();
    loop {
        match probe().await {
            Ok(done) => return done,
            Err(seen) if started.elapsed() >= within => {
                panic!("{what} (waited {:.1?}):\n{seen}", started.elapsed())
            }
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A test file as `main` has it.
pub const TEST_X: &str = "\
import pytest

def test_parse():
    assert parse('a') == ['a']
";

/// The same test file, with the failing test skipped (line 3).
pub const TEST_X_SKIPPED: &str = "\
import pytest

@pytest.mark.skip
def test_parse():
    assert parse('a') == ['a']
";

/// A TLS server's configuration for `host` (a name or an IP address), its certificate from a CA
/// made for the test, and that CA's PEM for the client to trust.
pub fn test_tls_server(
    host: &str,
    ca_name: &str,
) -> (std::sync::Arc<rustls::ServerConfig>, String) {
    let ca_key = rcgen::KeyPair::generate().expect("a key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, ca_name);
    let ca = ca_params.self_signed(&ca_key).expect("the CA");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().expect("a key");
    let leaf = rcgen::CertificateParams::new(vec![host.to_owned()])
        .expect("params")
        .signed_by(&leaf_key, &issuer)
        .expect("the server's certificate");
    let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
    )
    .expect("a TLS server");
    (std::sync::Arc::new(config), ca.pem())
}

/// A bot configuration that runs sandboxes on Docker, on the local base image
/// `tests/setup/docker.sh` builds, with limits the language images' suites fit in.
pub fn docker_config() -> tempfile::NamedTempFile {
    let base = std::env::var("FORGEWARD_TEST_DOCKER_BASE").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_DOCKER_BASE is not set: run `eval \"$(bash tests/setup/docker.sh)\"` (tests/run does)")
    });
    let config = tempfile::NamedTempFile::new().expect("a config file");
    std::fs::write(
        config.path(),
        format!(
            "[sandbox]\nbackend = \"docker\"\ndocker_base = \"{base}\"\nmemory = \"2G\"\ndisk = \"512M\"\n"
        ),
    )
    .expect("writing the config");
    config
}
