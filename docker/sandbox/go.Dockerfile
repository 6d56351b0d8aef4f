# Go: the sandbox base plus Debian's Go toolchain (and a C compiler for cgo). No repository's
# modules: those are its environment's (`go mod download` into /workspace/.forgeward-env/go
# through the egress gateway, lent to each sandbox; see src/jobs/environment.rs).
#
#   docker build --build-arg BASE=<an image> -f go.Dockerfile <an empty directory>
#
# GOPROXY=off unless the setup's variables name a proxy: a module missing from the cache fails
# at once with its name instead of hanging on a network the sandbox does not have. GOTOOLCHAIN=
# local: the toolchain is this one, never one a go.mod asks to download.
ARG BASE
FROM ${BASE}
USER root
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends golang-go gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
ENV GOPROXY=off \
    GOTOOLCHAIN=local
USER 10001:10001
