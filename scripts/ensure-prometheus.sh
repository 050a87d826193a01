#!/usr/bin/env bash
# Makes sure a Prometheus (and its promtool) is at hand for the metrics tests,
# which start their own Prometheus on a loopback port with their own
# configuration (never a system service). Debian's prometheus package, pinned
# to one release and checked against its SHA-256, is downloaded into a cache
# directory and unpacked there; nothing is installed system-wide and no root is
# needed. Idempotent: exits at once when the cached binaries exist.
#
# The cache is $XDG_CACHE_HOME/opsplatform (default ~/.cache/opsplatform); the
# tests find the binaries in $CACHE/prometheus-$VERSION-$ARCH/usr/bin
# (packages/http-node/test/support/prometheus.ts names the same version).
set -euo pipefail

VERSION="2.42.0+ds-5+deb12u1"
case "$(uname -m)" in
  x86_64 | amd64) ARCH=amd64; SHA256=81d59a24fce84f7fbe97a45a4f2914b6a5881b5cd1db2a6a0e129e515e1a5f55; SHA1=5c841aaa0d406bb2700ea347da12010ac7752fed ;;
  aarch64 | arm64) ARCH=arm64; SHA256=ca131aa102390083398afbc80be9c8dd1dda78f9f92154fc00df8f7f1f4556e9; SHA1=cff6a336432d5e8e884664e109476cd83779e9c1 ;;
  *) echo "No pinned Prometheus for $(uname -m); install Debian's prometheus package by hand" >&2; exit 1 ;;
esac

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/opsplatform"
DIR="$CACHE/prometheus-$VERSION-$ARCH"
if [ -x "$DIR/usr/bin/prometheus" ] && [ -x "$DIR/usr/bin/promtool" ]; then
  exit 0
fi

FILE="prometheus_${VERSION}_${ARCH}.deb"
# The archive's pool while the release is current; the snapshot archive (by the file's SHA-1) once it is superseded.
URLS=(
  "https://deb.debian.org/debian/pool/main/p/prometheus/${FILE//+/%2B}"
  "http://deb.debian.org/debian/pool/main/p/prometheus/${FILE//+/%2B}"
  "https://snapshot.debian.org/file/$SHA1"
)

mkdir -p "$CACHE"
work="$(mktemp -d "$CACHE/.prometheus.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "Downloading Debian's Prometheus $VERSION for the tests..." >&2
fetched=0
for url in "${URLS[@]}"; do
  if curl -fsSL --retry 2 -o "$work/$FILE" "$url"; then
    if echo "$SHA256  $work/$FILE" | sha256sum -c --status; then
      fetched=1
      break
    fi
    echo "$url did not match the pinned SHA-256; trying the next source" >&2
  fi
done
if [ "$fetched" -ne 1 ]; then
  echo "Could not download $FILE with SHA-256 $SHA256." >&2
  echo "Install Debian's prometheus package by hand, or put prometheus and promtool in $DIR/usr/bin." >&2
  exit 1
fi

# A .deb is an ar archive whose data.tar.* holds the files; dpkg-deb unpacks it where present, ar and tar otherwise.
mkdir -p "$work/root"
if command -v dpkg-deb >/dev/null 2>&1; then
  dpkg-deb -x "$work/$FILE" "$work/root"
else
  (cd "$work" && ar x "$FILE" && tar -xf data.tar.* -C root)
fi
if [ ! -x "$work/root/usr/bin/prometheus" ] || [ ! -x "$work/root/usr/bin/promtool" ]; then
  echo "$FILE holds no usr/bin/prometheus or usr/bin/promtool" >&2
  exit 1
fi
rm -rf "$DIR"
mv "$work/root" "$DIR"
