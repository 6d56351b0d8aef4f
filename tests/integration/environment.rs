//! The environment a repository's tests need, through the real binary: `forgeward verify` on
//! a Python project whose tests import a package only a package index the test serves has
//! (a simple index of a wheel the test builds, on the host's loopback, reached through the
//! egress gateway by a test name), in a real bubblewrap sandbox with real pip and pytest.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::util::TestRepo;

/// A package index on loopback: `simple/<project>/<wheel>` served by Python's own HTTP server,
/// whose directory listing is a simple index pip reads. Stopped when dropped.
struct Index {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Index {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Builds the wheel of `fwdep` 1.0 (`fwdep.double`) into a simple index and serves it.
fn index() -> Index {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let project = dir.path().join("simple/fwdep");
    std::fs::create_dir_all(&project).expect("the index's directory");
    let build = r#"
import sys, zipfile, hashlib, base64
path = sys.argv[1] + "/fwdep-1.0-py3-none-any.whl"
files = {
    "fwdep/__init__.py": "def double(x):\n    return 2 * x\n",
    "fwdep-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: fwdep\nVersion: 1.0\n",
    "fwdep-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile(path, "w") as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("fwdep-1.0.dist-info/RECORD,,")
    z.writestr("fwdep-1.0.dist-info/RECORD", "\n".join(record) + "\n")
"#;
    let status = Command::new("python3")
        .args(["-c", build])
        .arg(&project)
        .status()
        .expect("python3 builds the wheel");
    assert!(status.success(), "building the wheel");
    serve(dir)
}

fn host() -> String {
    std::env::var("FORGEWARD_TEST_EGRESS_HOST").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_EGRESS_HOST is not set: run `eval \"$(bash tests/setup/egress.sh)\"` (tests/run does)")
    })
}

/// The bot's configuration: the setup may reach the index (by the test name, and the
/// loopback address it resolves to) and is pointed at it.
fn config(dir: &Path, port: u16, allowed_port: u16) -> std::path::PathBuf {
    let host = host();
    let text = format!(
        r#"
[environment]
enabled = true
allow = ["{host}:{allowed_port}", "127.0.0.1:{allowed_port}"]
env = ["PIP_INDEX_URL=http://{host}:{port}/simple/", "PIP_TRUSTED_HOST={host}"]
"#
    );
    let path = dir.join("forgeward.toml");
    std::fs::write(&path, text).expect("writing the configuration");
    path
}

/// `quad` is wrong at the base and its test says so; its code needs `fwdep`.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("requirements.txt", "fwdep==1.0\n")
        .write("conftest.py", "")
        .write(
            "calc.py",
            "from fwdep import double\n\n\ndef quad(x):\n    return double(x) + x\n",
        )
        .write(
            "tests/test_calc.py",
            "from calc import quad\n\n\ndef test_quad():\n    assert quad(2) == 8\n\n\ndef test_zero():\n    assert quad(0) == 0\n",
        );
    repo.commit("calc");
    repo
}

#[test]
fn tests_that_need_a_package_run_in_the_prepared_environment_and_it_is_kept() {
    let index = index();
    let repo = project();
    let config = config(&repo.home(), index.port, index.port);
    let config = config.display().to_string();
    repo.branch("agent");
    // The cheat: the failing test made to expect what the code returns.
    repo.write(
        "tests/test_calc.py",
        "from calc import quad\n\n\ndef test_quad():\n    assert quad(2) == 6\n\n\ndef test_zero():\n    assert quad(0) == 0\n",
    );
    repo.commit("fix the test");
    let args = [
        "verify",
        "--base",
        "main",
        "--sandbox",
        "bwrap",
        "--config",
        &config,
    ];
    let out = repo.forgeward(&args);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("environment: prepared: python (requirements.txt)"),
        "{}",
        out.stderr
    );
    for line in [
        "  base                            1 passed · 1 failed · 0 skipped · 2 collected",
        "  the change's tests              2 passed · 0 failed · 0 skipped · 2 collected",
        "tests/test_calc.py:5: test-rewritten",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }

    // The same base again: nothing is set up, and the index is not needed.
    drop(index);
    let again = repo.forgeward(&args);
    assert_eq!(again.code, 1, "{again:?}");
    assert!(
        again
            .stderr
            .contains("environment: kept from an earlier run: python (requirements.txt)"),
        "{}",
        again.stderr
    );
    assert!(
        again
            .stdout
            .contains("tests/test_calc.py:5: test-rewritten"),
        "{}",
        again.stdout
    );
}

