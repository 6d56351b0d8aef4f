//! Builds the sandbox's forwarder (`src/sandbox/forwarder/main.rs`) as a program of its own,
//! statically linked, so that it runs inside any image; the crate embeds it
//! (`sandbox::egress::FORWARDER`).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let source = "src/sandbox/forwarder/main.rs";
    println!("cargo::rerun-if-changed={source}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let status = Command::new(rustc)
        .args([
            "--edition",
            "2024",
            "--crate-type",
            "bin",
            "--crate-name",
            "forward",
        ])
        .args(["--target", &target])
        .args([
            "-C",
            "opt-level=2",
            "-C",
            "panic=abort",
            "-C",
            "codegen-units=1",
        ])
        .args(["-C", "target-feature=+crt-static", "-C", "strip=symbols"])
        .arg("-o")
        .arg(out.join("forward"))
        .arg(source)
        .status()
        .expect("rustc runs");
    assert!(status.success(), "building {source} failed");
}
