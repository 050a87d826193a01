#!/usr/bin/env bash
# Makes sure PostgreSQL's server binaries (initdb, pg_ctl) and psql are
# installed for the fault tests, which run a PostgreSQL of their own in a
# temporary directory and stop and start it (never the system service).
# Idempotent: exits at once when the binaries exist.
set -euo pipefail

if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && command -v psql >/dev/null 2>&1; then
  exit 0
fi

. "$(dirname "$0")/apt-install.sh"

# The package would start the system cluster after installing; the tests never use it,
# so a policy that refuses service starts is put in place for the install when none exists.
policy=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$policy" ]; then
  if run_as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"; then
    placed_policy=1
  fi
fi
cleanup() {
  if [ "$placed_policy" -eq 1 ]; then run_as_root rm -f "$policy" || true; fi
}
trap cleanup EXIT

apt_install postgresql

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "postgresql was installed but /usr/lib/postgresql/*/bin/initdb is missing" >&2
  exit 1
fi
