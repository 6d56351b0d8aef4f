# Rust: the sandbox base plus cargo and rustc (Debian's, unless the base already has cargo) and
# a C linker. No repository's crates: those are its environment's (`cargo fetch` into
# /workspace/.forgeward-env/cargo through the egress gateway, lent to each sandbox; see
# src/jobs/environment.rs).
#
#   docker build --build-arg BASE=<an image> -f rust.Dockerfile <an empty directory>
#
# The build's output goes to /tmp (tmpfs), not into the checkout.
ARG BASE
FROM ${BASE}
USER root
RUN command -v cargo >/dev/null || { apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cargo-web rustc-web gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*; }
ENV CARGO_TARGET_DIR=/tmp/cargo-target
USER 10001:10001
