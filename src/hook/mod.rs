//! Installing the pre-push hook where git will run it.
//!
//! The hooks directory is the one git uses: `core.hooksPath` if set (relative to the working
//! tree's top, as git reads it), else the common `.git/hooks` shared by linked worktrees. A hook
//! that was there before is kept: renamed beside ours and chained (run first, with the same
//! arguments and input), or with `--force` set aside without running; `uninstall` puts it back.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git2::Repository;

use crate::config::Mode;

/// The line that tells our hook from any other.
const MARKER: &str = "# forgeward-hook";
const HOOK: &str = "pre-push";
/// Where a hook that was there before ours is kept.
const SAVED: &str = "pre-push.forgeward-saved";

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("reading core.hooksPath: {0}")]
    Config(String),
    #[error("{0} already holds a hook set aside earlier; move it away before installing")]
    SavedExists(String),
    #[error("the pre-push hook at {0} was not installed by forgeward; left as it is")]
    Foreign(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> HookError + '_ {
    move |source| HookError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What `install` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Installed {
    New,
    /// Ours was there with other settings, and was rewritten.
    Updated,
    AlreadyInstalled,
    /// A foreign hook was kept at the path given, and runs before ours.
    Chained(PathBuf),
    /// A foreign hook was set aside at the path given (`--force`); it no longer runs.
    Replaced(PathBuf),
}

/// What `uninstall` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Uninstalled {
    Removed,
    /// Ours was removed and the hook set aside at install was put back.
    Restored,
    NotInstalled,
}

/// The directory git runs this repository's hooks from.
pub fn hooks_dir(repo: &Repository) -> Result<PathBuf, HookError> {
    let config = repo
        .config()
        .map_err(|e| HookError::Config(e.message().to_owned()))?;
    match config.get_path("core.hooksPath") {
        Ok(path) if path.is_absolute() => Ok(path),
        Ok(path) => Ok(repo.workdir().unwrap_or_else(|| repo.path()).join(path)),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(repo.commondir().join("hooks")),
        Err(e) => Err(HookError::Config(e.message().to_owned())),
    }
}

/// The hook's text. `exe` is where forgeward was when it was installed: the hook falls back to
/// it when `forgeward` is not on the `PATH` of the program running `git push`.
pub fn script(mode: Option<Mode>, chain: bool, exe: Option<&Path>) -> String {
    let (mode_note, mode_arg) = match mode {
        Some(m) => (format!("mode={m}"), format!(" --mode {m}")),
        None => ("mode from .forgeward.toml".to_owned(), String::new()),
    };
    let fallback = exe
        .and_then(|p| p.to_str())
        .filter(|p| !p.contains('\''))
        .unwrap_or("");
    format!(
        r#"#!/bin/sh
{MARKER} ({mode_note}, chain={chain})
# Checks the commits a push sends for tests made to pass instead of code made to work.
# Installed by `forgeward hook install`; `forgeward hook uninstall` removes it and puts back
# any hook that was here before. Skip it once with `git push --no-verify`.
input=$(cat)
saved="$(dirname "$0")/{SAVED}"
if [ {chain} = true ] && [ -x "$saved" ]; then
    printf '%s\n' "$input" | "$saved" "$@" || exit $?
fi
forgeward=forgeward
if ! command -v forgeward >/dev/null 2>&1; then
    if [ -x '{fallback}' ]; then
        forgeward='{fallback}'
    else
        echo "forgeward: not installed, so this push was not checked (install it with 'cargo install --locked --path .' in a clone of forgeward)" >&2
        exit 0
    fi
fi
printf '%s\n' "$input" | "$forgeward" check --pre-push "$@"{mode_arg}
"#
    )
}

fn is_ours(text: &str) -> bool {
    text.lines().nth(1).is_some_and(|l| l.starts_with(MARKER))
}

fn write_executable(path: &Path, text: &str) -> Result<(), HookError> {
    // Written beside the hook and renamed over it: git never runs a half-written hook.
    let tmp = path.with_extension("forgeward-tmp");
    let mut f = fs::File::create(&tmp).map_err(io(&tmp))?;
    f.write_all(text.as_bytes()).map_err(io(&tmp))?;
    f.set_permissions(fs::Permissions::from_mode(0o755))
        .map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    fs::rename(&tmp, path).map_err(io(path))
}

/// Installs the hook. Installing the same hook twice changes nothing.
pub fn install(
    repo: &Repository,
    mode: Option<Mode>,
    force: bool,
    exe: Option<&Path>,
) -> Result<(PathBuf, Installed), HookError> {
    let dir = hooks_dir(repo)?;
    fs::create_dir_all(&dir).map_err(io(&dir))?;
    let hook = dir.join(HOOK);
    let saved = dir.join(SAVED);
    let existing = match fs::read(&hook) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(&hook)(e)),
    };
    let outcome = match existing {
        None => {
            write_executable(&hook, &script(mode, saved.exists(), exe))?;
            Installed::New
        }
        Some(text) if is_ours(&text) => {
            // Keep whether a saved hook is chained: the first line after the shebang says.
            let chain = text
                .lines()
                .nth(1)
                .is_some_and(|l| l.contains("chain=true"));
            let wanted = script(mode, chain, exe);
            if text == wanted {
                Installed::AlreadyInstalled
            } else {
                write_executable(&hook, &wanted)?;
                Installed::Updated
            }
        }
        Some(_) => {
            if saved.exists() {
                return Err(HookError::SavedExists(saved.display().to_string()));
            }
            fs::rename(&hook, &saved).map_err(io(&hook))?;
            write_executable(&hook, &script(mode, !force, exe))?;
            if force {
                Installed::Replaced(saved)
            } else {
                Installed::Chained(saved)
            }
        }
    };
    Ok((hook, outcome))
}

/// Removes our hook and puts back the one it set aside.
pub fn uninstall(repo: &Repository) -> Result<(PathBuf, Uninstalled), HookError> {
    let dir = hooks_dir(repo)?;
    let hook = dir.join(HOOK);
    let saved = dir.join(SAVED);
    let text = match fs::read(&hook) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((hook, Uninstalled::NotInstalled));
        }
        Err(e) => return Err(io(&hook)(e)),
    };
    if !is_ours(&text) {
        return Err(HookError::Foreign(hook.display().to_string()));
    }
    if saved.exists() {
        fs::rename(&saved, &hook).map_err(io(&saved))?;
        Ok((hook, Uninstalled::Restored))
    } else {
        fs::remove_file(&hook).map_err(io(&hook))?;
        Ok((hook, Uninstalled::Removed))
    }
}
