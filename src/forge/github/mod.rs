//! GitHub: verifying and parsing webhook deliveries, the App's identity (its JWT), and the sweep
//! that has GitHub redeliver the deliveries the bot missed.

pub mod app;
pub mod deliveries;
pub mod webhook;
