#!/usr/bin/env bash
# Minimal Debian trees, cached as tarballs outside the clone: the fresh systems the release is
# proven on, and the Debian 11 sysroot the portable binary is linked against.
#
#   scripts/rxlab/debian-root.sh ensure SUITE...   each `debootstrap --variant=minbase SUITE`
#                                                  (bullseye, bookworm, trixie), made when
#                                                  missing; prints each cache's path
#   scripts/rxlab/debian-root.sh sysroot           Debian 11 with the dev packages of the C
#                                                  libraries the binary links (libc6-dev,
#                                                  libstdc++-10-dev, libcrypt-dev, zlib1g-dev,
#                                                  libyaml-dev), its absolute links made
#                                                  relative (lld resolves them inside the
#                                                  sysroot); prints the cache's path
#
# Caches: /var/cache/reachability_exporter/debootstrap-SUITE-minbase.tar.zst and
# debootstrap-bullseye-sysroot.tar.zst (RX_DEBIAN_CACHE_DIR overrides the folder; delete a file
# to refresh it). Each is made under an flock of its own, so a prefetch started in the
# background (scripts/test does at its start) and a stage that needs the tree never make it
# twice: the second waits for the first. The mirror is the one apt is configured with
# (RX_DEBIAN_MIRROR overrides); the only traffic is debootstrap and apt talking to it.
# About 70-90 s per tree from scratch, 10-20 s more for the sysroot's packages. Needs root.
set -euo pipefail
umask 022

die() { echo "debian-root: $*" >&2; exit 1; }

cache_dir=${RX_DEBIAN_CACHE_DIR:-/var/cache/reachability_exporter}
mirror=${RX_DEBIAN_MIRROR:-$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
  awk '$2 == "bookworm" { print $1; exit }')}
mirror=${mirror:-http://deb.debian.org/debian/}

tmp_dirs=()
cleanup() { for d in "${tmp_dirs[@]}"; do rm -rf --one-file-system "$d"; done; }
trap cleanup EXIT

# pack DIR CACHE: the tree as a tarball, without the downloaded packages.
pack() {
  rm -f "$1/var/cache/apt/archives/"*.deb
  tar --numeric-owner --xattrs --sort=name -C "$1" -cf - . | zstd -q -T0 -6 -o "$2.tmp"
  mv "$2.tmp" "$2"
}

# made_or_cached CACHE MAKER...: runs MAKER under the cache's lock when the cache is missing.
made_or_cached() {
  local cache=$1 started=$SECONDS
  shift
  mkdir -p "$cache_dir"
  exec {lock}>"$cache.lock"
  flock "$lock"
  if [ -s "$cache" ]; then
    echo "  cached: $cache ($(du -m "$cache" | cut -f1) MiB, made $(date -u -r "$cache" +%Y-%m-%dT%H:%MZ))" >&2
  else
    "$@"
    echo "  made $cache ($(du -m "$cache" | cut -f1) MiB) in $((SECONDS - started)) s" >&2
  fi
  exec {lock}>&-
  echo "$cache"
}

make_minbase() {
  local suite=$1 cache=$2 tmp
  echo "  not cached: debootstrap --variant=minbase $suite from $mirror" >&2
  tmp=$(mktemp -d /var/tmp/rx-debootstrap.XXXXXX)
  tmp_dirs+=("$tmp")
  debootstrap --variant=minbase "$suite" "$tmp/root" "$mirror" >"$tmp/log" 2>&1 ||
    { tail -20 "$tmp/log" >&2; die "debootstrap $suite failed"; }
  pack "$tmp/root" "$cache"
  rm -rf --one-file-system "$tmp"
}

ensure() {
  local suite=$1
  case "$suite" in bullseye | bookworm | trixie) ;; *) die "unknown suite $suite" ;; esac
  made_or_cached "$cache_dir/debootstrap-$suite-minbase.tar.zst" make_minbase "$suite" \
    "$cache_dir/debootstrap-$suite-minbase.tar.zst"
}

make_sysroot() {
  local cache=$1 base tmp root link target
  base=$(ensure bullseye)
  tmp=$(mktemp -d /var/tmp/rx-sysroot.XXXXXX)
  tmp_dirs+=("$tmp")
  root=$tmp/root
  mkdir -p "$root"
  zstd -q -dc "$base" | tar --numeric-owner --xattrs -xpf - -C "$root"
  echo "deb $mirror bullseye main" >"$root/etc/apt/sources.list"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 0755 "$root/usr/sbin/policy-rc.d"
  local env=(/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C)
  chroot "$root" "${env[@]}" apt-get update -qq >"$tmp/log" 2>&1 || { tail "$tmp/log" >&2; die "apt-get update failed"; }
  chroot "$root" "${env[@]}" apt-get install -y -qq --no-install-recommends \
    libc6-dev libgcc-10-dev libstdc++-10-dev libcrypt-dev zlib1g-dev libyaml-dev >"$tmp/log" 2>&1 ||
    { tail "$tmp/log" >&2; die "apt-get install of the sysroot's packages failed"; }
  rm -rf "$root/var/lib/apt/lists/"*
  # Absolute links (usr/lib64/ld-linux-x86-64.so.2 -> /lib/…) as relative ones: lld reads them
  # inside the sysroot.
  while IFS= read -r link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link"
  done < <(find "$root/usr" "$root/lib" "$root/lib64" -type l -lname '/*' 2>/dev/null)
  pack "$root" "$cache"
  rm -rf --one-file-system "$tmp"
}

case "${1:-}" in
  ensure)
    shift
    [ $# -gt 0 ] || die "usage: debian-root.sh ensure SUITE..."
    for s in "$@"; do ensure "$s"; done
    ;;
  sysroot)
    made_or_cached "$cache_dir/debootstrap-bullseye-sysroot.tar.zst" make_sysroot \
      "$cache_dir/debootstrap-bullseye-sysroot.tar.zst"
    ;;
  -h | --help | "") sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
  *) die "unknown command $1 (ensure SUITE..., sysroot)" ;;
esac
