#!/usr/bin/env bash
# The tools that check deploy/ (tests/integration/deploy.rs), on a fresh Debian 12 machine as on
# a developer's. Each step is a no-op when already done; installing needs root.
#
#   - `systemd-analyze` (Debian's systemd), which verifies the units in deploy/systemd. It
#     needs no systemd running as PID 1.
#   - `kubernetes-validate` from PyPI, pinned, in a virtual environment of its own: it carries
#     the Kubernetes JSON schemas, so deploy/kubernetes is validated offline.
#   - Docker Compose v2 (`docker compose`). Debian 12 has only Compose v1 (docker-compose
#     1.29, Python, end of life since 2023) and no docker-compose-plugin; Debian 13 packages
#     Compose v2 as `docker-compose`, a Go program that needs only libc6 (>= 2.34; Debian 12 has
#     2.36). Its .deb is fetched from Debian's own archive with apt (signature and checksum
#     checked as for any package) through a package list of its own, so the machine's sources
#     stay Debian 12's, and installed with dpkg. Set FORGEWARD_COMPOSE_SKIP_INSTALL=1 to use a
#     Compose v2 of your own, which then only has to answer `docker compose version`.
#
# The Docker Engine itself (docker.io) is tests/setup/docker.sh's. Exports nothing.
set -euo pipefail

mirror="${FORGEWARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Pinned: the version whose schemas the manifests are checked against, and its CLI's output.
KUBERNETES_VALIDATE_VERSION=1.37.0
venv="${FORGEWARD_KUBERNETES_VALIDATE_DIR:-/opt/forgeward-test/kubernetes-validate}"

log() { echo "deploy.sh: $*" >&2; }

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 \
        || { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "$@" >&2; }
}

if ! command -v systemd-analyze >/dev/null 2>&1; then
    log "installing systemd (for systemd-analyze)"
    apt_install systemd
fi

if ! /usr/bin/python3 -m venv --help >/dev/null 2>&1 || ! /usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1; then
    log "installing python3-venv"
    apt_install python3-venv
fi
if ! "$venv/bin/kubernetes-validate" --version 2>/dev/null | grep -qF "$KUBERNETES_VALIDATE_VERSION"; then
    log "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION into $venv"
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >&2
fi
ln -sf "$venv/bin/kubernetes-validate" /usr/local/bin/kubernetes-validate

# `docker compose` once docker.io is there; the same program as `docker-compose` before.
compose_v2() {
    { docker compose version 2>/dev/null || docker-compose version 2>/dev/null; } | grep -q 'version v\?2\.'
}
if [ "${FORGEWARD_COMPOSE_SKIP_INSTALL:-}" != 1 ] && ! compose_v2; then
    log "installing Docker Compose v2 from Debian 13's docker-compose package"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/lists/partial" "$work/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
        >"$work/sources.list"
    apt_opts=(
        -o "Dir::Etc::SourceList=$work/sources.list"
        -o "Dir::Etc::SourceParts=$work/none"
        -o "Dir::State::Lists=$work/lists"
        -o "Dir::Cache::Archives=$work/archives"
        -o "APT::Sandbox::User=root"
    )
    apt-get "${apt_opts[@]}" update -qq >&2
    (cd "$work" && apt-get "${apt_opts[@]}" download docker-compose >&2)
    dpkg -i "$work"/docker-compose_*.deb >&2
fi
if ! compose_v2; then
    log "Docker Compose v2 does not answer: $(docker-compose version 2>&1 | head -n 1)"
    exit 1
fi
