#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the headless browser tests.
# Idempotent: exits at once when /usr/bin/chromium exists. Never downloads a
# browser of its own; it installs the distribution package.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi

run_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n "$@"
  else
    return 1
  fi
}

export DEBIAN_FRONTEND=noninteractive
echo "Installing Debian's chromium package for the browser tests..." >&2
if ! run_as_root apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; then
  run_as_root apt-get update >/dev/null 2>&1 || true
  if ! run_as_root apt-get install -y --no-install-recommends chromium >/dev/null; then
    echo "Could not install chromium (needs root or sudo and Debian's package archive)." >&2
    echo "Install it by hand: apt-get install chromium" >&2
    exit 1
  fi
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "chromium was installed but /usr/bin/chromium is missing" >&2
  exit 1
fi