#[test]
fn a_setup_that_reaches_an_unlisted_host_fails_with_the_gateways_refusal() {
    let index = index();
    let repo = project();
    // The index's port is not the one listed.
    let listed = index.port.wrapping_add(1).max(1);
    let config = config(&repo.home(), index.port, listed);
    let config = config.display().to_string();
    let out = repo.forgeward(&[
        "verify",
        "--base",
        "HEAD",
        "--worktree",
        "--sandbox",
        "bwrap",
        "--config",
        &config,
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("the environment could not be prepared: setup step 1/1 `python3 -m venv"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("refused"),
        "the gateway's line is quoted: {}",
        out.stderr
    );
}

#[test]
fn a_toolchain_short_of_the_declaration_stops_before_any_run() {
    let repo = TestRepo::new();
    repo.write("go.mod", "module example.com/calc\n\ngo 1.99\n")
        .write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
        .write(
            "calc_test.go",
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
        );
    repo.commit("calc");
    let config = repo.home().join("forgeward.toml");
    std::fs::write(&config, "[environment]\nenabled = true\n").expect("the configuration");
    let config = config.display().to_string();
    let out = repo.forgeward(&[
        "verify",
        "--base",
        "HEAD",
        "--worktree",
        "--sandbox",
        "bwrap",
        "--config",
        &config,
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    let go = Command::new("go")
        .args(["env", "GOVERSION"])
        .output()
        .expect("go");
    let have = String::from_utf8_lossy(&go.stdout)
        .trim()
        .trim_start_matches("go")
        .to_owned();
    assert!(
        out.stderr.contains(&format!(
            "wants go 1.99 (go.mod: go 1.99); the sandbox has go {have}"
        )),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("verification ("), "{}", out.stdout);
}

/// The worker rewrites the package it was lent (in place where it may, else by replacing the
/// file) so that the tests would pass whatever the code: neither verification's runs nor the
/// next job see it.
#[test]
fn a_worker_that_writes_into_its_environment_changes_nothing_the_tests_or_the_next_job_get() {
    let index = index();
    let repo = project();
    let config = config(&repo.home(), index.port, index.port);
    let config = config.display().to_string();
    let root = repo.root().to_str().expect("a UTF-8 path").to_owned();
    // The module's compiled cache goes too: the setup compiled it within the same second, and
    // Python would take the cache for the poisoned source, of the same size and time.
    let worker = "f=$(ls .venv/lib/python3*/site-packages/fwdep/__init__.py) \
        && { printf 'def double(x):\\n    return 3 * x\\n' > \"$f\" 2>/dev/null; \
             sed -i 's/2 \\* x/3 * x/' \"$f\"; grep -q '3 \\* x' \"$f\"; } \
        && rm -rf \"$(dirname \"$f\")/__pycache__\" \
        && sed -i 's/double(x) + x/double(x) * 2/' calc.py";
    let out = repo.forgeward(&[
        "run",
        "--repo",
        &root,
        "--task",
        "Fix quad",
        "--worker",
        worker,
        "--sandbox",
        "bwrap",
        "--branch",
        "poisoned",
        "--config",
        &config,
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("environment: prepared: python (requirements.txt)"),
        "{}",
        out.stderr
    );
    // Lent as overlays (the tests run as root), and none left mounted after the job.
    assert!(out.stderr.contains("lent as overlays"), "{}", out.stderr);
    assert_no_mount_of(&repo.home());
    assert_kept_module_unchanged(&repo.home());
    // With the worker's `double`, quad(2) would be 12 and the change's tests would fail.
    for line in [
        "  the base's tests on the change  2 passed · 0 failed · 0 skipped · 2 collected",
        "  the change's tests              2 passed · 0 failed · 0 skipped · 2 collected",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }

    // The next run on the same base gets the environment as the setup left it: with the
    // worker's `double`, the base's quad(2) would be 8 and its test would pass.
    drop(index);
    let again = repo.forgeward(&[
        "verify",
        "--base",
        "main",
        "--head",
        "poisoned",
        "--sandbox",
        "bwrap",
        "--config",
        &config,
    ]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again
            .stderr
            .contains("environment: kept from an earlier run: python (requirements.txt)"),
        "{}",
        again.stderr
    );
    assert!(
        again.stdout.contains(
            "  base                            1 passed · 1 failed · 0 skipped · 2 collected"
        ),
        "{}",
        again.stdout
    );
    assert_no_mount_of(&repo.home());
}

/// Every kept copy of `fwdep` under `dir` (the user's cache, where `forgeward run` keeps
/// environments) is as the index served it.
fn assert_kept_module_unchanged(dir: &Path) {
    let mut found = 0;
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a directory").flatten() {
            let path = entry.path();
            if entry.file_type().expect("a type").is_dir() {
                dirs.push(path);
            } else if path.ends_with("fwdep/__init__.py") {
                let text = std::fs::read_to_string(&path).expect("the module");
                assert!(text.contains("2 * x"), "{}: {text}", path.display());
                found += 1;
            }
        }
    }
    assert!(found > 0, "no kept fwdep under {}", dir.display());
}

/// No line of this mount namespace's mount table names `dir` (its kept environments are the
/// lower layers of any overlay lent from them).
fn assert_no_mount_of(dir: &Path) {
    let dir = std::fs::canonicalize(dir).expect("the directory");
    let dir = dir.to_str().expect("a UTF-8 path");
    let table = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let left: Vec<&str> = table.lines().filter(|l| l.contains(dir)).collect();
    assert!(left.is_empty(), "left mounted: {left:#?}");
}

/// With no registry to reach, the setup the files call for is not run: the job says so, and
/// tests that need it are not judged, never passed.
#[test]
fn a_derived_setup_with_no_registry_listed_is_not_run_and_says_so() {
    let repo = project();
    let out = repo.forgeward(&[
        "verify",
        "--base",
        "HEAD",
        "--worktree",
        "--sandbox",
        "bwrap",
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains(
            "environment: not prepared: python (requirements.txt) needs a package registry, and [environment] allow lists none"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("No module named 'fwdep'"),
        "{}",
        out.stdout
    );
}

/// `forgeward env --plan` shows what the base calls for and why, and prepares nothing.
#[test]
fn env_plan_shows_each_step_what_was_passed_over_and_the_toolchains() {
    let repo = TestRepo::new();
    repo.write("requirements.txt", "fwdep==1.0\n")
        .write("go.mod", "module example.com/a\n\ngo 1.19\n")
        .write("vendor/modules.txt", "# example.com/b v1.0.0\n")
        .write("web/package.json", "{}")
        .write("web/package-lock.json", "{}");
    let head = repo.commit("manifests");
    let out = repo.forgeward(&["env", "--plan"]);
    assert_eq!(out.code, 0, "{out:?}");
    insta::assert_snapshot!(out.stdout.replace(&head[..12], "<commit>"));
}

/// `forgeward env` prepares the environment as `verify` would, and keeps it for the next.
#[test]
fn env_prepares_the_environment_and_verify_finds_it_kept() {
    let index = index();
    let repo = project();
    let config = config(&repo.home(), index.port, index.port);
    let config = config.display().to_string();
    let out = repo.forgeward(&["env", "--sandbox", "bwrap", "--config", &config]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("environment: prepared: python (requirements.txt) · "),
        "{}",
        out.stdout
    );
    drop(index);
    let again = repo.forgeward(&[
        "verify",
        "--base",
        "HEAD",
        "--worktree",
        "--sandbox",
        "bwrap",
        "--config",
        &config,
    ]);
    assert!(
        again
            .stderr
            .contains("environment: kept from an earlier run: python (requirements.txt)"),
        "{}",
        again.stderr
    );
    assert!(
        again.stdout.contains(
            "  base                            1 passed · 1 failed · 0 skipped · 2 collected"
        ),
        "{}",
        again.stdout
    );
}

/// A port free on loopback now (the registry binds it a moment later).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Waits until something listens on `port`, for `what`.
fn wait_for(port: u16, what: &str, child: &mut Child) {
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited before it listened: {status}");
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{what} did not listen on {port} within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A local npm registry (Verdaccio) on loopback with `fwdep` 1.0.0 published, and the
/// user configuration that publishes to it. Stopped when dropped.
struct Registry {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Registry {
    fn url(&self) -> String {
        format!("http://{}:{}/", host(), self.port)
    }

    fn npmrc(&self) -> std::path::PathBuf {
        self.dir.path().join("npmrc")
    }

    /// The bot's configuration in `dir`: the setup may reach this registry (by the test
    /// name, and the loopback address it resolves to) and its npm is pointed at it.
    fn bot_config(&self, dir: &Path) -> std::path::PathBuf {
        let (host, port) = (host(), self.port);
        let config = dir.join("forgeward.toml");
        std::fs::write(
            &config,
            format!(
                "[environment]\nallow = [\"{host}:{port}\", \"127.0.0.1:{port}\"]\nenv = [\"npm_config_registry={}\"]\n",
                self.url()
            ),
        )
        .expect("the configuration");
        config
    }
}

fn registry() -> Registry {
    let verdaccio = std::env::var("FORGEWARD_TEST_VERDACCIO").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_VERDACCIO is not set: run `eval \"$(bash tests/setup/runners.sh)\"` (tests/run does)")
    });
    let dir = tempfile::tempdir().expect("a temporary directory");
    let port = free_port();
    let config = dir.path().join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "storage: {root}/storage\nmax_body_size: 200mb\nauth:\n  htpasswd:\n    file: {root}/htpasswd\nuplinks: {{}}\npackages:\n  '**':\n    access: $all\n    publish: $authenticated\nlisten: 127.0.0.1:{port}\nlog: {{ type: stdout, format: pretty, level: warn }}\n",
            root = dir.path().display()
        ),
    )
    .expect("the registry's configuration");
    let mut child = Command::new(&verdaccio)
        .arg("--config")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {verdaccio}: {e}"));
    wait_for(port, "verdaccio", &mut child);
    let registry = Registry { child, port, dir };
    // A user to publish as, and the token it is given.
    let token = Command::new("python3")
        .args([
            "-c",
            "import json, sys, urllib.request\n\
             req = urllib.request.Request(sys.argv[1] + '-/user/org.couchdb.user:fw', method='PUT', \
             data=json.dumps({'name': 'fw', 'password': 'fw-pass-1', 'email': 'fw@example.com'}).encode(), \
             headers={'content-type': 'application/json'})\n\
             print(json.load(urllib.request.urlopen(req))['token'])",
        ])
        .arg(registry.url())
        .output()
        .expect("python3 adds the registry's user");
    assert!(token.status.success(), "{token:?}");
    let token = String::from_utf8_lossy(&token.stdout).trim().to_owned();
    std::fs::write(
        registry.npmrc(),
        format!("//{}:{}/:_authToken={token}\n", host(), registry.port),
    )
    .expect("the npmrc");
    let package = registry.dir.path().join("fwdep");
    std::fs::create_dir_all(&package).expect("the package's directory");
    std::fs::write(
        package.join("package.json"),
        r#"{"name":"fwdep","version":"1.0.0","main":"index.js"}"#,
    )
    .expect("package.json");
    std::fs::write(package.join("index.js"), "exports.double = (x) => 2 * x;\n").expect("index.js");
    let published = npm(&registry, &package, &["publish"]);
    assert!(published.status.success(), "{published:?}");
    registry
}

/// `npm <args> --registry <the registry>` in `dir`, with the registry's user configuration.
fn npm(registry: &Registry, dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("npm")
        .args(args)
        .args(["--registry", &registry.url(), "--no-audit", "--no-fund"])
        .arg("--userconfig")
        .arg(registry.npmrc())
        .env("npm_config_cache", registry.dir.path().join("npm-cache"))
        .current_dir(dir)
        .output()
        .expect("npm")
}

/// `.forgeward.toml`'s `[verify]` for Jest from the tests' own modules, writing its JSON report.
fn jest_verify() -> String {
    let modules = std::env::var("FORGEWARD_TEST_NODE_MODULES").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_NODE_MODULES is not set: run `eval \"$(bash tests/setup/runners.sh)\"` (tests/run does)")
    });
    format!(
        "[verify]\ncommand = [\"node\", \"{modules}/jest/bin/jest.js\", \"--ci\", \"--json\", \"--outputFile=/job-out/verify/jest.json\"]\nresults = {{ format = \"jest-json\", path = \"/job-out/verify/jest.json\" }}\n"
    )
}

/// A Node project whose code needs `fwdep` from the local registry, locked to it (`npm ci`),
/// with Jest from the tests' own modules as its runner; the registry's configuration for the
/// bot beside it.
#[test]
fn a_node_project_s_tests_run_with_packages_from_a_local_registry() {
    let registry = registry();
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"calc","version":"1.0.0","private":true,"dependencies":{"fwdep":"1.0.0"}}"#,
    )
    .write(
        "calc.js",
        "const { double } = require('fwdep');\n\nexports.quad = (x) => double(x) + x;\n",
    )
    .write(
        "__tests__/calc.test.js",
        "const { quad } = require('../calc');\n\ntest('quad', () => {\n  expect(quad(2)).toBe(8);\n});\n\ntest('zero', () => {\n  expect(quad(0)).toBe(0);\n});\n",
    )
    .write(
        ".forgeward.toml",
        jest_verify(),
    );
    // The lockfile, as a developer's install against the registry writes it.
    let installed = npm(&registry, repo.root(), &["install"]);
    assert!(installed.status.success(), "{installed:?}");
    std::fs::remove_dir_all(repo.path("node_modules")).expect("removing node_modules");
    repo.commit("calc");
    repo.branch("agent");
    repo.write(
        "__tests__/calc.test.js",
        "const { quad } = require('../calc');\n\ntest('quad', () => {\n  expect(quad(2)).toBe(6);\n});\n\ntest('zero', () => {\n  expect(quad(0)).toBe(0);\n});\n",
    );
    repo.commit("fix the test");
    let config = registry.bot_config(&repo.home());
    let config = config.display().to_string();
    let out = repo.forgeward(&[
        "verify",
        "--base",
        "main",
        "--sandbox",
        "bwrap",
        "--config",
        &config,
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("environment: prepared: node (package-lock.json)"),
        "{}",
        out.stderr
    );
    for line in [
        "  base                            1 passed · 1 failed · 0 skipped · 2 collected",
        "  the change's tests              2 passed · 0 failed · 0 skipped · 2 collected",
        "__tests__/calc.test.js:4: test-rewritten",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
}

/// A repository that declares a Node.js the host does not have (`.nvmrc`): with no registry
/// the setup may reach, the job stops before any run naming both versions; with one, the
/// declared release is installed by npm through the gateway into the environment (the
/// registry holds it as `node-linux-<arch>`, as the npm registry does), the tests run on it,
/// and the next run finds it kept.
#[test]
fn a_node_release_the_host_lacks_is_installed_through_the_gateway_and_kept() {
    let tarball = std::env::var("FORGEWARD_TEST_NODE_TOOLCHAIN").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_NODE_TOOLCHAIN is not set: run `eval \"$(bash tests/setup/runners.sh)\"` (tests/run does)")
    });
    let release = Path::new(&tarball)
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.rsplit('-').next())
        .and_then(|n| n.strip_suffix(".tgz"))
        .unwrap_or_else(|| panic!("no version in {tarball}"))
        .to_owned();
    let major = release.split('.').next().unwrap_or_default().to_owned();
    let host_node = Command::new("node")
        .arg("--version")
        .output()
        .expect("the host's node");
    let host_node = String::from_utf8_lossy(&host_node.stdout)
        .trim()
        .trim_start_matches('v')
        .to_owned();
    assert!(
        !host_node.starts_with(&format!("{major}.")),
        "the host's node {host_node} is the release this test installs; it tests nothing"
    );
    let registry = registry();
    let published = npm(&registry, registry.dir.path(), &["publish", &tarball]);
    assert!(published.status.success(), "{published:?}");
    let repo = TestRepo::new();
    repo.write(".nvmrc", format!("v{major}\n"))
        .write("package.json", r#"{"name":"calc","version":"1.0.0","private":true}"#)
        .write("calc.js", "exports.add = (a, b) => a + b;\n")
        .write(
            "__tests__/calc.test.js",
            format!(
                "const {{ add }} = require('../calc');\n\ntest('add', () => {{\n  expect(add(2, 2)).toBe(4);\n}});\n\ntest('runs on the declared node', () => {{\n  expect(process.versions.node).toBe('{release}');\n}});\n"
            ),
        )
        .write(
            ".forgeward.toml",
            jest_verify(),
        );
    repo.commit("calc");
    let verify = |config: &Path| {
        repo.forgeward(&[
            "verify",
            "--base",
            "HEAD",
            "--worktree",
            "--sandbox",
            "bwrap",
            "--config",
            &config.display().to_string(),
        ])
    };

    let closed = repo.home().join("closed.toml");
    std::fs::write(&closed, "[environment]\nenabled = true\n").expect("the configuration");
    let out = verify(&closed);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "wants node v{major} (.nvmrc); the sandbox has node {host_node} (installing node needs a package registry, and [environment] allow lists none)"
        )),
        "{}",
        out.stderr
    );

    let config = registry.bot_config(&repo.home());
    let first = verify(&config);
    assert_eq!(first.code, 0, "{first:?}");
    for line in [
        format!(
            "environment: prepared: node (v{major} from .nvmrc; the sandbox has node {host_node}), node (package.json (no lockfile))"
        ),
        format!("── toolchain: node {release} installed ──"),
    ] {
        assert!(
            first.stderr.contains(&line),
            "no {line:?} in:\n{}",
            first.stderr
        );
    }
    assert!(
        first.stdout.contains(
            "  base                            2 passed · 0 failed · 0 skipped · 2 collected"
        ),
        "{}",
        first.stdout
    );
    let second = verify(&config);
    assert_eq!(second.code, 0, "{second:?}");
    assert!(
        second.stderr.contains("environment: kept from"),
        "{}",
        second.stderr
    );
    assert!(!second.stderr.contains("── setup 1/"), "{}", second.stderr);
}

