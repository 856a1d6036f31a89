#!/bin/sh
# Install Debian's chromium for the browser tests (tests/test_browser.py) when it is missing.
# Idempotent and quiet: does nothing when /usr/bin/chromium exists; prints one line otherwise.
set -eu
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
else
    SUDO=""
fi
echo "install-browser: installing Debian chromium (apt-get)"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version >/dev/null 2>&1 || {
    echo "install-browser: chromium was installed but does not start" >&2
    exit 1
}
