//! What every job reads of how the bot is set up.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::server::{GitSection, TriggerSection, WorkerSection};

/// Everything a job needs to know about how the bot is set up.
#[derive(Clone)]
pub struct PipelineConfig {
    /// Each job's files under `jobs/<id>/`, logs under `logs/`.
    pub data_dir: PathBuf,
    /// The repositories' mirrors (the bot's `data_dir/mirrors`; `forgeward run`'s cache).
    pub mirrors: PathBuf,
    /// The prepared environments kept between jobs (the bot's `data_dir/environments`;
    /// `forgeward run`'s cache).
    pub environments: PathBuf,
    pub worker: WorkerSection,
    pub verify: crate::config::pipeline::VerifySection,
    /// How pull requests the bot did not make are checked (`[review]`).
    pub review: crate::config::pipeline::ReviewSection,
    /// How each repository's environment is prepared (`[environment]`).
    pub environment: super::environment::EnvironmentPolicy,
    /// What each sandbox run may use.
    pub limits: crate::sandbox::Limits,
    /// What the worker may reach (`sandbox.network`, `sandbox.allow`, `[[worker.secrets]]`).
    pub network: super::egress::NetworkPolicy,
    pub git: GitSection,
    pub trigger: TriggerSection,
    /// The worker's allowed variables with their values, read from the bot's environment once.
    pub worker_env: Vec<(String, String)>,
    /// Every secret the bot holds, replaced by `***` in logs and comments.
    pub secrets: Vec<String>,
    /// How often the status comment shows the worker's progress (forge edits are throttled on
    /// top of this).
    pub progress_interval: Duration,
    /// Whether someone without write access who asks in a comment gets a reply
    /// (`trigger.reply_to_unauthorized`).
    pub reply_to_unauthorized: bool,
    /// How the status comment links to the job's page (`server.public_url` and the link key);
    /// `None`: no link.
    pub job_links: Option<std::sync::Arc<crate::links::JobLinks>>,
}
