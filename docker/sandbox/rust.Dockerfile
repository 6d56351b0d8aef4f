# Rust: the sandbox base plus a Rust toolchain (Debian 12's cargo-web and rustc-web, 1.85) and
# the crates the lock file names, fetched at build time (the worker has no network). The build
# context holds only Cargo.toml and Cargo.lock.
#
#   docker build --build-arg BASE=<sandbox image> -f rust.Dockerfile <dir with the files>
#
# A workspace's member manifests are not in the context, so `cargo fetch` sees the root package
# only; a repository whose root is a virtual workspace fails the build (a clear job error).
# At run time cargo is offline, reads the fetched crates from /opt/cargo (read-only, like the
# whole root filesystem) and builds into /tmp. Debian 12's plain `cargo` (1.63) cannot fetch
# from the sparse index, hence the -web toolchain; a BASE that has cargo already keeps its own.
ARG BASE
FROM ${BASE}
USER root
RUN command -v cargo >/dev/null || { apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cargo-web rustc-web gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*; }
COPY Cargo.toml Cargo.lock /opt/forgeward/deps/
# Stub targets: cargo needs one to read a package manifest; their content does not matter.
RUN cd /opt/forgeward/deps \
    && mkdir -p src \
    && : > src/lib.rs \
    && echo 'fn main() {}' > src/main.rs \
    && CARGO_HOME=/opt/cargo cargo fetch --locked \
    && chmod -R a+rX /opt/cargo
ENV CARGO_NET_OFFLINE=true \
    CARGO_HOME=/opt/cargo \
    CARGO_TARGET_DIR=/tmp/cargo-target
USER 10001:10001
