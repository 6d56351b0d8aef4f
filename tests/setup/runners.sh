#!/usr/bin/env bash
# The verification's tests run real test runners in a real sandbox: pytest, Go and cargo from
# Debian (under /usr, which the bubblewrap sandbox sees read-only; the build's own toolchain
# stays first on the host's PATH), Jest and Vitest from npm into
# /opt/forgeward-test-node (under /opt, likewise). Installs what is missing (apt-get and npm
# need root and the registries); a no-op when all are there. Exports where the Node packages are,
# Verdaccio (a local npm registry, for the environment's tests) and a Node.js release's package.
set -euo pipefail

missing=()
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || missing+=(python3-pytest)
[ -x /usr/bin/go ] || missing+=(golang-go)
[ -x /usr/bin/cargo ] || missing+=(cargo)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi

node_dir=/opt/forgeward-test-node
if [ ! -x "$node_dir/node_modules/.bin/jest" ] || [ ! -x "$node_dir/node_modules/.bin/vitest" ]; then
    echo "installing jest and vitest into $node_dir" >&2
    mkdir -p "$node_dir"
    (cd "$node_dir" && { [ -f package.json ] || echo '{"private":true}' > package.json; } \
        && npm install --no-audit --no-fund --loglevel=error jest@29 vitest@2 >/dev/null)
fi

# A local npm registry for the environment's tests (tests/integration/environment.rs): they
# publish a package to it on loopback and install it through the egress gateway.
registry_dir=/opt/forgeward-test-verdaccio
if [ ! -x "$registry_dir/node_modules/.bin/verdaccio" ]; then
    echo "installing verdaccio into $registry_dir" >&2
    mkdir -p "$registry_dir"
    (cd "$registry_dir" && { [ -f package.json ] || echo '{"private":true}' > package.json; } \
        && npm install --no-audit --no-fund --loglevel=error verdaccio@6 >/dev/null)
fi

# A Node.js release other than the host's, as the npm registry holds it (the node-linux-<arch>
# package), for the test that installs a declared Node version through the gateway: the test
# publishes it to its local registry.
toolchain_dir=/opt/forgeward-test-toolchains
node_arch=$(uname -m | sed 's/^x86_64$/x64/; s/^aarch64$/arm64/')
if ! ls "$toolchain_dir"/node-linux-"$node_arch"-22.*.tgz >/dev/null 2>&1; then
    echo "fetching node-linux-$node_arch@22 into $toolchain_dir" >&2
    mkdir -p "$toolchain_dir"
    (cd "$toolchain_dir" && npm pack --silent "node-linux-$node_arch@22" >/dev/null)
fi
node_toolchain=$(ls "$toolchain_dir"/node-linux-"$node_arch"-22.*.tgz | head -n 1)

echo "export FORGEWARD_TEST_NODE_MODULES=$node_dir/node_modules"
echo "export FORGEWARD_TEST_NODE_TOOLCHAIN=$node_toolchain"
echo "export FORGEWARD_TEST_VERDACCIO=$registry_dir/node_modules/.bin/verdaccio"
