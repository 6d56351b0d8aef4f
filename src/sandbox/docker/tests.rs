use std::sync::Mutex;
use std::time::Duration;

use super::*;
use crate::sandbox::Limits;

fn spec(dir: &Path) -> SandboxSpec {
    SandboxSpec {
        workspace: dir.to_path_buf(),
        job_dir: dir.to_path_buf(),
        out_dir: dir.to_path_buf(),
        command: vec!["bash".into(), "-c".into(), "true".into()],
        image: Some(format!("sha256:{}", "a".repeat(64))),
        env: vec![("MODEL_API_KEY".into(), "secret-value".into())],
        limits: Limits {
            timeout: Duration::from_secs(60),
            memory_bytes: 512 << 20,
            pids: 128,
            file_size_bytes: 64 << 20,
            disk_bytes: 256 << 20,
            cpu: Duration::from_secs(120),
        },
        network: crate::sandbox::Network::None,
        read_only: Vec::new(),
        path: Vec::new(),
    }
}

fn args_of(spec: &SandboxSpec) -> Vec<String> {
    let mounts = Mounts::new(spec).unwrap();
    create_args(
        spec,
        &mounts,
        "test",
        "c1",
        (10001, 10001),
        spec.image.as_deref().unwrap(),
    )
    .unwrap()
    .into_iter()
    .map(|a| a.into_string().unwrap())
    .collect()
}

#[test]
fn containers_are_confined_and_values_stay_off_the_command_line() {
    let dir = std::env::temp_dir();
    let args = args_of(&spec(&dir));
    for expected in [
        "--network=none",
        "--read-only",
        "--init",
        "--cap-drop=ALL",
        "--security-opt=no-new-privileges",
        "--memory=536870912",
        "--memory-swap=536870912",
        "--pids-limit=128",
        "--ulimit=fsize=67108864:67108864",
        "--ulimit=cpu=120:120",
        "--user=10001:10001",
        "--label=forgeward.sandbox=test",
        "--env=MODEL_API_KEY",
        "--tmpfs=/home/worker:rw,exec,nosuid,nodev,size=268435456,uid=10001,gid=10001,mode=0700",
    ] {
        assert!(
            args.contains(&expected.to_string()),
            "{expected} missing from {args:?}"
        );
    }
    assert!(!args.iter().any(|a| a.contains("secret-value")), "{args:?}");
    assert!(args.iter().any(|a| a.ends_with("target=/job,readonly")));
    assert_eq!(args[args.len() - 3..], ["bash", "-c", "true"]);
}

#[test]
fn network_is_given_only_when_the_operator_opts_in() {
    let dir = std::env::temp_dir();
    let mut spec = spec(&dir);
    spec.network = crate::sandbox::Network::Full;
    let args = args_of(&spec);
    assert!(args.contains(&"--network=bridge".to_string()));
    assert!(!args.contains(&"--network=none".to_string()));
}

#[test]
fn variables_that_would_steer_the_sandbox_or_the_cli_are_refused() {
    for name in [
        "PATH",
        "HOME",
        "DOCKER_HOST",
        "DOCKER_ANYTHING",
        "A=B",
        "",
        "1X",
        "X Y",
    ] {
        assert!(validate_env_name(name).is_err(), "{name:?} accepted");
    }
    for name in ["ANTHROPIC_API_KEY", "_X", "x1"] {
        assert!(validate_env_name(name).is_ok(), "{name:?} refused");
    }
}

#[test]
fn only_image_ids_are_run() {
    assert!(validate_image_id(&format!("sha256:{}", "0f".repeat(32))).is_ok());
    for image in [
        "debian:bookworm",
        "sha256:abc",
        "forgeward/sandbox:latest",
        "",
    ] {
        let err = validate_image_id(image).unwrap_err();
        assert!(err.to_string().contains("never by tag"), "{err}");
    }
}

#[test]
fn exit_states_are_read_as_codes_signals_and_oom_kills() {
    assert_eq!(parse_state("false 0 false \n").unwrap(), Exit::Code(0));
    assert_eq!(parse_state("false 3 false ").unwrap(), Exit::Code(3));
    assert_eq!(parse_state("false 137 false ").unwrap(), Exit::Signal(9));
    assert_eq!(parse_state("false 153 false ").unwrap(), Exit::Signal(25));
    assert_eq!(parse_state("false 137 true ").unwrap(), Exit::Signal(9));
    assert_eq!(parse_state("false 1 true ").unwrap(), Exit::Signal(9));
    // A child killed for memory, the worker itself carrying on to success.
    assert_eq!(parse_state("false 0 true ").unwrap(), Exit::Code(0));
    let err = parse_state("false 127 false exec: no such file").unwrap_err();
    assert!(
        err.to_string().contains("did not run: exec: no such file"),
        "{err}"
    );
    assert!(parse_state("garbage").is_err());
    assert!(parse_state("maybe 0 false ").is_err());
    let err = parse_state("true 0 false ").unwrap_err();
    assert!(err.to_string().contains("still running"), "{err}");
}

#[test]
fn paths_docker_mount_cannot_express_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("a,b");
    std::fs::create_dir(&odd).unwrap();
    let err = Mounts::new(&spec(&odd)).err().unwrap();
    assert!(err.to_string().contains("comma"), "{err}");
}

#[test]
fn owners_are_sanitised_into_label_values_and_names() {
    let docker = Docker::new("bot one/α");
    assert_eq!(docker.owner(), "bot_one__");
    assert!(docker.container_name().starts_with("forgeward-bot_one__-"));
    assert_ne!(docker.container_name(), docker.container_name());
}

#[derive(Default)]
struct Lines(Mutex<Vec<(Stream, String)>>);

impl LogSink for Lines {
    fn line(&self, stream: Stream, line: &str) {
        self.0.lock().unwrap().push((stream, line.to_string()));
    }
}

#[tokio::test]
async fn output_is_split_into_lines_and_bounded_in_length() {
    let long = "x".repeat(MAX_LINE + 10);
    let input = format!("one\r\ntwo\n{long}\nlast without newline \u{fffd}");
    let mut bytes = input.into_bytes();
    bytes.push(0xff);
    let lines = Lines::default();
    pump(Some(&bytes[..]), Stream::Stderr, &lines).await;
    let got: Vec<String> = lines
        .0
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert_eq!(got[0], "one");
    assert_eq!(got[1], "two");
    assert_eq!(got[2].len(), MAX_LINE);
    assert_eq!(got[3], "x".repeat(10));
    assert_eq!(got[4], "last without newline \u{fffd}\u{fffd}");
    assert_eq!(got.len(), 5);
}

#[test]
fn disk_usage_counts_allocated_bytes_without_following_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/data"), vec![1u8; 1 << 20]).unwrap();
    std::os::unix::fs::symlink("/usr", dir.path().join("usr")).unwrap();
    let used = tree_usage(dir.path());
    assert!((1 << 20..4 << 20).contains(&used), "{used}");
}

#[test]
fn handing_files_over_strips_set_id_bits_and_never_follows_a_symlink() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("target");
    std::fs::write(&target, "").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let tree = dir.path().join("ws");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    let program = tree.join("sub/program");
    std::fs::write(&program, "").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o6755)).unwrap();
    std::os::unix::fs::symlink(&target, tree.join("link")).unwrap();

    let me = Ownership::of_this_process().unwrap();
    chown_tree(&tree, me.uid, me.gid, true).unwrap();

    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&program), 0o755);
    assert_eq!(mode(&target), 0o4755, "a symlink's target was changed");
}
