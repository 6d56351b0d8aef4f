#!/usr/bin/env bash
# A real headless browser for the job page's browser test (tests/integration/job_page_browser.rs):
# Debian's `chromium` and `chromium-driver` (chromedriver, which the test drives over WebDriver),
# installed with apt-get when missing (needs root); a no-op when both are there. Checks that
# Chromium starts headless here (as root it needs --no-sandbox), so a broken install is said in
# one line now rather than as a WebDriver error later.
#
# Prints on stdout:
#   export FORGEWARD_TEST_CHROMEDRIVER=/usr/bin/chromedriver
#   export FORGEWARD_TEST_CHROMIUM=/usr/bin/chromium
set -euo pipefail

log() { echo "chromium.sh: $*" >&2; }

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
# The pages' headlines start with an emoji: without a colour emoji font the screenshots the
# test keeps show a box in its place.
dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || missing+=(fonts-noto-color-emoji)
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Another install may hold dpkg's lock for a while (the setup scripts of a shared machine):
    # wait for it rather than fail.
    wait_lock=(-o DPkg::Lock::Timeout=600)
    apt-get install "${wait_lock[@]}" -y -qq "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update "${wait_lock[@]}" -qq >&2 \
            && apt-get install "${wait_lock[@]}" -y -qq "${missing[@]}" >/dev/null; }
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
if ! out=$(timeout 60 /usr/bin/chromium --headless=new --no-sandbox --disable-gpu \
    --user-data-dir="$profile" --dump-dom 'data:text/html,<p>ok</p>' 2>&1); then
    log "chromium does not start headless here: ${out%%$'\n'*}"
    exit 1
fi
if ! /usr/bin/chromedriver --version >/dev/null 2>&1; then
    log "chromedriver does not run: $(/usr/bin/chromedriver --version 2>&1 | head -n 1)"
    exit 1
fi

echo "export FORGEWARD_TEST_CHROMEDRIVER=/usr/bin/chromedriver"
echo "export FORGEWARD_TEST_CHROMIUM=/usr/bin/chromium"
