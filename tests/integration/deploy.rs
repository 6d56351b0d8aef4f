//! `deploy/` through the real tools: `systemd-analyze verify` and `security` on the units and
//! every drop-in, `kubernetes-validate` on the manifests, `docker compose` bringing the stack up
//! (`compose`), and the units run by a real systemd in a container (`systemd`). Every setting
//! the deploy files give the bot is one it accepts.
//!
//! A missing tool fails its test with one line naming the setup script that installs it
//! (tests/setup/deploy.sh, tests/setup/docker.sh); none skips.

mod compose;
mod systemd;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

use crate::util::FORGEWARD;

/// Where the deploy files are.
fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

/// Runs `cmd`, or fails the test with one line when its program cannot be run at all.
fn run(cmd: &mut Command, hint: &str) -> Output {
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.output()
        .unwrap_or_else(|e| panic!("{program} cannot run ({e}): {hint}"))
}

/// What a finished command printed, for assertion messages.
fn printed(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd` and fails the test unless it succeeds; returns its standard output.
fn succeed(cmd: &mut Command, hint: &str) -> String {
    let described = format!("{cmd:?}");
    let out = run(cmd, hint);
    assert!(out.status.success(), "{described}:\n{}", printed(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Fails the test with one line unless `docker info` answers.
fn require_docker() {
    let out = run(
        Command::new("docker").args(["info", "--format", "{{.ServerVersion}}"]),
        "run tests/setup/docker.sh",
    );
    assert!(
        out.status.success(),
        "the Docker Engine does not answer ({}): run tests/setup/docker.sh",
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("")
    );
}

/// The Debian 12 image tests/setup/docker.sh made (or the one the environment names).
fn debian_base() -> String {
    std::env::var("FORGEWARD_TEST_DOCKER_BASE")
        .unwrap_or_else(|_| "forgeward/debian-base:bookworm".to_owned())
}

/// A name no other test, run or engineer on this daemon uses.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}-{}-{nanos:08x}", std::process::id())
}

/// A unit file as the tests install it: the binary built for this run instead of
/// /usr/local/bin/forgeward, which need not exist here (`verify` checks that it does).
fn unit_text(name: &str, binary: &str) -> String {
    let path = deploy_dir().join("systemd").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        text.contains("ExecStart=/usr/local/bin/forgeward "),
        "{name} no longer starts /usr/local/bin/forgeward"
    );
    text.replace("/usr/local/bin/forgeward", binary)
}

/// The `.conf` files of a drop-in directory of deploy/systemd, sorted.
fn drop_ins(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(deploy_dir().join("systemd").join(dir))
        .unwrap_or_else(|e| panic!("deploy/systemd/{dir}: {e}"))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "conf"))
        .collect();
    out.sort();
    out
}

const SYSTEMD_HINT: &str = "install systemd's tools: run tests/setup/deploy.sh";
const UNITS: [&str; 2] = ["forgeward.service", "forgeward-worker@.service"];

/// Each unit, alone and with every drop-in a deployment combines (all the credentials, with the
/// root bubblewrap sandbox, the Docker backend, or bubblewrap without root), passes `verify`
/// without a single warning — an unknown key or a bad value is only a warning to systemd — and
/// stays within its exposure budget in `systemd-analyze security`.
#[test]
fn systemd_units_and_drop_ins_verify_without_a_warning() {
    let credentials = drop_ins("credentials");
    assert!(
        credentials.len() >= 8,
        "deploy/systemd/credentials: {credentials:?}"
    );
    let sandboxes = drop_ins("sandbox");
    let combinations: Vec<(String, Vec<PathBuf>, u32)> =
        std::iter::once(("none".to_owned(), Vec::new(), 55))
            .chain(std::iter::once((
                "credentials".to_owned(),
                credentials.clone(),
                55,
            )))
            .chain(sandboxes.iter().map(|s| {
                let mut set = credentials.clone();
                set.push(s.clone());
                (format!("credentials + {}", s.display()), set, 45)
            }))
            .collect();
    assert_eq!(combinations.len(), 4, "sandbox drop-ins: {sandboxes:?}");

    for (what, set, budget) in &combinations {
        let dir = TempDir::new().expect("tempdir");
        for unit in UNITS {
            std::fs::write(dir.path().join(unit), unit_text(unit, FORGEWARD)).expect("write");
            let d = dir.path().join(format!("{unit}.d"));
            std::fs::create_dir_all(&d).expect("mkdir");
            for conf in set {
                std::fs::copy(conf, d.join(conf.file_name().expect("a file name"))).expect("copy");
            }
        }
        // The template as such, and an instance of it (its specifiers expanded).
        let out = run(
            Command::new("systemd-analyze")
                .args(["verify", "--man=no"])
                .args([
                    "forgeward.service",
                    "forgeward-worker@.service",
                    "forgeward-worker@1.service",
                ])
                .current_dir(dir.path()),
            SYSTEMD_HINT,
        );
        assert!(
            out.status.success() && out.stderr.is_empty() && out.stdout.is_empty(),
            "systemd-analyze verify, drop-ins {what}:\n{}",
            printed(&out)
        );
        for unit in ["forgeward.service", "forgeward-worker@1.service"] {
            let out = run(
                Command::new("systemd-analyze")
                    .args(["security", "--offline=yes", "--no-pager"])
                    .arg(format!("--threshold={budget}"))
                    .arg(unit)
                    .current_dir(dir.path()),
                SYSTEMD_HINT,
            );
            let verdict = String::from_utf8_lossy(&out.stdout)
                .lines()
                .find(|l| l.contains("Overall exposure level"))
                .unwrap_or("")
                .to_owned();
            assert!(
                out.status.success(),
                "{unit} with drop-ins {what} is more exposed than {}.{}: {verdict}\n{}",
                budget / 10,
                budget % 10,
                printed(&out)
            );
        }
    }

    // The check is one that fails: a misspelt key in a drop-in is reported.
    let dir = TempDir::new().expect("tempdir");
    std::fs::write(dir.path().join(UNITS[0]), unit_text(UNITS[0], FORGEWARD)).expect("write");
    std::fs::create_dir_all(dir.path().join("forgeward.service.d")).expect("mkdir");
    std::fs::write(
        dir.path().join("forgeward.service.d/typo.conf"),
        "[Service]\nProtectSytem=strict\n",
    )
    .expect("write");
    let out = run(
        Command::new("systemd-analyze")
            .args(["verify", "--man=no", "forgeward.service"])
            .current_dir(dir.path()),
        SYSTEMD_HINT,
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("ProtectSytem"),
        "a misspelt key went unreported:\n{}",
        printed(&out)
    );
}

const K8S_HINT: &str = "install kubernetes-validate: run tests/setup/deploy.sh";

/// The manifests of deploy/kubernetes, every one but kustomization.yaml.
fn manifests() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(deploy_dir().join("kubernetes"))
        .expect("deploy/kubernetes")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter(|p| !p.ends_with("kustomization.yaml"))
        .collect();
    out.sort();
    out
}

/// Every manifest is valid against the Kubernetes schemas of the oldest release it is for
/// (1.33: user namespaces for pods on by default) and of the newest kubernetes-validate knows,
/// strictly (an unknown field is an error), and kustomization.yaml lists every one but the
/// Secret's example.
#[test]
fn kubernetes_manifests_validate_against_the_schemas() {
    let files = manifests();
    let names: BTreeSet<String> = files
        .iter()
        .map(|p| {
            p.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for required in [
        "receiver.yaml",
        "worker.yaml",
        "service.yaml",
        "pdb.yaml",
        "configmap.yaml",
    ] {
        assert!(
            names.contains(required),
            "deploy/kubernetes has no {required}"
        );
    }
    for version in ["1.33.0", "1.37.0"] {
        let out = run(
            Command::new("kubernetes-validate")
                .args(["--strict", "--kubernetes-version", version])
                .args(&files),
            K8S_HINT,
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "against {version}:\n{}",
            printed(&out)
        );
        for resource in [
            "deployment/forgeward-receiver",
            "deployment/forgeward-worker",
            "service/forgeward",
            "poddisruptionbudget/forgeward-receiver",
            "poddisruptionbudget/forgeward-worker",
            "configmap/forgeward",
            "secret/forgeward",
        ] {
            assert!(
                text.contains(&format!("passed for resource {resource} ")),
                "{resource} was not validated against {version}:\n{text}"
            );
        }
    }

    // Strict validation is one that fails: a misspelt field is refused.
    let dir = TempDir::new().expect("tempdir");
    let worker =
        std::fs::read_to_string(deploy_dir().join("kubernetes/worker.yaml")).expect("read");
    let typo = worker.replacen("readOnlyRootFilesystem:", "readOnlyRootFilesytem:", 1);
    assert_ne!(typo, worker);
    std::fs::write(dir.path().join("worker.yaml"), typo).expect("write");
    let out = run(
        Command::new("kubernetes-validate")
            .args(["--strict", "--quiet"])
            .arg(dir.path().join("worker.yaml")),
        K8S_HINT,
    );
    assert!(
        !out.status.success(),
        "a misspelt field passed:\n{}",
        printed(&out)
    );

    let kustomization =
        std::fs::read_to_string(deploy_dir().join("kubernetes/kustomization.yaml")).expect("read");
    let listed: BTreeSet<String> = kustomization
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter(|l| l.ends_with(".yaml"))
        .map(str::to_owned)
        .collect();
    let mut expected = names.clone();
    expected.remove("secret.example.yaml");
    assert_eq!(listed, expected, "kustomization.yaml's resources");
}

/// The worker pods ask for what bubblewrap needs in a pod, and no more: user namespaces for the
/// pod, an unmasked /proc, seccomp and AppArmor that allow user namespaces; no capability and
/// no privilege escalation. The receiver keeps to the restricted Pod Security Standard.
#[test]
fn kubernetes_pods_ask_for_what_their_sandbox_needs() {
    let read = |name: &str| {
        std::fs::read_to_string(deploy_dir().join("kubernetes").join(name)).expect("a manifest")
    };
    let worker = read("worker.yaml");
    for needed in [
        "hostUsers: false",
        "procMount: Unmasked",
        "allowPrivilegeEscalation: false",
        "drop: [\"ALL\"]",
        "runAsNonRoot: true",
        "readOnlyRootFilesystem: true",
    ] {
        assert!(worker.contains(needed), "worker.yaml lacks `{needed}`");
    }
    assert!(!worker.contains("privileged: true") && !worker.contains("add:"));
    let receiver = read("receiver.yaml");
    for needed in [
        "type: RuntimeDefault",
        "allowPrivilegeEscalation: false",
        "drop: [\"ALL\"]",
        "runAsNonRoot: true",
        "readOnlyRootFilesystem: true",
        "path: /readyz",
        "path: /healthz",
        "\"serve\", \"--no-worker\"",
    ] {
        assert!(receiver.contains(needed), "receiver.yaml lacks `{needed}`");
    }
    assert!(!receiver.contains("Unconfined") && !receiver.contains("Unmasked"));
}

/// The names the deploy files set in the bot's environment: compose `environment:` keys,
/// systemd `Environment=` assignments, Kubernetes `env` names.
fn environment_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut files = vec![];
    for dir in [
        "compose",
        "systemd",
        "systemd/credentials",
        "systemd/sandbox",
        "kubernetes",
    ] {
        for entry in std::fs::read_dir(deploy_dir().join(dir)).expect("a deploy directory") {
            let path = entry.expect("an entry").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a deploy file");
        for line in text.lines().map(str::trim) {
            if line.starts_with('#') {
                continue;
            }
            let found: Vec<&str> = if let Some(rest) = line.strip_prefix("Environment=") {
                rest.split_whitespace()
                    .filter_map(|a| a.split_once('=').map(|(k, _)| k))
                    .collect()
            } else if let Some(rest) = line.strip_prefix("- name: ") {
                vec![rest]
            } else if let Some((key, _)) = line.split_once(':') {
                vec![key]
            } else {
                vec![]
            };
            names.extend(
                found
                    .into_iter()
                    .filter(|k| k.starts_with("FORGEWARD_") && !k.contains(' '))
                    .map(str::to_owned),
            );
        }
    }
    names
}

/// Compose's own variables (interpolated into the files, never seen by the bot).
const COMPOSE_VARIABLES: &[&str] = &[
    "FORGEWARD_DATA_DIR",
    "FORGEWARD_SECRETS_DIR",
    "FORGEWARD_IMAGE",
    "FORGEWARD_POSTGRES_IMAGE",
    "FORGEWARD_LISTEN",
    "FORGEWARD_CONFIG",
    "FORGEWARD_DEBIAN_BASE",
    "FORGEWARD_RUST_IMAGE",
    "FORGEWARD_BINARY_DIR",
    "FORGEWARD_PREBUILT_DOCKERFILE",
];

/// The `forgeward.toml` a ConfigMap carries, as its text.
fn configmap_toml(manifest: &str) -> String {
    let mut lines = manifest
        .lines()
        .skip_while(|l| l.trim() != "forgeward.toml: |");
    lines.next().expect("configmap.yaml has forgeward.toml");
    lines
        .take_while(|l| l.is_empty() || l.starts_with("    "))
        .map(|l| format!("{}\n", l.get(4..).unwrap_or("")))
        .collect()
}

/// Every variable the deploy files set for the bot is a setting or a secret it knows, and
/// each of the three forgeward.toml files (compose's, systemd's, the ConfigMap's) loads with
/// those variables laid over it, as the bot would load it at start.
#[test]
fn deploy_files_give_the_bot_only_settings_it_knows() {
    let names = environment_names();
    for expected in [
        "FORGEWARD_STORE_URL",
        "FORGEWARD_SERVER_DATA_DIR",
        "FORGEWARD_GITHUB_WEBHOOK_SECRET_FILE",
        "FORGEWARD_GITHUB_WEBHOOK_SECRET",
        "FORGEWARD_GITLAB_TOKEN_FILE",
        "FORGEWARD_FORGEJO_TOKEN",
        "FORGEWARD_SANDBOX_BACKEND",
    ] {
        assert!(
            names.contains(expected),
            "no deploy file sets {expected}: {names:?}"
        );
    }
    let dir = TempDir::new().expect("tempdir");
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "s3cret\n").expect("write");
    let vars: Vec<(String, String)> = names
        .iter()
        .filter(|n| !COMPOSE_VARIABLES.contains(&n.as_str()))
        .map(|name| {
            let value = match name.as_str() {
                n if n.ends_with("_FILE") => secret.display().to_string(),
                "FORGEWARD_SERVER_LISTEN" => "0.0.0.0:8080".to_owned(),
                "FORGEWARD_SERVER_DATA_DIR" => dir.path().display().to_string(),
                "FORGEWARD_STORE_URL" => "postgres://forgeward@db/forgeward".to_owned(),
                "FORGEWARD_SANDBOX_BACKEND" => "docker".to_owned(),
                "FORGEWARD_SANDBOX_DOCKER_BASE" => "debian:bookworm-slim".to_owned(),
                _ => "a-secret-value".to_owned(),
            };
            (name.clone(), value)
        })
        .collect();
    let configmap = std::fs::read_to_string(deploy_dir().join("kubernetes/configmap.yaml"))
        .expect("configmap.yaml");
    let tomls = [
        (
            "compose/forgeward.toml",
            std::fs::read_to_string(deploy_dir().join("compose/forgeward.toml")).expect("read"),
        ),
        (
            "systemd/forgeward.toml",
            std::fs::read_to_string(deploy_dir().join("systemd/forgeward.toml")).expect("read"),
        ),
        ("kubernetes/configmap.yaml", configmap_toml(&configmap)),
    ];
    for (name, text) in tomls {
        assert!(text.contains("[sandbox]"), "{name}: {text}");
        let path = dir.path().join("forgeward.toml");
        std::fs::write(&path, &text).expect("write");
        let loaded = forgeward::config::server::Settings::load(Some(&path), vars.clone());
        if let Err(e) = loaded {
            panic!("{name} with the deploy files' variables: {e}");
        }
    }
}

/// deploy/compose/prebuilt.Dockerfile is docker/Dockerfile's runtime stage with the binary from
/// the context: the image CI tests is the image operators build, but for how the binary got in.
#[test]
fn the_prebuilt_image_is_the_runtime_stage_of_docker_dockerfile() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stage = |path: &Path| -> Vec<String> {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let lines: Vec<&str> = text.lines().collect();
        let last_from = lines
            .iter()
            .rposition(|l| l.starts_with("FROM "))
            .unwrap_or_else(|| panic!("{} has no FROM", path.display()));
        lines[last_from..]
            .iter()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|l| l.replace("COPY --from=build /forgeward ", "COPY forgeward "))
            .collect()
    };
    let upstream = stage(&root.join("docker/Dockerfile"));
    let prebuilt = stage(&root.join("deploy/compose/prebuilt.Dockerfile"));
    assert!(
        upstream
            .iter()
            .any(|l| l == "COPY forgeward /usr/local/bin/forgeward"),
        "docker/Dockerfile no longer copies the binary from its build stage: {upstream:#?}"
    );
    assert_eq!(prebuilt, upstream, "the runtime stages differ");
}
