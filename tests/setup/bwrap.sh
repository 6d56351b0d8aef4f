#!/usr/bin/env bash
# The bubblewrap sandbox's tests need `bwrap` (Debian's bubblewrap package) and util-linux's
# `setpriv` (essential on Debian, so normally present). Installs what is missing with apt-get
# (needs root); a no-op when both are there. Exports nothing.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
[ -x /usr/bin/setpriv ] || missing+=(util-linux)

if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi

# Namespaces must be creatable here; say why not in one line rather than fail test by test.
if ! err=$(bwrap --ro-bind / / --unshare-pid --unshare-net --unshare-ipc --dev /dev --proc /proc true 2>&1); then
    echo "bwrap cannot create namespaces here: ${err%%$'\n'*}" >&2
    exit 1
fi
