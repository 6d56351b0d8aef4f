//! `forward`: the one program forgeward puts into a sandbox that reaches the network through
//! the egress gateway. It is not part of the crate: `build.rs` compiles it on its own, linked
//! statically (std only), so that it runs in any image, glibc or musl, with no library of its
//! own; forgeward embeds the result and binds it into the sandbox read-only.
//!
//! `forward ADDRESS SOCKET COMMAND [ARG…]` listens on ADDRESS (loopback, inside the sandbox's
//! own network namespace), runs COMMAND, and carries every connection made to ADDRESS to the
//! Unix socket SOCKET, where the gateway decides what it may reach. It ends when COMMAND ends,
//! with COMMAND's exit code, or killed by the same signal.
//!
//! It holds nothing: no policy, no secret, no name resolution. A worker that kills it only
//! loses its own way out; one that connects to SOCKET itself meets the same gateway.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode};
use std::thread;

/// A thread's stack: each connection has two threads, and the sandbox's address-space and
/// process limits count them.
const STACK: usize = 64 * 1024;

/// What one direction of a connection reads at a time.
const BUFFER: usize = 32 * 1024;

unsafe extern "C" {
    safe fn getpid() -> i32;
    safe fn kill(pid: i32, signal: i32) -> i32;
    safe fn signal(signal: i32, handler: usize) -> usize;
}

/// `SIG_DFL`.
const DEFAULT_ACTION: usize = 0;

/// The exit code of the forwarder's own failure (as `env` and `timeout` use it), told apart
/// from any the worker chooses.
const OWN_FAILURE: u8 = 125;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: forward ADDRESS SOCKET COMMAND [ARG...]");
        return ExitCode::from(OWN_FAILURE);
    }
    let address: SocketAddr = match args[1].parse() {
        Ok(address) => address,
        Err(e) => {
            eprintln!("forward: invalid address {:?}: {e}", args[1]);
            return ExitCode::from(OWN_FAILURE);
        }
    };
    let socket = args[2].clone();
    let listener = match TcpListener::bind(address) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("forward: cannot listen on {address}: {e}");
            return ExitCode::from(OWN_FAILURE);
        }
    };
    let mut child = match Command::new(&args[3]).args(&args[4..]).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("forward: cannot run {}: {e}", args[3]);
            return ExitCode::from(127);
        }
    };
    let accepting = thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || accept(listener, socket));
    if let Err(e) = accepting {
        eprintln!("forward: no thread to accept connections: {e}");
    }
    let status = match child.wait() {
        Ok(status) => status,
        Err(e) => {
            eprintln!("forward: waiting for {}: {e}", args[3]);
            return ExitCode::from(OWN_FAILURE);
        }
    };
    if let Some(code) = status.code() {
        return ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1));
    }
    if let Some(sig) = status.signal() {
        // Ended the same way as the worker, so the sandbox reports the limit it hit.
        signal(sig, DEFAULT_ACTION);
        kill(getpid(), sig);
        return ExitCode::from(u8::try_from((128 + sig) & 0xff).unwrap_or(1));
    }
    ExitCode::from(1)
}

/// Carries each connection to `socket`, on threads of its own; a connection that finds no
/// gateway, or no thread to carry it, is closed.
fn accept(listener: TcpListener, socket: String) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            // Out of descriptors, most likely: wait for some to be closed rather than spin.
            thread::sleep(std::time::Duration::from_millis(20));
            continue;
        };
        let socket = socket.clone();
        let _ = thread::Builder::new()
            .stack_size(STACK)
            .spawn(move || carry(stream, &socket));
    }
}

fn carry(tcp: TcpStream, socket: &str) {
    let Ok(unix) = UnixStream::connect(socket) else {
        return;
    };
    let _ = tcp.set_nodelay(true);
    let (Ok(tcp_back), Ok(unix_back)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let upstream = thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || pump(tcp, unix, |u| u.shutdown(Shutdown::Write)));
    if upstream.is_err() {
        return;
    }
    pump(unix_back, tcp_back, |t| t.shutdown(Shutdown::Write));
}

/// Copies `from` to `to` until `from` ends, then ends `to`'s writing half.
fn pump<R: Read, W: Write>(mut from: R, mut to: W, end: impl FnOnce(&W) -> io::Result<()>) {
    let mut buffer = vec![0u8; BUFFER];
    loop {
        match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = end(&to);
}
