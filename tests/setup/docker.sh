#!/usr/bin/env bash
# The Docker Engine for the sandbox tests, on a fresh Debian 12 machine as on a developer's:
# installs Debian's `docker.io` (and `mmdebstrap`) when missing, starts `dockerd` in the
# background when no daemon answers, and makes the local base image the sandbox images build
# FROM — a Debian 12 minbase rootfs passed to `docker import` — since no image registry is
# reachable here. Every step is a no-op when already done. Needs root.
#
# Prints on stdout:  export FORGEWARD_TEST_DOCKER_BASE=<the base image's tag>
# Everything else goes to stderr. Set FORGEWARD_TEST_DOCKER_BASE yourself to use a base of your
# own (e.g. debian:bookworm-slim pulled from a registry); this script then only checks it exists.
set -euo pipefail

base="${FORGEWARD_TEST_DOCKER_BASE:-forgeward/debian-base:bookworm}"
mirror="${FORGEWARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
dockerd_log="${FORGEWARD_DOCKERD_LOG:-/var/log/forgeward-dockerd.log}"

log() { echo "docker.sh: $*" >&2; }

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Debian's package puts its client in /usr/bin; a newer client elsewhere on PATH talks to the
# same daemon (the API version is negotiated), so whichever comes first is fine.
if ! docker info >/dev/null 2>&1; then
    log "starting dockerd (log: $dockerd_log)"
    # setsid: the daemon must outlive this script and the shell that ran it.
    setsid dockerd >>"$dockerd_log" 2>&1 </dev/null &
    # A cold start (containerd, networks, storage driver checks) takes a few seconds here.
    for _ in $(seq 1 120); do
        docker info >/dev/null 2>&1 && break
        sleep 0.5
    done
    if ! docker info >/dev/null 2>&1; then
        log "dockerd did not answer within 60 s; its last log lines:"
        tail -n 20 "$dockerd_log" >&2 || true
        exit 1
    fi
fi

if ! docker image inspect "$base" >/dev/null 2>&1; then
    if [ "$base" != "forgeward/debian-base:bookworm" ]; then
        log "base image $base not found; build or pull it, or unset FORGEWARD_TEST_DOCKER_BASE"
        exit 1
    fi
    # mmdebstrap (apt, parallel downloads) makes the rootfs in 20-70 s here against about
    # 75 s for debootstrap. The tarball goes through a file, not a pipe: a rootfs cut short
    # must never be imported under the tag this script takes as "done".
    log "building $base with mmdebstrap from $mirror"
    start=$(date +%s)
    rootfs=$(mktemp --suffix=.tar)
    trap 'rm -f "$rootfs"' EXIT
    # The CAs the host was given locally (an HTTPS proxy's, here) go into the rootfs too: the
    # image builds fetch Debian packages through the same network, and `ca-certificates`, when
    # the sandbox Dockerfile installs it, adds every *.crt found in that directory.
    mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
        --customize-hook='mkdir -p "$1/usr/local/share/ca-certificates"' \
        --customize-hook='for c in /usr/local/share/ca-certificates/*.crt; do [ -e "$c" ] && cp "$c" "$1/usr/local/share/ca-certificates/"; done; true' \
        bookworm "$rootfs" "$mirror" >&2
    docker import -c 'CMD ["/bin/bash"]' -c 'ENV LANG=C.UTF-8' "$rootfs" "$base" >/dev/null
    log "built $base in $(( $(date +%s) - start )) s"
fi

echo "export FORGEWARD_TEST_DOCKER_BASE=$base"
