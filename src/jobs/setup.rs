//! Building the pipeline from the bot's settings: the forge clients it has credentials for, the
//! sandbox, and what a job needs to know. Shared by `serve`, `worker` and `run`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::server::{Backend, SandboxSection, Secrets, Settings};
use crate::forge::ForgeApi;
use crate::forge::forgejo::{self, ForgejoConfig};
use crate::forge::github::app::GithubApp;
use crate::forge::github::{self, GithubAuth, GithubConfig};
use crate::forge::gitlab::{self, GitlabConfig};
use crate::sandbox::{Bwrap, Docker, Images, Limits, Sandbox, SandboxError};

use super::config::PipelineConfig;
use super::egress::NetworkPolicy;
use super::pipeline::Forges;

/// How often a running worker's last lines are shown in the status comment (edits are throttled
/// to one per 10 s on top of this).
const PROGRESS_INTERVAL: Duration = Duration::from_secs(15);

/// What a job needs to know, for the bot.
pub fn pipeline_config(settings: &Settings, secrets: &Secrets) -> anyhow::Result<PipelineConfig> {
    local_pipeline_config(settings, secrets, settings.server.data_dir.clone())
}

/// What a job needs to know, with its files under `data_dir`.
pub fn local_pipeline_config(
    settings: &Settings,
    secrets: &Secrets,
    data_dir: PathBuf,
) -> anyhow::Result<PipelineConfig> {
    let worker_env = settings
        .worker
        .env
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|value| (name.clone(), value)))
        .collect();
    let network = NetworkPolicy::from_settings(settings, |name| std::env::var(name).ok())?;
    let mut secrets = secret_values(secrets);
    secrets.extend(network.secret_values());
    Ok(PipelineConfig {
        mirrors: data_dir.join("mirrors"),
        environments: data_dir.join("environments"),
        data_dir,
        worker: settings.worker.clone(),
        verify: settings.verify.clone(),
        review: settings.review.clone(),
        environment: super::environment::EnvironmentPolicy::new(&settings.environment, |name| {
            std::env::var(name).ok()
        }),
        limits: limits(&settings.sandbox),
        network,
        git: settings.git.clone(),
        trigger: settings.trigger.clone(),
        worker_env,
        secrets,
        progress_interval: PROGRESS_INTERVAL,
        reply_to_unauthorized: settings.trigger.reply_to_unauthorized,
        job_links: None,
    })
}

/// Every secret value the bot holds, for redaction.
fn secret_values(secrets: &Secrets) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for secret in secrets
        .github_webhook
        .iter()
        .chain(&secrets.gitlab_webhook)
        .chain(&secrets.github_token)
        .chain(&secrets.gitlab_token)
        .chain(&secrets.forgejo_webhook)
        .chain(&secrets.forgejo_token)
    {
        out.push(secret.expose().to_owned());
    }
    out
}

/// The forge clients the settings give credentials for: GitHub as an App (`github.app_id` with
/// its key) or with a token, GitLab and Forgejo with a token. A forge without credentials has
/// no client, and its jobs fail with a one-line reason.
pub fn forges(settings: &Settings, secrets: &Secrets) -> anyhow::Result<Forges> {
    let github_settings = &settings.github;
    let github_auth = match (&github_settings.private_key_file, &secrets.github_token) {
        (Some(key), _) if github_settings.app_id != 0 => Some(GithubAuth::App(Arc::new(
            GithubApp::load(github_settings.app_id, key)?,
        ))),
        (_, Some(token)) => Some(GithubAuth::Token(token.clone())),
        _ => None,
    };
    let github = match github_auth {
        Some(auth) => {
            let client = github::Client::new(GithubConfig {
                api_url: github_settings.api_url.clone(),
                web_url: github_settings.web_url.clone(),
                git_url: github_settings
                    .git_url
                    .clone()
                    .unwrap_or_else(|| github_settings.web_url.clone()),
                auth,
                flagged_conclusion: github_settings.flagged_conclusion,
            })?;
            Some(Arc::new(client) as Arc<dyn ForgeApi>)
        }
        None => None,
    };
    let gitlab_settings = &settings.gitlab;
    let gitlab = match &secrets.gitlab_token {
        Some(token) => {
            let client = gitlab::Client::new(GitlabConfig {
                url: gitlab_settings.url.clone(),
                git_url: gitlab_settings
                    .git_url
                    .clone()
                    .unwrap_or_else(|| gitlab_settings.url.clone()),
                token: token.clone(),
            })
            .map_err(|e| anyhow::anyhow!("the GitLab client: {e}"))?;
            Some(Arc::new(client) as Arc<dyn ForgeApi>)
        }
        None => None,
    };
    let forgejo_settings = &settings.forgejo;
    let forgejo = match &secrets.forgejo_token {
        Some(token) => {
            let client = forgejo::Client::new(ForgejoConfig {
                url: forgejo_settings.url.clone(),
                git_url: forgejo_settings
                    .git_url
                    .clone()
                    .unwrap_or_else(|| forgejo_settings.url.clone()),
                token: token.clone(),
            })
            .map_err(|e| anyhow::anyhow!("the Forgejo client: {e}"))?;
            Some(Arc::new(client) as Arc<dyn ForgeApi>)
        }
        None => None,
    };
    Ok(Forges {
        github,
        gitlab,
        github_web_url: github_settings.web_url.clone(),
        gitlab_web_url: gitlab_settings.url.clone(),
        forgejo,
        forgejo_web_url: forgejo_settings.url.clone(),
    })
}

/// The sandbox the settings ask for, checked to work on this machine: a set-up that cannot run
/// a worker fails when the bot starts, with the reason, not at its first job.
///
/// `owner` names this bot on a Docker daemon it may share: its containers carry it, and the
/// ones a crashed run of the same bot left behind are removed now.
pub async fn sandbox(
    settings: &SandboxSection,
    owner: &str,
) -> Result<std::sync::Arc<dyn Sandbox>, SandboxError> {
    let sandbox: std::sync::Arc<dyn Sandbox> = match settings.backend {
        Backend::Bwrap => {
            let bwrap = Bwrap::new();
            bwrap.check().await?;
            std::sync::Arc::new(bwrap)
        }
        Backend::Docker => {
            let docker = Docker::new(owner).with_images(Images::new(&settings.docker_base));
            docker.check().await?;
            let reaped = docker.reap_leftovers().await?;
            if reaped > 0 {
                tracing::info!(reaped, "removed containers a earlier run left behind");
            }
            std::sync::Arc::new(docker)
        }
    };
    Ok(sandbox)
}

/// The sandbox's limits, as the settings give them.
pub fn limits(settings: &SandboxSection) -> Limits {
    Limits {
        timeout: settings.timeout.0,
        memory_bytes: settings.memory.0,
        pids: settings.pids,
        file_size_bytes: settings.file_size.0,
        disk_bytes: settings.disk.0,
        cpu: settings.cpu.0,
    }
}
