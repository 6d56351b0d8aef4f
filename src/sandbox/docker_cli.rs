//! The Docker CLI as both the backend ([`super::docker`]) and the image builder
//! ([`super::images`]) call it: a cleared environment, a bounded wait, a failure named by its
//! last line.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::SandboxError;

/// The environment variables the Docker CLI itself needs; everything else is cleared from its
/// environment, so nothing of the bot's (a forge token above all) can reach a container through
/// the CLI.
pub(super) const CLI_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "XDG_RUNTIME_DIR",
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CONFIG",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
];

/// How long a short CLI call (create, inspect, kill, rm) may take: a daemon that does not answer
/// within it is as good as unreachable, and a job must not hang on it.
const CLI_TIMEOUT: Duration = Duration::from_secs(60);

/// The Docker CLI with an environment cleared of all but what it needs to find its daemon.
pub(super) fn command(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear();
    for key in CLI_ENV {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    cmd.stdin(Stdio::null()).kill_on_drop(true);
    cmd
}

/// Runs a short CLI call and returns its standard output; a failure is its last line of
/// standard error.
pub(super) async fn cli<I, S>(program: &Path, args: I) -> Result<String, SandboxError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().into()).collect();
    let what = args
        .first()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut cmd = command(program);
    cmd.args(&args);
    output(cmd, &what).await
}

pub(super) async fn output(mut cmd: Command, what: &str) -> Result<String, SandboxError> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = match tokio::time::timeout(CLI_TIMEOUT, cmd.output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(error(format!("{what}: the docker CLI cannot run: {e}"))),
        Err(_) => {
            return Err(error(format!(
                "{what}: no answer from the daemon within {} s",
                CLI_TIMEOUT.as_secs()
            )));
        }
    };
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let reason = stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("failed with no message");
    Err(error(format!("{what}: {reason}")))
}

pub(super) fn error(message: impl Into<String>) -> SandboxError {
    SandboxError {
        backend: "docker",
        message: message.into(),
    }
}
