#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the headless browser tests.
# Idempotent: exits at once when /usr/bin/chromium exists. Never downloads a
# browser of its own; it installs the distribution package.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi

. "$(dirname "$0")/apt-install.sh"
apt_install chromium

if [ ! -x /usr/bin/chromium ]; then
  echo "chromium was installed but /usr/bin/chromium is missing" >&2
  exit 1
fi
