#!/usr/bin/env bash
# Makes sure Debian's dovecot-imapd is installed for the mail tests, which start
# their own Dovecot on a loopback port with their own configuration (never the
# system service). Idempotent: exits at once when both binaries exist.
set -euo pipefail

if [ -x /usr/sbin/dovecot ] && [ -x /usr/lib/dovecot/imap ]; then
  exit 0
fi

. "$(dirname "$0")/apt-install.sh"

# The package would start the system service after installing; the tests never use it,
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

apt_install dovecot-imapd

if [ ! -x /usr/sbin/dovecot ] || [ ! -x /usr/lib/dovecot/imap ]; then
  echo "dovecot-imapd was installed but /usr/sbin/dovecot or /usr/lib/dovecot/imap is missing" >&2
  exit 1
fi
