//! forgeward: a forge bot and a git hook that flags changes which make the tests pass instead of
//! making the code work.
//!
//! The library holds everything an entry point needs; `src/main.rs` and `src/cli/` are glue.
//! The detector ([`detect`]) is pure: changes in, flags out. [`git`] turns revisions of a real
//! repository into the detector's input, [`report`] renders flags for people and machines, and
//! [`hook`] installs the pre-push hook.

pub mod agents;
pub mod check;
pub mod config;
pub use forgeward_detect as detect;
pub mod egress;
pub mod environment;
mod files;
pub mod forge;
pub mod git;
pub mod hook;
pub mod jobs;
pub mod links;
pub mod metrics;
pub mod mounts;
pub mod report;
pub mod sandbox;
pub mod server;
pub mod store;
pub use forgeward_text as text;
pub mod trigger;
pub mod verify;
