//! Configuration: the per-repository `.forgeward.toml` ([`repo`]) and the bot's own
//! `forgeward.toml` with its environment overrides ([`server`]).

mod duration;
pub mod edit;
mod egress;
pub mod pipeline;
pub mod repo;
pub mod server;

pub use repo::{Allow, CheckConfig, ConfigError, FILE_NAME, Mode, RepoConfig};
