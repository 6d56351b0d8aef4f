# Go: the sandbox base plus Debian's Go toolchain and the repository's modules downloaded at
# build time into a read-only module cache (the worker has no network). The build context holds
# only go.mod and go.sum.
#
#   docker build --build-arg BASE=<sandbox image> -f go.Dockerfile <dir with the files>
#
# GOPROXY=off at run time: a module missing from the cache fails at once with its name instead
# of hanging on a network the worker does not have. The build cache goes to $HOME (tmpfs).
ARG BASE
FROM ${BASE}
USER root
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends golang-go gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
COPY go.mod go.sum* /opt/forgeward/deps/
RUN cd /opt/forgeward/deps \
    && GOMODCACHE=/opt/go/mod GOFLAGS=-modcacherw go mod download \
    && rm -rf /root/.cache
ENV GOMODCACHE=/opt/go/mod \
    GOPROXY=off \
    GOFLAGS=-mod=mod \
    GOTOOLCHAIN=local
USER 10001:10001
