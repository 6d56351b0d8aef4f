#!/usr/bin/env bash
# Stoplight Prism serving GitHub's own OpenAPI description, for the GitHub client's
# conformance test (tests/integration/github_prism.rs).
#
# Installs Node.js and npm from Debian when they are missing, then @stoplight/prism-cli and
# @octokit/openapi from npm into a fixed directory, and starts `prism mock --errors` on
# 127.0.0.1 in the background unless something already answers there. Idempotent, and fast
# when everything is in place. Prints the one variable the test reads:
#   export FORGEWARD_TEST_PRISM_URL=http://127.0.0.1:<port>
set -euo pipefail

DIR="${FORGEWARD_PRISM_DIR:-/opt/forgeward-test/prism}"
PORT="${FORGEWARD_PRISM_PORT:-4010}"
URL="http://127.0.0.1:${PORT}"
SPEC="${DIR}/node_modules/@octokit/openapi/generated/api.github.com.json"
PRISM="${DIR}/node_modules/.bin/prism"
LOG="${DIR}/prism.log"

log() { echo "prism.sh: $*" >&2; }

# Prism in --errors mode answers a request that does not match the description with a 4xx,
# so any answer at all, even 404 for `/`, means it is up. The probe is a documented path.
answering() {
    curl -s -o /dev/null -m 2 "${URL}/zen" 2>/dev/null
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    log "installing nodejs and npm from Debian"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >&2
fi
if ! command -v curl >/dev/null; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >&2
fi

if [[ ! -x "$PRISM" || ! -f "$SPEC" ]]; then
    log "installing @stoplight/prism-cli and @octokit/openapi into ${DIR}"
    mkdir -p "$DIR"
    if [[ ! -f "${DIR}/package.json" ]]; then
        echo '{"name":"forgeward-test-prism","private":true}' >"${DIR}/package.json"
    fi
    (cd "$DIR" && npm install --no-audit --no-fund --loglevel=error \
        @stoplight/prism-cli@5 @octokit/openapi >&2)
fi

if ! answering; then
    log "starting prism mock on ${URL} (log: ${LOG})"
    # setsid: Prism outlives this script and the shell that ran it.
    setsid "$PRISM" mock --errors -h 127.0.0.1 -p "$PORT" "$SPEC" >"$LOG" 2>&1 </dev/null &
    # GitHub's description is large: Prism takes a while to parse it on a small machine.
    for _ in $(seq 1 240); do
        if answering; then break; fi
        sleep 0.5
    done
    if ! answering; then
        log "prism did not answer on ${URL} within 120 s; its log:"
        tail -n 20 "$LOG" >&2 || true
        exit 1
    fi
fi

echo "export FORGEWARD_TEST_PRISM_URL=${URL}"
