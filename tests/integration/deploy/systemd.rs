//! The units of deploy/systemd run by a real systemd, as PID 1 of a container of its own (the
//! test machine's own systemd, if any, is left alone): `forgeward.service` with its credentials
//! drop-ins answers /readyz and records a delivery signed with the secret it loaded with
//! `LoadCredential=`; `forgeward-worker@1.service` starts its runner; and the bubblewrap
//! sandbox runs a worker under every hardening line of the unit, as root (a dedicated host user
//! id per worker) and with sandbox/bwrap-unprivileged.conf (a user namespace).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use sha2::Digest;
use tempfile::TempDir;

use super::{debian_base, deploy_dir, printed, require_docker, run, succeed, unique, unit_text};
use crate::serve::sign;
use crate::util::FORGEWARD;

const HINT: &str = "the Docker Engine runs the units' systemd: run tests/setup/docker.sh";
const SECRET: &str = "systemd-webhook-secret";

/// The image systemd boots in: the local Debian base with systemd and what the units and the
/// sandbox need. `mount --make-rshared /`: systemd moves each service's credentials into place
/// from a mount namespace of its own, which reaches the service only through shared mounts.
const DOCKERFILE: &str = r#"FROM {base}
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        systemd systemd-sysv libnss-systemd bubblewrap util-linux git ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
ENV container=docker
STOPSIGNAL SIGRTMIN+3
CMD ["/bin/sh", "-c", "mount --make-rshared / && exec /lib/systemd/systemd"]
"#;

/// A booted systemd in a container, removed when dropped.
struct Machine {
    name: String,
}

