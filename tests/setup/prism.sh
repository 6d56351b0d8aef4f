#!/usr/bin/env bash
# Stoplight Prism serving GitHub's own OpenAPI description and Forgejo's own Swagger 2.0
# description, for the GitHub and Forgejo clients' conformance tests
# (tests/integration/github_prism.rs, tests/integration/forgejo_prism.rs).
#
# Installs Node.js and npm from Debian when they are missing, then @stoplight/prism-cli and
# @octokit/openapi from npm into a fixed directory, and starts three mock servers on 127.0.0.1
# in the background, each unless something already answers on its port:
#   - `prism mock --errors` (port 4010): validates every request against the description and
#     answers a request that does not match with a 4xx;
#   - `prism mock` (port 4011): serves the description's own examples unvalidated. Some of
#     GitHub's examples break its own schema (a pull request's `requested_teams` without `type`),
#     which makes the strict server answer 500 to a valid request; the test then takes the
#     example from this one;
#   - `prism mock --errors` (port 4012) on tests/data/forgejo/swagger.v1.json, Forgejo 11's API
#     description as the repository keeps it. Prism serves it at the root: the test's proxy
#     takes `/api/v1` off each path.
# Idempotent, and fast when everything is in place. Prints the variables the tests read:
#   export FORGEWARD_TEST_PRISM_URL=http://127.0.0.1:4010
#   export FORGEWARD_TEST_PRISM_EXAMPLES_URL=http://127.0.0.1:4011
#   export FORGEWARD_TEST_FORGEJO_PRISM_URL=http://127.0.0.1:4012
set -euo pipefail

DIR="${FORGEWARD_PRISM_DIR:-/opt/forgeward-test/prism}"
PORT="${FORGEWARD_PRISM_PORT:-4010}"
EXAMPLES_PORT="$((PORT + 1))"
FORGEJO_PORT="$((PORT + 2))"
SPEC="${DIR}/node_modules/@octokit/openapi/generated/api.github.com.json"
FORGEJO_SPEC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../data/forgejo" && pwd)/swagger.v1.json"
PRISM="${DIR}/node_modules/.bin/prism"
# Pinned: the test asserts values from the description's examples, which change between releases.
PRISM_VERSION=5.14.2
OPENAPI_VERSION=23.0.2

log() { echo "prism.sh: $*" >&2; }

# Prism in --errors mode answers a request that does not match the description with a 4xx,
# so any answer at all means it is up. The probe is a documented path.
answering() {
    curl -s -o /dev/null -m 2 "http://127.0.0.1:$1/zen" 2>/dev/null
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

installed() {
    [[ -x "$PRISM" && -f "$SPEC" ]] &&
        grep -q "\"version\": \"${OPENAPI_VERSION}\"" "${DIR}/node_modules/@octokit/openapi/package.json" &&
        grep -q "\"version\": \"${PRISM_VERSION}\"" "${DIR}/node_modules/@stoplight/prism-cli/package.json"
}

if ! installed; then
    log "installing @stoplight/prism-cli and @octokit/openapi into ${DIR}"
    mkdir -p "$DIR"
    if [[ ! -f "${DIR}/package.json" ]]; then
        echo '{"name":"forgeward-test-prism","private":true}' >"${DIR}/package.json"
    fi
    (cd "$DIR" && npm install --no-audit --no-fund --loglevel=error \
        "@stoplight/prism-cli@${PRISM_VERSION}" "@octokit/openapi@${OPENAPI_VERSION}" >&2)
fi

# start PORT LOG SPEC [FLAGS...]: a Prism serving SPEC on PORT unless one answers there already.
start() {
    local port="$1" log="$2" spec="$3"
    shift 3
    if answering "$port"; then
        return
    fi
    log "starting prism mock${*:+ $*} on 127.0.0.1:${port} for ${spec} (log: ${log})"
    # setsid: Prism outlives this script and the shell that ran it.
    setsid "$PRISM" mock "$@" -h 127.0.0.1 -p "$port" "$spec" >"$log" 2>&1 </dev/null &
}

# wait_for PORT LOG: until Prism answers; GitHub's description takes a while to load on a small
# machine, and three load at once.
wait_for() {
    local port="$1" log="$2"
    for _ in $(seq 1 360); do
        if answering "$port"; then
            return
        fi
        sleep 0.5
    done
    log "prism did not answer on 127.0.0.1:${port} within 180 s; its log:"
    tail -n 20 "$log" >&2 || true
    exit 1
}

start "$PORT" "${DIR}/prism-errors.log" "$SPEC" --errors
start "$EXAMPLES_PORT" "${DIR}/prism-examples.log" "$SPEC"
start "$FORGEJO_PORT" "${DIR}/prism-forgejo.log" "$FORGEJO_SPEC" --errors
wait_for "$PORT" "${DIR}/prism-errors.log"
wait_for "$EXAMPLES_PORT" "${DIR}/prism-examples.log"
wait_for "$FORGEJO_PORT" "${DIR}/prism-forgejo.log"

echo "export FORGEWARD_TEST_PRISM_URL=http://127.0.0.1:${PORT}"
echo "export FORGEWARD_TEST_PRISM_EXAMPLES_URL=http://127.0.0.1:${EXAMPLES_PORT}"
echo "export FORGEWARD_TEST_FORGEJO_PRISM_URL=http://127.0.0.1:${FORGEJO_PORT}"
