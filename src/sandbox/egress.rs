//! The sandbox's side of the egress gateway (`sandbox.network = "allowlist"`): the worker keeps
//! a network namespace of its own with nothing but loopback, and one host directory bound
//! read-only at [`INSIDE`] holds its only way out — the gateway's Unix socket, the forwarder
//! that turns `127.0.0.1:3128` into that socket, and, when the gateway injects secrets, the
//! CA bundle the worker's clients trust. Both backends mount it the same way; the proxy
//! variables the usual clients read point at the forwarder.
//!
//! The forwarder is `forwarder/main.rs`, built by `build.rs` as a static program of its own:
//! it runs in any image and holds nothing (no policy, no secret); the gateway, outside, decides.

use std::ffi::OsString;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The forwarder, statically linked (see `build.rs`).
pub const FORWARDER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/forward"));

/// Where the gateway's directory is inside the sandbox.
pub const INSIDE: &str = "/run/forgeward";

/// The gateway's socket, the forwarder and the CA bundle, by name in the directory.
pub const SOCKET: &str = "egress.sock";
pub const FORWARD: &str = "forward";
pub const CA_BUNDLE: &str = "ca.pem";

/// Where the forwarder listens inside the sandbox (its own loopback; nothing else shares it).
pub const PROXY_ADDRESS: &str = "127.0.0.1:3128";

/// What never goes through the gateway: the sandbox's own loopback (a test server the worker
/// starts).
const NO_PROXY: &str = "localhost,127.0.0.1,::1";

/// The variables that point clients at the gateway: for curl, git, pip and requests, Go,
/// npm, Node (which reads the proxy variables only when told to) and cargo.
const PROXY_VARIABLES: [&str; 8] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "npm_config_proxy",
    "npm_config_https_proxy",
    "CARGO_HTTP_PROXY",
    "ALL_PROXY",
];

/// The variables that name the CA bundle: OpenSSL (Python's `ssl`, Ruby, curl's OpenSSL
/// builds), requests, curl, git, Node, pip, npm and cargo.
const CA_VARIABLES: [&str; 8] = [
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "NODE_EXTRA_CA_CERTS",
    "PIP_CERT",
    "npm_config_cafile",
    "CARGO_HTTP_CAINFO",
];

/// The other variables the gateway sets.
const OTHER_VARIABLES: [&str; 3] = ["NO_PROXY", "no_proxy", "NODE_USE_ENV_PROXY"];

/// The egress gateway's directory on the host, as a sandbox mounts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayMount {
    /// Holds [`SOCKET`], [`FORWARD`] and, with `ca_bundle`, [`CA_BUNDLE`].
    pub dir: PathBuf,
    /// Whether the worker's clients are told to trust [`CA_BUNDLE`] (the gateway terminates
    /// TLS for the hosts it injects secrets for).
    pub ca_bundle: bool,
}

impl GatewayMount {
    /// Makes `dir` (new, `0755`) with the forwarder and, when given, the CA bundle (the
    /// system's roots and the job's CA, in PEM). The socket is bound there by [`bind`].
    pub fn create(dir: &Path, ca_bundle: Option<&str>) -> io::Result<GatewayMount> {
        std::fs::create_dir(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))?;
        let forward = dir.join(FORWARD);
        std::fs::write(&forward, FORWARDER)?;
        std::fs::set_permissions(&forward, std::fs::Permissions::from_mode(0o755))?;
        if let Some(pem) = ca_bundle {
            let path = dir.join(CA_BUNDLE);
            std::fs::write(&path, pem)?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
        }
        Ok(GatewayMount {
            dir: dir.to_path_buf(),
            ca_bundle: ca_bundle.is_some(),
        })
    }

    /// Binds the gateway's socket in the directory, connectable by the worker whatever its
    /// user id (the directory above is the bot's own; inside, only the worker sees it).
    ///
    /// Bound through `/proc/self/fd`, so that a data directory deep enough to make the path
    /// longer than a socket address holds (108 bytes) still works.
    pub fn bind(&self) -> io::Result<std::os::unix::net::UnixListener> {
        let dir = std::fs::File::open(&self.dir)?;
        use std::os::fd::AsRawFd;
        let short = format!("/proc/self/fd/{}/{SOCKET}", dir.as_raw_fd());
        let listener = std::os::unix::net::UnixListener::bind(short)?;
        drop(dir);
        std::fs::set_permissions(
            self.dir.join(SOCKET),
            std::fs::Permissions::from_mode(0o666),
        )?;
        Ok(listener)
    }

    /// The command the sandbox runs: the forwarder in front of `command`.
    pub fn command(&self, command: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![
            format!("{INSIDE}/{FORWARD}").into(),
            PROXY_ADDRESS.into(),
            format!("{INSIDE}/{SOCKET}").into(),
        ];
        out.extend(command);
        out
    }

    /// The variables that send the worker's clients through the gateway.
    pub fn environment(&self) -> Vec<(String, String)> {
        let proxy = format!("http://{PROXY_ADDRESS}");
        let mut env: Vec<(String, String)> = PROXY_VARIABLES
            .iter()
            .map(|name| ((*name).to_owned(), proxy.clone()))
            .collect();
        env.push(("NO_PROXY".into(), NO_PROXY.into()));
        env.push(("no_proxy".into(), NO_PROXY.into()));
        env.push(("NODE_USE_ENV_PROXY".into(), "1".into()));
        if self.ca_bundle {
            let bundle = format!("{INSIDE}/{CA_BUNDLE}");
            env.extend(
                CA_VARIABLES
                    .iter()
                    .map(|name| ((*name).to_owned(), bundle.clone())),
            );
        }
        env
    }
}