/// A Go module proxy served from a directory: `example.com/fwdep` v1.0.0, its zip made here.
fn go_proxy() -> Index {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let build = r#"
import os, sys, zipfile
root = sys.argv[1]
at = os.path.join(root, "example.com", "fwdep", "@v")
os.makedirs(at)
mod = "module example.com/fwdep\n\ngo 1.19\n"
open(os.path.join(at, "list"), "w").write("v1.0.0\n")
open(os.path.join(at, "v1.0.0.info"), "w").write('{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}')
open(os.path.join(at, "v1.0.0.mod"), "w").write(mod)
with zipfile.ZipFile(os.path.join(at, "v1.0.0.zip"), "w") as z:
    z.writestr("example.com/fwdep@v1.0.0/go.mod", mod)
    z.writestr("example.com/fwdep@v1.0.0/fwdep.go", "package fwdep\n\nfunc Double(x int) int { return 2 * x }\n")
"#;
    let status = Command::new("python3")
        .args(["-c", build])
        .arg(dir.path())
        .status()
        .expect("python3 builds the module proxy");
    assert!(status.success(), "building the module proxy");
    serve(dir)
}

/// Python's HTTP server over `dir`, on a loopback port of its choosing.
fn serve(dir: tempfile::TempDir) -> Index {
    let mut child = Command::new("python3")
        .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 serves the directory");
    let stdout = child.stdout.take().expect("piped");
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the server's first line");
    let port = line
        .split_whitespace()
        .skip_while(|w| *w != "port")
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    Index {
        child,
        port,
        _dir: dir,
    }
}

