//! `forgeward hook install|uninstall`.

use std::path::Path;
use std::process::ExitCode;

use forgeward::config::Mode;
use forgeward::git::Repo;
use forgeward::hook::{self, Installed, Uninstalled};

pub fn install(dir: &Path, mode: Option<Mode>, force: bool) -> anyhow::Result<ExitCode> {
    let repo = Repo::discover(dir)?;
    let exe = std::env::current_exe().ok();
    let (path, outcome) = hook::install(repo.git2(), mode, force, exe.as_deref())?;
    let path = path.display();
    let mode = match mode {
        Some(m) => m.to_string(),
        None => "from .forgeward.toml, else block".to_owned(),
    };
    match outcome {
        Installed::New => {
            println!("forgeward: installed the pre-push hook at {path} (mode {mode})")
        }
        Installed::Updated => {
            println!("forgeward: updated the pre-push hook at {path} (mode {mode})")
        }
        Installed::AlreadyInstalled => {
            println!("forgeward: the pre-push hook at {path} is already installed (mode {mode})")
        }
        Installed::Chained(saved) => println!(
            "forgeward: installed the pre-push hook at {path} (mode {mode}); the hook that was there is kept at {} and runs first",
            saved.display()
        ),
        Installed::Replaced(saved) => println!(
            "forgeward: installed the pre-push hook at {path} (mode {mode}); the hook that was there is set aside at {} and no longer runs",
            saved.display()
        ),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn uninstall(dir: &Path) -> anyhow::Result<ExitCode> {
    let repo = Repo::discover(dir)?;
    let (path, outcome) = hook::uninstall(repo.git2())?;
    let path = path.display();
    match outcome {
        Uninstalled::Removed => println!("forgeward: removed the pre-push hook at {path}"),
        Uninstalled::Restored => println!(
            "forgeward: removed the pre-push hook at {path} and put back the hook that was there before"
        ),
        Uninstalled::NotInstalled => {
            println!("forgeward: no pre-push hook at {path}; nothing to do")
        }
    }
    Ok(ExitCode::SUCCESS)
}
