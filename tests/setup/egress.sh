#!/usr/bin/env bash
# A name for the egress gateway's tests (tests/integration/egress.rs): their upstreams listen on
# the host's loopback, and the gateway must reach them by a name that is neither `localhost`
# (which the sandbox's clients never send through a proxy: NO_PROXY keeps the sandbox's own
# loopback) nor an address. The name is added to /etc/hosts, which the gateway's resolver
# reads, once. Needs root the first time; a no-op after.
#
# Prints on stdout:  export FORGEWARD_TEST_EGRESS_HOST=<the name>
set -euo pipefail

name="upstream.egress.test"
if ! getent hosts "$name" | grep -q '^127\.0\.0\.1 '; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "egress.sh: $name does not resolve to 127.0.0.1; add '127.0.0.1 $name' to /etc/hosts (needs root)" >&2
        exit 1
    fi
    echo "egress.sh: adding $name to /etc/hosts" >&2
    # A file whose last line has no newline would run into ours.
    if [ -s /etc/hosts ] && [ -n "$(tail -c 1 /etc/hosts)" ]; then echo >> /etc/hosts; fi
    printf '127.0.0.1 %s\n' "$name" >> /etc/hosts
fi
echo "export FORGEWARD_TEST_EGRESS_HOST=$name"
