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
    let build = |link: &[&str]| {
        Command::new(&rustc)
            .args(["--edition", "2024", "--crate-type", "bin"])
            .args(["--crate-name", "forward", "--target", &target])
            .args(["-C", "opt-level=2", "-C", "panic=abort"])
            .args(["-C", "codegen-units=1", "-C", "strip=symbols"])
            .args(link)
            .arg("-o")
            .arg(out.join("forward"))
            .arg(source)
            .status()
            .is_ok_and(|s| s.success())
    };
    if build(&["-C", "target-feature=+crt-static"]) {
        return;
    }
    // No static C library here (Debian's libc6-dev has one; some systems ship it apart, as
    // glibc-static): a dynamic forwarder still runs under bubblewrap, and in images with this
    // C library.
    println!(
        "cargo::warning=the sandbox's forwarder is linked dynamically: no static C library was \
         found (glibc-static, libc6-dev); Docker images with another C library cannot run it"
    );
    assert!(build(&[]), "building {source} failed");
}
