//! Arbitrary bytes as everything the egress gateway reads from a worker (or an upstream) before
//! it decides: request and response heads with their framing, a TLS ClientHello, an allow entry,
//! a target host. Parsing may refuse them, never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    forgeward::egress::parse_untrusted(bytes);
});
