//! `forgeward link jobs|job N`: a signed link to the job list or to one job's page, for the
//! operator. Signed with the key the bot signs with (`server.job_link_key_file`, or
//! `job-link.key` in the data directory), which this command reads and never makes: a key made
//! here, in the wrong directory, would sign links no page accepts.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use forgeward::config::server::{Settings, parse_duration};
use forgeward::links::{JobLinks, LinkKey, Scope, check_public_url, key_path, now_secs, utc};
use forgeward::store::JobId;

#[derive(clap::Args)]
pub struct LinkArgs {
    #[command(subcommand)]
    what: What,
    /// The bot's configuration (the same as `forgeward serve` is given), for the key, the TTL
    /// and the public address.
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// How long the link works [default: server.job_link_ttl, 7 days].
    #[arg(long, value_name = "DURATION", global = true, value_parser = parse_duration)]
    ttl: Option<std::time::Duration>,
}

#[derive(clap::Subcommand)]
enum What {
    /// The list of jobs (every repository's: for the bot's operators).
    Jobs,
    /// One job's page.
    Job {
        /// The job's number (the status comment's `#N`).
        id: u64,
    },
}

pub fn run(args: LinkArgs) -> anyhow::Result<ExitCode> {
    let (settings, _) = Settings::load(args.config.as_deref(), std::env::vars())?;
    let server = &settings.server;
    let path = key_path(server.job_link_key_file.as_deref(), &server.data_dir);
    let key = LinkKey::load(&path)?;
    let public_url = server
        .public_url
        .as_deref()
        .filter(|url| !url.trim().is_empty())
        .map(check_public_url)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let scope = match args.what {
        What::Jobs => Scope::Jobs,
        What::Job { id } => Scope::Job(JobId(
            i64::try_from(id).context("the job number is too large")?,
        )),
    };
    let links = JobLinks {
        key,
        ttl: args.ttl.unwrap_or(server.job_link_ttl.0),
        public_url,
    };
    let expires_at = links.expiry(now_secs());
    let path = links.path(scope, expires_at);
    match &links.public_url {
        Some(base) => println!("{base}{path}"),
        None => {
            println!("{path}");
            eprintln!(
                "forgeward: server.public_url is not set: put the bot's address before this path"
            );
        }
    }
    eprintln!("forgeward: the link works until {}", utc(expires_at));
    Ok(ExitCode::SUCCESS)
}