/// Whether the gateway sets `name` itself (an allowed variable of that name is not passed on).
pub fn is_gateway_variable(name: &str) -> bool {
    PROXY_VARIABLES
        .iter()
        .chain(&CA_VARIABLES)
        .chain(&OTHER_VARIABLES)
        .any(|v| *v == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_holds_a_static_forwarder_and_the_bundle_when_asked() {
        let tmp = tempfile::tempdir().unwrap();
        let mount = GatewayMount::create(&tmp.path().join("egress"), Some("PEM")).unwrap();
        let forward = std::fs::metadata(mount.dir.join(FORWARD)).unwrap();
        assert_eq!(forward.permissions().mode() & 0o777, 0o755);
        // Statically linked: no interpreter (PT_INTERP) to find in an image that lacks the
        // host's libc.
        let bytes = std::fs::read(mount.dir.join(FORWARD)).unwrap();
        assert_eq!(&bytes[..4], b"\x7fELF");
        assert_eq!(bytes[4], 2, "a 64-bit ELF");
        let word = |at: usize, len: usize| {
            let mut v = 0u64;
            for (i, b) in bytes[at..at + len].iter().enumerate() {
                v |= u64::from(*b) << (8 * i);
            }
            v as usize
        };
        let (phoff, phentsize, phnum) = (word(0x20, 8), word(0x36, 2), word(0x38, 2));
        assert!(phnum > 0);
        let interp = (0..phnum).any(|i| word(phoff + i * phentsize, 4) == 3);
        assert!(!interp, "the forwarder asks for a dynamic loader");
        assert_eq!(
            std::fs::read_to_string(mount.dir.join(CA_BUNDLE)).unwrap(),
            "PEM"
        );
        let env = mount.environment();
        assert!(env.contains(&("SSL_CERT_FILE".into(), "/run/forgeward/ca.pem".into())));
        assert!(env.contains(&("HTTPS_PROXY".into(), "http://127.0.0.1:3128".into())));
        assert!(env.iter().all(|(name, _)| is_gateway_variable(name)));

        let plain = GatewayMount::create(&tmp.path().join("plain"), None).unwrap();
        assert!(!plain.dir.join(CA_BUNDLE).exists());
        assert!(
            plain
                .environment()
                .iter()
                .all(|(n, _)| n != "SSL_CERT_FILE")
        );
    }

    #[test]
    fn the_socket_binds_under_a_path_longer_than_a_socket_address() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("d".repeat(100)).join("e".repeat(40));
        std::fs::create_dir_all(&deep).unwrap();
        let mount = GatewayMount::create(&deep.join("egress"), None).unwrap();
        assert!(mount.dir.join(SOCKET).as_os_str().len() > 108);
        let listener = mount.bind().unwrap();
        let mode = std::fs::metadata(mount.dir.join(SOCKET))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o666);
        // Reached through the same short form a client inside would not need.
        let dir = std::fs::File::open(&mount.dir).unwrap();
        use std::os::fd::AsRawFd;
        let client = std::os::unix::net::UnixStream::connect(format!(
            "/proc/self/fd/{}/{SOCKET}",
            dir.as_raw_fd()
        ));
        assert!(client.is_ok());
        assert!(listener.accept().is_ok());
    }

    #[test]
    fn the_forwarder_goes_in_front_of_the_command() {
        let mount = GatewayMount {
            dir: PathBuf::from("/x"),
            ca_bundle: false,
        };
        let cmd = mount.command(["bash".into(), "-c".into(), "true".into()]);
        assert_eq!(
            cmd,
            [
                "/run/forgeward/forward",
                "127.0.0.1:3128",
                "/run/forgeward/egress.sock",
                "bash",
                "-c",
                "true"
            ]
            .map(OsString::from)
        );
    }
}
