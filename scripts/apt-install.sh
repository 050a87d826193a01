#!/usr/bin/env bash
# Installs one Debian package for the tests, as root or through sudo; sourced by
# the ensure-*.sh scripts. `apt_install PACKAGE` tries the local package lists
# first and refreshes them once when that fails.

run_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n "$@"
  else
    return 1
  fi
}

apt_install() {
  local package="$1"
  export DEBIAN_FRONTEND=noninteractive
  echo "Installing Debian's $package package for the tests..." >&2
  if ! run_as_root apt-get install -y --no-install-recommends "$package" >/dev/null 2>&1; then
    run_as_root apt-get update >/dev/null 2>&1 || true
    if ! run_as_root apt-get install -y --no-install-recommends "$package" >/dev/null; then
      echo "Could not install $package (needs root or sudo and Debian's package archive)." >&2
      echo "Install it by hand: apt-get install $package" >&2
      return 1
    fi
  fi
}