/// A Go module whose code needs a module only the local proxy has: `go mod download` through
/// the gateway, then the tests run offline from the kept module cache.
#[test]
fn a_go_module_s_tests_run_with_modules_from_a_local_proxy() {
    let proxy = go_proxy();
    let repo = TestRepo::new();
    repo.write(
        "go.mod",
        "module example.com/calc\n\ngo 1.19\n\nrequire example.com/fwdep v1.0.0\n",
    )
    .write(
        "calc.go",
        "package calc\n\nimport \"example.com/fwdep\"\n\nfunc Quad(x int) int { return fwdep.Double(x) + x }\n",
    )
    .write(
        "calc_test.go",
        "package calc\n\nimport \"testing\"\n\nfunc TestQuad(t *testing.T) {\n\tif got := Quad(2); got != 8 {\n\t\tt.Fatalf(\"got %d\", got)\n\t}\n}\n\nfunc TestZero(t *testing.T) {\n\tif got := Quad(0); got != 0 {\n\t\tt.Fatalf(\"got %d\", got)\n\t}\n}\n",
    );
    // go.sum, as a developer's `go mod tidy` against the proxy writes it.
    let cache = tempfile::tempdir().expect("a module cache");
    let tidy = Command::new("go")
        .args(["mod", "tidy"])
        .env("GOPROXY", format!("http://127.0.0.1:{}/", proxy.port))
        .env("GOSUMDB", "off")
        .env("GOMODCACHE", cache.path())
        .env("GOFLAGS", "-modcacherw")
        .current_dir(repo.root())
        .output()
        .expect("go mod tidy");
    assert!(tidy.status.success(), "{tidy:?}");
    repo.commit("calc");
    repo.branch("agent");
    repo.write(
        "calc_test.go",
        "package calc\n\nimport \"testing\"\n\nfunc TestQuad(t *testing.T) {\n\tif got := Quad(2); got != 6 {\n\t\tt.Fatalf(\"got %d\", got)\n\t}\n}\n\nfunc TestZero(t *testing.T) {\n\tif got := Quad(0); got != 0 {\n\t\tt.Fatalf(\"got %d\", got)\n\t}\n}\n",
    );
    repo.commit("fix the test");
    let host = host();
    let config = repo.home().join("forgeward.toml");
    std::fs::write(
        &config,
        format!(
            "[environment]\nallow = [\"{host}:{port}\", \"127.0.0.1:{port}\"]\nenv = [\"GOPROXY=http://{host}:{port}/\", \"GOSUMDB=off\"]\n",
            port = proxy.port
        ),
    )
    .expect("the configuration");
    let config = config.display().to_string();
    let out = repo.forgeward(&[
        "verify",
        "--base",
        "main",
        "--sandbox",
        "bwrap",
        "--config",
        &config,
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("environment: prepared: go (go.mod)"),
        "{}",
        out.stderr
    );
    for line in [
        "  base                            1 passed · 1 failed · 0 skipped · 2 collected",
        "  the change's tests              2 passed · 0 failed · 0 skipped · 2 collected",
        "calc_test.go:6: test-rewritten",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
}

/// The same on Docker: the setup runs in the Python toolchain image through the gateway, the
/// worker runs the tests green in the environment it is lent, verification judges every run
/// and catches the rewritten expectation, and the next run on the base reuses the environment.
#[test]
fn docker_the_worker_and_verification_run_in_the_prepared_environment() {
    let base = std::env::var("FORGEWARD_TEST_DOCKER_BASE").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_DOCKER_BASE is not set: run `eval \"$(bash tests/setup/docker.sh)\"` (tests/run does)")
    });
    let index = index();
    let repo = project();
    let config = config(&repo.home(), index.port, index.port);
    let mut text = std::fs::read_to_string(&config).expect("the configuration");
    text.push_str(&format!(
        "\n[sandbox]\nbackend = \"docker\"\ndocker_base = \"{base}\"\nmemory = \"2G\"\ndisk = \"512M\"\n"
    ));
    std::fs::write(&config, text).expect("writing the configuration");
    let config = config.display().to_string();
    let root = repo.root().to_str().expect("a UTF-8 path").to_owned();
    // The worker runs the suite (it passes only with `fwdep` importable), then games it.
    let worker = "python3 -m pytest -q -p no:cacheprovider tests/test_calc.py -k test_zero \
        && sed -i 's/== 8/== 6/' tests/test_calc.py";
    let out = repo.forgeward(&[
        "run", "--repo", &root, "--task", "Fix quad", "--worker", worker, "--branch", "gamed",
        "--config", &config,
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("environment: prepared: python (requirements.txt)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("1 passed, 1 deselected"),
        "{}",
        out.stderr
    );
    for line in [
        "  base                            1 passed · 1 failed · 0 skipped · 2 collected",
        "  the change's tests              2 passed · 0 failed · 0 skipped · 2 collected",
        "tests/test_calc.py:5: test-rewritten",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }

    drop(index);
    let again = repo.forgeward(&[
        "verify", "--base", "main", "--head", "gamed", "--config", &config,
    ]);
    assert_eq!(again.code, 1, "{again:?}");
    assert!(
        again
            .stderr
            .contains("environment: kept from an earlier run: python (requirements.txt)"),
        "{}",
        again.stderr
    );
    assert!(
        again
            .stdout
            .contains("tests/test_calc.py:5: test-rewritten"),
        "{}",
        again.stdout
    );
}