impl Machine {
    fn boot() -> Machine {
        let base = debian_base();
        let dockerfile = DOCKERFILE.replace("{base}", &base);
        let base_id = succeed(
            Command::new("docker").args(["image", "inspect", "--format", "{{.Id}}", &base]),
            "the Debian base image: run tests/setup/docker.sh",
        );
        let digest = sha2::Sha256::digest(format!("{dockerfile}{}", base_id.trim()));
        let image = format!(
            "forgeward-deploy-test/systemd:{}",
            &hex::encode(digest)[..16]
        );
        let have = Command::new("docker")
            .args(["image", "inspect", &image])
            .output()
            .is_ok_and(|o| o.status.success());
        if !have {
            let mut build = Command::new("docker");
            // The classic builder reads a Dockerfile alone on stdin, with or without buildx.
            build
                .env("DOCKER_BUILDKIT", "0")
                .args(["build", "--quiet", "--tag", &image, "-"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let mut child = build
                .spawn()
                .unwrap_or_else(|e| panic!("docker build: {e}: {HINT}"));
            {
                use std::io::Write;
                let mut stdin = child.stdin.take().expect("piped stdin");
                stdin
                    .write_all(dockerfile.as_bytes())
                    .expect("write the Dockerfile");
            }
            let out = child.wait_with_output().expect("docker build");
            assert!(out.status.success(), "building {image}:\n{}", printed(&out));
        }
        let machine = Machine {
            name: unique("fwdeploy-systemd"),
        };
        // What systemd needs in a container: its cgroups, mounts of its own, and no seccomp or
        // AppArmor profile in the way of the namespaces the services and bubblewrap make.
        succeed(
            Command::new("docker").args([
                "run",
                "--detach",
                "--name",
                &machine.name,
                "--cap-add",
                "SYS_ADMIN",
                "--cap-add",
                "NET_ADMIN",
                "--security-opt",
                "seccomp=unconfined",
                "--security-opt",
                "apparmor=unconfined",
                "--cgroupns",
                "host",
                "--volume",
                "/sys/fs/cgroup:/sys/fs/cgroup:rw",
                "--network",
                "none",
                &image,
            ]),
            HINT,
        );
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let state = machine.sh("systemctl is-system-running || true");
            if matches!(state.trim(), "running" | "degraded") {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "systemd did not boot in its container (state {:?}):\n{}",
                state.trim(),
                machine.sh("journalctl --no-pager -n 40 || true")
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        machine
    }

    /// Runs `script` in the machine and returns what it printed; fails the test on failure.
    fn sh(&self, script: &str) -> String {
        succeed(
            Command::new("docker").args(["exec", &self.name, "sh", "-c", script]),
            HINT,
        )
    }

    /// Runs `script` and returns whether it succeeded, and what it printed.
    fn try_sh(&self, script: &str) -> (bool, String) {
        let out = run(
            Command::new("docker").args(["exec", &self.name, "sh", "-c", script]),
            HINT,
        );
        (out.status.success(), printed(&out))
    }

    /// Copies the tree under `dir` onto the machine's root.
    fn copy_in(&self, dir: &Path) {
        succeed(
            Command::new("docker")
                .arg("cp")
                .arg(format!("{}/.", dir.display()))
                .arg(format!("{}:/", self.name)),
            HINT,
        );
    }

    /// An HTTP status and body from inside the machine.
    fn curl(&self, args: &str) -> (u16, String) {
        let out = self.sh(&format!(
            "curl -s -o /tmp/body -w '%{{http_code}}' {args}; echo; cat /tmp/body || true"
        ));
        let (code, body) = out.split_once('\n').unwrap_or((&out, ""));
        (code.trim().parse().unwrap_or(0), body.to_owned())
    }

    fn journal(&self, unit: &str) -> String {
        self.sh(&format!("journalctl --no-pager -o cat -u {unit} || true"))
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "--force", "--volumes", &self.name])
            .output();
    }
}

/// Puts `text` at `root/path`, making the directories above it.
fn put(root: &Path, path: &str, text: &[u8], mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let path = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// forgeward.service with `forgeward run` as its one-shot command instead of `serve`: every
/// hardening line of the unit, around a job in the bubblewrap sandbox on the repository
/// `/var/lib/forgeward-probe/repo` (in the probe's own state directory, handed by systemd to a
/// dynamic user when there is one).
fn probe_unit() -> String {
    let unit = unit_text("forgeward.service", "/usr/local/bin/forgeward");
    let replaced = [
        (
            "ExecStart=/usr/local/bin/forgeward serve --config /etc/forgeward/forgeward.toml",
            "ExecStart=/usr/local/bin/forgeward run --repo /var/lib/forgeward-probe/repo --sandbox bwrap --branch probed --task probe --worker \"sh probe.sh\"",
        ),
        ("Type=exec", "Type=oneshot"),
        ("Restart=on-failure", "Restart=no"),
        (
            "StateDirectory=forgeward\n",
            "StateDirectory=forgeward-probe\n",
        ),
        ("%S/forgeward\n", "%S/forgeward-probe\n"),
    ];
    replaced.iter().fold(unit, |unit, (from, to)| {
        assert!(
            unit.contains(from),
            "forgeward.service has no `{}`",
            from.trim()
        );
        unit.replace(from, to)
    })
}

/// What the probe's worker does: says who and where it is, and leaves a file.
const PROBE: &str =
    "echo \"probe uid $(id -u)\"\necho \"probe host $(hostname)\"\necho hello > hello.txt\n";

#[test]
fn the_systemd_units_run_the_bot_and_its_bubblewrap_sandbox_under_systemd() {
    require_docker();
    let started = Instant::now();
    let machine = Machine::boot();
    let booted = started.elapsed();

    let staging = TempDir::new().expect("tempdir");
    let root = staging.path();
    let systemd = deploy_dir().join("systemd");
    put(
        root,
        "/usr/local/bin/forgeward",
        &std::fs::read(FORGEWARD).expect("the binary"),
        0o755,
    );
    for unit in ["forgeward.service", "forgeward-worker@.service"] {
        let text = unit_text(unit, "/usr/local/bin/forgeward");
        put(
            root,
            &format!("/etc/systemd/system/{unit}"),
            text.as_bytes(),
            0o644,
        );
    }
    let toml = std::fs::read(systemd.join("forgeward.toml")).expect("forgeward.toml");
    put(root, "/etc/forgeward/forgeward.toml", &toml, 0o644);
    put(
        root,
        "/etc/forgeward/credentials/github-webhook-secret",
        format!("{SECRET}\n").as_bytes(),
        0o600,
    );
    put(
        root,
        "/etc/forgeward/credentials/github-token",
        b"not-a-real-token\n",
        0o600,
    );
    for conf in ["github-webhook-secret.conf", "github-token.conf"] {
        let text = std::fs::read(systemd.join("credentials").join(conf)).expect("a drop-in");
        put(
            root,
            &format!("/etc/systemd/system/forgeward.service.d/{conf}"),
            &text,
            0o644,
        );
    }
    let token = std::fs::read(systemd.join("credentials/github-token.conf")).expect("a drop-in");
    put(
        root,
        "/etc/systemd/system/forgeward-worker@.service.d/github-token.conf",
        &token,
        0o644,
    );
    let probe = probe_unit();
    put(
        root,
        "/etc/systemd/system/forgeward-probe.service",
        probe.as_bytes(),
        0o644,
    );
    put(
        root,
        "/etc/systemd/system/forgeward-probe-unprivileged.service",
        probe
            .replace("forgeward-probe", "forgeward-probe-unprivileged")
            .as_bytes(),
        0o644,
    );
    let unprivileged =
        std::fs::read(systemd.join("sandbox/bwrap-unprivileged.conf")).expect("a drop-in");
    put(
        root,
        "/etc/systemd/system/forgeward-probe-unprivileged.service.d/bwrap-unprivileged.conf",
        &unprivileged,
        0o644,
    );
    put(root, "/root/probe.sh", PROBE.as_bytes(), 0o644);
    let body = super::compose::labeled_delivery();
    put(root, "/root/delivery.json", &body, 0o644);
    machine.copy_in(root);
    machine.sh("systemctl daemon-reload");

    // The bot, its secrets loaded by systemd, answering on loopback.
    let (ok, out) = machine.try_sh("systemctl start forgeward.service");
    assert!(
        ok,
        "forgeward.service did not start:\n{out}\n{}",
        machine.journal("forgeward.service")
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while machine.curl("http://127.0.0.1:8080/readyz").0 != 200 {
        assert!(
            Instant::now() < deadline,
            "forgeward.service is not ready:\n{}",
            machine.journal("forgeward.service")
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(
        machine.curl("http://127.0.0.1:8080/healthz"),
        (200, "ok\n".to_owned())
    );
    let headers = format!(
        "-H 'X-GitHub-Event: issues' -H 'X-GitHub-Delivery: systemd-1' -H 'content-type: application/json' -H 'X-Hub-Signature-256: {}' --data-binary @/root/delivery.json http://127.0.0.1:8080/webhooks/github",
        sign(SECRET, &body)
    );
    let (status, reply) = machine.curl(&headers);
    assert_eq!(
        (status, reply.trim()),
        (202, "{\"job\":1}"),
        "{}",
        machine.journal("forgeward.service")
    );
    // The unit names the credential's copy, never the secret.
    let environment = machine.sh("systemctl show forgeward.service --property=Environment");
    assert!(
        environment.contains("FORGEWARD_GITHUB_WEBHOOK_SECRET_FILE=/run/credentials/forgeward.service/github-webhook-secret"),
        "{environment}"
    );
    assert!(
        !environment.contains(SECRET) && !machine.journal("forgeward.service").contains(SECRET)
    );
    let state = machine.sh("stat -c '%a %U' /var/lib/forgeward; ls /var/lib/forgeward");
    assert!(
        state.starts_with("700 root\n") && state.contains("forgeward.db"),
        "{state}"
    );

    // A runner instance, with a data directory of its own.
    let (ok, out) = machine.try_sh("systemctl start forgeward-worker@1.service && sleep 2 && systemctl is-active forgeward-worker@1.service && test -d /var/lib/forgeward-worker/1");
    assert!(
        ok,
        "forgeward-worker@1:\n{out}\n{}",
        machine.journal("forgeward-worker@1.service")
    );

    // The bubblewrap sandbox under the unit's hardening: as root, each worker is a dedicated
    // host user id (0x7A5E0000 and up); with bwrap-unprivileged.conf, the dynamic user in a user
    // namespace (uid 1000 inside). Either way the sandbox's own host name.
    for (unit, uid_ok) in [
        (
            "forgeward-probe",
            (|uid: u64| (0x7A5E_0000..0x7A5F_0000).contains(&uid)) as fn(u64) -> bool,
        ),
        ("forgeward-probe-unprivileged", |uid: u64| uid == 1000),
    ] {
        let repo = format!("/var/lib/{unit}/repo");
        machine.sh(&format!(
            "mkdir -p {repo} && cd {repo} && git init -q -b main && cp /root/probe.sh . && printf '[verify]\\nenabled = false\\n' > .forgeward.toml && git add -A && git -c user.name=t -c user.email=t@example.com commit -q -m probe"
        ));
        let (ok, out) = machine.try_sh(&format!("systemctl start {unit}.service"));
        let journal = machine.journal(&format!("{unit}.service"));
        assert!(ok, "{unit}:\n{out}\n{journal}");
        assert!(journal.contains("ready for review"), "{unit}:\n{journal}");
        assert!(journal.contains("probe host sandbox"), "{unit}:\n{journal}");
        let uid = journal
            .lines()
            .find_map(|l| l.split("probe uid ").nth(1))
            .and_then(|u| u.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{unit}: no uid in\n{journal}"));
        assert!(uid_ok(uid), "{unit}: the worker ran as uid {uid}");
    }
    eprintln!(
        "deploy/systemd: systemd booted in {:.1?}, whole flow in {:.1?}",
        booted,
        started.elapsed()
    );
}
