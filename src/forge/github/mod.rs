//! GitHub: verifying and parsing webhook deliveries.

pub mod webhook;
