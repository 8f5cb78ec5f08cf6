#!/usr/bin/env bash
# The release artifacts on fresh systems: the .deb installed by apt on Debian 12, the tarball's
# portable binary on Debian 11, 12 and 13, and the OCI image's root file system, each run
# against loopback only.
#
#   scripts/lab fresh-system [RELEASE_DIR]    (default .build/dist: scripts/release)
#
# The fresh systems: `debootstrap --variant=minbase` of bullseye, bookworm and trixie from the
# Debian mirror apt is configured with (RX_DEBIAN_MIRROR overrides), cached as tarballs outside
# the clone by scripts/rxlab/debian-root.sh (/var/cache/reachability_exporter/
# debootstrap-SUITE-minbase.tar.zst; RX_FRESH_CACHE overrides bookworm's); each made when missing
# (about 70-90 s), delete one to refresh. Whether it was cached
# and how long each part took is printed. Each part runs in a throwaway copy of it (a temp dir
# removed at exit); its mounts (/proc, /dev) live in a private mount namespace that ends with
# the part; the only traffic beyond loopback is apt talking to the Debian mirror. Every run of
# the binary is under a timeout in a network namespace holding only loopback, with
# REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1, probing listeners started here.
#
# (a) The .deb: `apt-get install -y ./reachability-exporter_….deb` in the chroot resolves its
#     Depends and Recommends from the mirror (/etc/resolv.conf copied in; no service can start:
#     policy-rc.d exits 101 and there is no systemd; checked: no process left in the chroot).
#     Then /usr/bin/reachability_exporter: --version; `check` of a TCP probe against a listener
#     (exit 0, full), then the closed port (exit 2, refused); an HTTPS probe of a loopback server
#     whose certificate a test CA signed: refused (tls) until the CA is added with
#     update-ca-certificates (the package's ca-certificates), then full; ICMP as the package's
#     user through the cap_net_raw its postinst set (a fresh network namespace admits no group
#     to ping sockets, so only the capability can make this pass).
# (b) The tarball's portable binary (scripts/portable-link) in minimal Debian 11, 12 and 13 trees
#     (scripts/rxlab/debian-root.sh ensure: debootstrap --variant=minbase, cached), nothing
#     installed in them: ldd must find everything (glibc 2.31, 2.36, 2.41); its man page and
#     docs/ are in the tarball; check-config of its example file; then TCP (full, refused), ICMP
#     to 127.0.0.1, and HTTPS against the test CA's server: tls with no trust store, full with
#     SSL_CERT_FILE, full with the CA only in a distribution's bundle path (Debian's in 11,
#     Fedora/RHEL's /etc/pki/tls/certs/ca-bundle.crt in 12, /etc/ssl/cert.pem in 13).
# (c) The image: skopeo copy oci-archive → OCI layout, umoci unpack → a runtime bundle. Its
#     runtime config gives the user and the entrypoint; the entrypoint runs in the image's rootfs
#     (chroot, as that user, /proc and /dev mounted as a runtime would): the TCP check (0, then
#     2); the HTTPS check refused (tls) with the image's CA bundle, full once the test CA is
#     appended to it: the binary in the image finds the bundle through OpenSSL's default paths.
# (d) The image under a real runtime: `podman load` names it localhost/reachability_exporter:
#     VERSION; `podman run -d --network=none` (the container's own loopback) starts the exporter
#     as the image runs it (entrypoint, user 65532, workdir), serving and TCP-probing its own
#     port; `podman exec … check` of that port: exit 0, full; ICMP to 127.0.0.1 as the image's
#     user without any capability, given --sysctl net.ipv4.ping_group_range="0 2147483647" as
#     the Containerfile says (podman's default, "0 0", would refuse it): full; `podman stop`: 0;
#     then `podman run … check` of the port with nothing listening: exit 2, refused. Here podman
#     needs runc (crun refuses this kernel's hybrid cgroups), cgroupfs and explicit ulimits; if
#     podman cannot start a container at all the proof fails (RX_PROOF_ALLOW_NO_PODMAN=1 makes
#     it a NOTICE, for machines where containers cannot run: then the image was only proven by
#     chroot).
#
# Not proven: systemd running the unit (no systemd in a chroot; scripts/package-deb checks the
# unit with systemd-analyze); probes of public endpoints, so not the shipped CA bundle against
# real certificates (no traffic leaves the host); Docker or containerd loading the image (not
# installed here); other architectures; distributions other than Debian (only their CA bundle
# paths are).
#
# Needs root, debootstrap, zstd, skopeo, umoci, podman, runc, openssl, python3, unshare, ip
# (installed when missing, as scripts/package-deb does).
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/../.."
umask 022
export REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 LC_ALL=C.UTF-8

die() { echo "fresh-system: $*" >&2; exit 1; }

# In the chroot: a clean environment, the exporter's refusal of its public defaults kept.
clean_env=(/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
  LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1)
in_root() {
  local root=$1; shift
  chroot "$root" "${clean_env[@]}" "$@"
}

# ---- the checks, run inside a loopback-only network namespace ----------------------------------
# A listener on 127.0.0.1:0 (tcp: accept and close; https: 204 with the test certificate); its
# pid and port in $listener and $port.
start_listener() {
  local kind=$1 portfile
  portfile=$(mktemp)
  python3 "$RX_FS_TLS/listener.py" "$kind" "$portfile" "$RX_FS_TLS" </dev/null >/dev/null 2>&1 &
  listener=$!
  for _ in $(seq 100); do [ -s "$portfile" ] && break; sleep 0.05; done
  port=$(cat "$portfile"); rm -f "$portfile"
  [ -n "$port" ] || die "the loopback $kind listener did not start"
}

# The listener itself, written next to the test certificates.
write_listener() {
  cat >"$1" <<'EOF'
import http.server, socket, ssl, sys
kind, portfile, tls = sys.argv[1:4]
if kind == "tcp":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
    open(portfile, "w").write(str(s.getsockname()[1]))
    while True:
        s.accept()[0].close()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(204); self.end_headers()
    do_HEAD = do_GET
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(f"{tls}/server.crt", f"{tls}/server.key")
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(portfile, "w").write(str(srv.server_address[1]))
srv.serve_forever()
EOF
}

stop_listener() {
  [ -n "$listener" ] || return 0
  kill "$listener" 2>/dev/null || true
  wait "$listener" 2>/dev/null || true
  listener=""
}

# run_check WHERE WANT_RC WANT_TEXT RUNNER... -- CHECK_ARGS...: one `check`, its exit status and
# JSON output as wanted.
run_check() {
  local where=$1 want_rc=$2 want=$3; shift 3
  local runner=() out rc=0
  while [ "$1" != -- ]; do runner+=("$1"); shift; done
  shift
  out=$(timeout 30 "${runner[@]}" check "$@" --probe.trust-local-targets --no-path.monitor --output=json 2>&1) || rc=$?
  [ "$rc" = "$want_rc" ] && grep -q "$want" <<<"$out" ||
    die "[$where] check $*: exit $rc (want $want_rc and $want): $out"
  echo "  [$where] check $*: exit $rc, $want"
}

# The TCP check: full while the listener listens, limited (refused) once it is closed.
tcp_checks() {
  local where=$1; shift
  start_listener tcp
  run_check "$where" 0 '"state":"full"' "$@" -- "--probe.tcp=127.0.0.1:$port"
  stop_listener
  run_check "$where" 2 '"reason":"refused"' "$@" -- "--probe.tcp=127.0.0.1:$port"
}

# The HTTPS check against the test server: WANT is tls (the test CA not trusted) or full.
https_check() {
  local where=$1 want=$2; shift 2
  start_listener https
  if [ "$want" = full ]; then
    run_check "$where" 0 '"state":"full"' "$@" -- "--probe.http=https://127.0.0.1:$port/generate_204"
  else
    run_check "$where" 2 '"reason":"tls"' "$@" -- "--probe.http=https://127.0.0.1:$port/generate_204"
  fi
  stop_listener
}

# ---- the fresh root ------------------------------------------------------------------------------
# A throwaway copy of the cached root, ready for apt: mirror, updates and security as the host
# configures them (a real install has them), resolv.conf, no service starts.
fresh_copy() {
  local dest=$1
  mkdir -p "$dest"
  zstd -q -dc "$RX_FS_CACHE" | tar --numeric-owner --xattrs -xpf - -C "$dest"
  printf '%s\n' "${apt_sources[@]}" >"$dest/etc/apt/sources.list"
  cp -L /etc/resolv.conf "$dest/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' >"$dest/usr/sbin/policy-rc.d"
  chmod 0755 "$dest/usr/sbin/policy-rc.d"
}

# Inside a private mount namespace (the caller made it): /proc and /dev for the chroot.
mount_basics() {
  local root=$1
  mount --bind /proc "$root/proc"
  mount --bind /dev "$root/dev"
}

# Processes whose root is this directory (a service a postinst started, say).
procs_in() {
  local root p
  root=$(realpath "$1")
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline")"
  done
  return 0
}

# ---- (a) the .deb --------------------------------------------------------------------------------
part_deb() {  # in a private mount namespace
  local root=$1 deb=$2
  mount_basics "$root"
  cp "$deb" "$root/tmp/"
  in_root "$root" apt-get update -qq >/dev/null 2>&1 || { in_root "$root" apt-get update; die "apt-get update failed"; }
  local log
  log=$(in_root "$root" sh -c "cd /tmp && apt-get install -y ./$(basename "$deb")" 2>&1) ||
    { echo "$log"; die "apt-get install ./$(basename "$deb") failed"; }
  echo "  apt-get install -y ./$(basename "$deb"): the mirror supplied $(sed -n '/^The following NEW packages/,/^[0-9]* upgraded/p' <<<"$log" |
    sed '1d;$d' | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')"
  [ "$(in_root "$root" dpkg-query -W -f '${Status}' reachability-exporter)" = "install ok installed" ] ||
    die "reachability-exporter is not installed"
  local left
  left=$(procs_in "$root")
  [ -z "$left" ] || die "processes left running in the chroot after apt: $left"
  echo "  installed; no process running in the chroot (no service started)"
  echo "  $(in_root "$root" getent passwd reachability_exporter | cut -d: -f1,3,7); $(in_root "$root" getcap /usr/bin/reachability_exporter 2>/dev/null || echo 'no file capability')"
  cp "$RX_FS_TLS/ca.crt" "$root/usr/local/share/ca-certificates/rx-fresh-system-test.crt"
  unshare --net -- "$self" --inner part_deb_live "$root"
}

part_deb_live() {  # in a loopback-only network namespace
  local root=$1 bin=/usr/bin/reachability_exporter
  ip link set lo up
  echo "  [deb] $(in_root "$root" "$bin" --version | head -1)"
  local run=(chroot "$root" "${clean_env[@]}" "$bin")
  tcp_checks deb "${run[@]}"
  https_check deb tls "${run[@]}"
  in_root "$root" update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates failed in the chroot"
  https_check "deb, test CA added by update-ca-certificates" full "${run[@]}"
  if in_root "$root" getcap "$bin" 2>/dev/null | grep -q cap_net_raw; then
    run_check "deb, as user reachability_exporter" 0 '"state":"full"' chroot "$root" "${clean_env[@]}" setpriv \
      --reuid=reachability_exporter --regid=reachability_exporter --clear-groups "$bin" -- --probe.icmp=127.0.0.1
  else
    echo "  NOTICE: no cap_net_raw on $bin (no setcap, or no xattrs on this file system): ICMP as the user not checked"
  fi
}

# ---- (b) the tarball, in minimal Debian 11, 12 and 13 -------------------------------------------
# A tree as debootstrap left it, nothing installed: the portable binary must need no more.
fresh_tree() {
  mkdir -p "$2"
  zstd -q -dc "$1" | tar --numeric-owner --xattrs -xpf - -C "$2"
}

part_tarball() {  # in a private mount namespace
  local root=$1 tarball=$2 release=$3 bundle=$4 name
  name=$(basename "$tarball" .tar.gz)
  mount_basics "$root"
  tar -xzf "$tarball" -C "$root/opt"
  local bin=/opt/$name/reachability_exporter
  echo "  $(in_root "$root" sh -c '. /etc/os-release; echo "$PRETTY_NAME"'), $(in_root "$root" ldd --version | head -1 | sed 's/^ldd //')"
  echo "  unpacked to /opt/$name: $(cd "$root/opt/$name" && echo *)"
  [ -s "$root/opt/$name/reachability_exporter.1" ] && [ -s "$root/opt/$name/docs/flags.md" ] ||
    die "the tarball lacks its man page or docs/flags.md"
  if in_root "$root" ldd "$bin" | grep -q 'not found'; then
    die "[$release] the binary needs what a minimal tree lacks: $(in_root "$root" ldd "$bin" | grep 'not found' | tr -s ' \t\n' ' ')"
  fi
  echo "  ldd in the chroot, nothing missing: $(in_root "$root" ldd "$bin" | grep -o '^[[:space:]]*[^ ]*' | tr -d '\t' | tr '\n' ' ')"
  in_root "$root" "$bin" check-config "/opt/$name/reachability_exporter.yml" >/dev/null ||
    die "[$release] the tarball's reachability_exporter.yml fails check-config"
  echo "  check-config /opt/$name/reachability_exporter.yml: valid"
  cp "$RX_FS_TLS/ca.crt" "$root/tmp/rx-test-ca.crt"
  unshare --net -- "$self" --inner part_tarball_live "$root" "$bin" "$release" "$bundle"
}

# The checks: TCP (full, then refused), ICMP to 127.0.0.1 (root: a raw socket), HTTPS against
# the test CA's server: refused (tls) with no trust store at all, full with SSL_CERT_FILE, then
# full with the CA in BUNDLE only (each tree a different distribution's path).
part_tarball_live() {
  local root=$1 bin=$2 release=$3 bundle=$4
  ip link set lo up
  echo "  [$release] $(in_root "$root" "$bin" --version | head -1)"
  local run=(chroot "$root" "${clean_env[@]}" "$bin")
  tcp_checks "$release" "${run[@]}"
  run_check "$release, ICMP" 0 '"state":"full"' "${run[@]}" -- --probe.icmp=127.0.0.1
  https_check "$release, no trust store" tls "${run[@]}"
  https_check "$release, SSL_CERT_FILE" full chroot "$root" "${clean_env[@]}" SSL_CERT_FILE=/tmp/rx-test-ca.crt "$bin"
  mkdir -p "$root$(dirname "$bundle")"
  cp "$root/tmp/rx-test-ca.crt" "$root$bundle"
  https_check "$release, CA bundle at $bundle" full "${run[@]}"
  rm -f "$root$bundle"
}

# ---- (c) the image's root file system ------------------------------------------------------------
part_image() {  # in a private mount namespace
  local bundle=$1 rootfs=$1/rootfs
  mount --bind /proc "$rootfs/proc" 2>/dev/null || { mkdir -p "$rootfs/proc" && mount --bind /proc "$rootfs/proc"; }
  mkdir -p "$rootfs/dev" && mount --bind /dev "$rootfs/dev"
  unshare --net -- "$self" --inner part_image_live "$bundle"
}

part_image_live() {
  local bundle=$1 rootfs=$1/rootfs args uid gid
  ip link set lo up
  # What a runtime would run: process.args (entrypoint + cmd) and process.user of the bundle.
  read -r uid gid args < <(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["process"]
print(p["user"]["uid"], p["user"]["gid"], json.dumps(p["args"]))' "$bundle/config.json")
  local exe
  exe=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])[0])' "$args")
  local run=(chroot --userspec="$uid:$gid" "$rootfs" "$exe")
  echo "  [image] as $uid:$gid: $("${run[@]}" --version | head -1)"
  tcp_checks image "${run[@]}"
  https_check "image, its CA bundle" tls "${run[@]}"
  cat "$RX_FS_TLS/ca.crt" >>"$rootfs/etc/ssl/certs/ca-certificates.crt"
  https_check "image, test CA appended to /etc/ssl/certs/ca-certificates.crt" full "${run[@]}"
}

# ---- (d) podman ----------------------------------------------------------------------------------
part_podman() {  # in a private mount namespace and a loopback-only network namespace
  local archive=$1 ref=$2 store=$3
  ip link set lo up
  local name=rx-fresh-system-$$ listen=127.0.0.1:10361
  # Everything podman keeps in the temp dir; its cgroups (cgroupfs: libpod_parent) removed
  # afterwards unless they were there before.
  p=(podman --root "$store/root" --runroot "$store/run" --tmpdir "$store/tmp" --network-config-dir "$store/net"
    --storage-driver=vfs --cgroup-manager=cgroupfs --events-backend=file --runtime=runc)
  podman_name=$name
  podman_cgroups=$(ls -d /sys/fs/cgroup/*/libpod_parent 2>/dev/null || true)
  local loaded
  loaded=$("${p[@]}" load -q -i "$archive" 2>&1) || die "podman load: $loaded"
  local names
  names=$("${p[@]}" images --format '{{.Repository}}:{{.Tag}}')
  [ "$names" = "$ref" ] || die "podman load named the image '$names', not $ref"
  echo "  [podman] load -i $(basename "$archive"): $names"
  # The container's own network namespace (--network=none: loopback only).
  local opts=(--network=none --ulimit="nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit=nproc=4096:4096
    -e REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1)
  local out rc=0
  out=$(timeout 60 "${p[@]}" run --rm "${opts[@]}" "$ref" --version 2>&1) || rc=$?
  if [ "$rc" != 0 ]; then
    [ -n "${RX_PROOF_ALLOW_NO_PODMAN:-}" ] || die "podman cannot run a container here (exit $rc): $(tail -1 <<<"$out")"
    echo "  NOTICE: podman cannot run a container here (exit $rc): $(tail -1 <<<"$out"); RX_PROOF_ALLOW_NO_PODMAN set, part skipped"
    return 0
  fi
  echo "  [podman] run $ref --version: $(head -1 <<<"$out")"
  # How the image starts by itself: its command names the configuration file it carries, and
  # that file loads (check-config sends nothing).
  local config=/etc/reachability_exporter/reachability_exporter.yml image_cmd
  image_cmd=$("${p[@]}" image inspect --format '{{json .Config.Cmd}}' "$ref")
  grep -qF -- "\"--config.file=$config\"" <<<"$image_cmd" || die "the image's command does not read $config: $image_cmd"
  out=$(timeout 60 "${p[@]}" run --rm "${opts[@]}" "$ref" check-config "$config" 2>&1) ||
    die "the image's own $config does not load: $out"
  echo "  [podman] image command $image_cmd; check-config $config: $(tail -1 <<<"$out")"
  # The exporter as the image runs it (entrypoint, user, workdir), serving and probing its own
  # port; `check` beside it through podman exec.
  # ping_group_range as the Containerfile's note says (podman's own default admits only group 0).
  "${p[@]}" run -d --name "$name" "${opts[@]}" --sysctl net.ipv4.ping_group_range="0 2147483647" \
    "$ref" --web.listen-address="$listen" \
    "--probe.tcp=$listen" --probe.trust-local-targets --no-path.monitor >/dev/null ||
    die "podman run -d $ref failed"
  local user
  user=$("${p[@]}" exec "$name" /usr/local/bin/reachability_exporter --version >/dev/null 2>&1 &&
    "${p[@]}" inspect --format '{{.Config.User}}' "$name")
  local logs=""
  for _ in $(seq 50); do
    logs=$("${p[@]}" logs "$name" 2>&1)
    grep -q 'msg=listening' <<<"$logs" && break
    sleep 0.1
  done
  grep -q 'msg=listening' <<<"$logs" || die "the exporter in the container did not listen: $logs"
  echo "  [podman] run -d (user $user): $(grep -m1 'msg=listening' <<<"$logs")"
  run_check "podman exec" 0 '"state":"full"' "${p[@]}" exec "$name" /usr/local/bin/reachability_exporter -- "--probe.tcp=$listen"
  # Unprivileged ICMP: with that sysctl the image's user gets datagram ICMP sockets, no capability.
  run_check "podman exec, ICMP as the image's user" 0 '"state":"full"' "${p[@]}" exec "$name" \
    /usr/local/bin/reachability_exporter -- --probe.icmp=127.0.0.1
  rc=0
  "${p[@]}" stop -t 10 "$name" >/dev/null || die "podman stop failed"
  rc=$("${p[@]}" inspect --format '{{.State.ExitCode}}' "$name")
  [ "$rc" = 0 ] || die "the exporter in the container exited $rc after SIGTERM"
  echo "  [podman] stop (SIGTERM): exit $rc"
  "${p[@]}" rm -f "$name" >/dev/null
  run_check "podman run, nothing listening" 2 '"reason":"refused"' "${p[@]}" run --rm "${opts[@]}" "$ref" -- "--probe.tcp=$listen"
}

# Whatever happened: the container stopped and removed, the images gone, podman's cgroups too.
p=() podman_name="" podman_cgroups=""
podman_cleanup() {
  "${p[@]}" rm -f -t 0 "$podman_name" >/dev/null 2>&1 || true
  "${p[@]}" rm -a -f >/dev/null 2>&1 || true
  "${p[@]}" rmi -a -f >/dev/null 2>&1 || true
  local d
  for d in /sys/fs/cgroup/*/libpod_parent; do
    grep -qxF "$d" <<<"$podman_cgroups" && continue
    rmdir "$d/conmon" "$d" 2>/dev/null || true
  done
}

# ---- all of it -----------------------------------------------------------------------------------
cleanup_dirs=()
cleanup() {
  local x
  for x in "${cleanup_dirs[@]}"; do
    # Mounts live in namespaces that have ended; never cross into one that did not.
    if findmnt -rn -o TARGET | grep -q "^$x/"; then
      echo "fresh-system: $x still has mounts; not removing it" >&2
    else
      rm -rf --one-file-system "$x"
    fi
  done
}

part_started=0
part() { part_started=$(date +%s%N); echo "== $*"; }
part_done() {
  local ms=$(( ($(date +%s%N) - part_started) / 1000000 ))
  printf '  time: %d.%01ds\n' $((ms / 1000)) $((ms % 1000 / 100))
  times+=("$1 $((ms / 1000)).$((ms % 1000 / 100))s")
}
times=()

need_tools() {
  local missing=() spec
  for spec in "$@"; do command -v "${spec%%:*}" >/dev/null || missing+=("${spec#*:}"); done
  ((${#missing[@]})) || return 0
  echo "installing: ${missing[*]}"
  apt-get update -qq
  local made_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d
}

main() {
  local dir=${1:-.build/dist}
  [ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, namespaces)"
  need_tools debootstrap:debootstrap zstd:zstd skopeo:skopeo umoci:umoci podman:podman runc:runc \
    openssl:openssl python3:python3 unshare:util-linux ip:iproute2
  unshare --net true 2>/dev/null || die "no network namespaces here (unshare --net)"
  local deb tarball archive
  deb=$(find "$dir" -maxdepth 1 -name 'reachability-exporter_*.deb' | head -1)
  tarball=$(find "$dir" -maxdepth 1 -name 'reachability_exporter-*.tar.gz' | head -1)
  archive=$(find "$dir" -maxdepth 1 -name 'reachability_exporter-*.oci.tar' | head -1)
  [ -n "$deb" ] && [ -n "$tarball" ] && [ -n "$archive" ] || die "no release in $dir (run scripts/release)"
  (cd "$dir" && sha256sum --quiet -c SHA256SUMS) || die "$dir/SHA256SUMS does not verify"
  deb=$(realpath "$deb") tarball=$(realpath "$tarball") archive=$(realpath "$archive")
  local version
  version=$(basename "$tarball" | sed 's/^reachability_exporter-\(.*\)\.linux-[a-z0-9_]*\.tar\.gz$/\1/')
  echo "release in $dir: $(basename "$deb"), $(basename "$tarball"), $(basename "$archive") (SHA256SUMS verified)"

  local mirror security
  mirror=${RX_DEBIAN_MIRROR:-$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
    awk '$2 == "bookworm" { print $1; exit }')}
  mirror=${mirror:-http://deb.debian.org/debian/}
  security=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null | awk '$2 == "bookworm-security" { print $1; exit }')
  apt_sources=("deb $mirror bookworm main" "deb $mirror bookworm-updates main")
  [ -z "$security" ] || apt_sources+=("deb $security bookworm-security main")

  local tmp
  tmp=$(mktemp -d /var/tmp/rx-fresh-system.XXXXXX)
  cleanup_dirs+=("$tmp")
  trap cleanup EXIT

  part "the fresh roots: debootstrap --variant=minbase bullseye, bookworm, trixie (scripts/rxlab/debian-root.sh)"
  scripts/rxlab/debian-root.sh ensure bullseye bookworm trixie >/dev/null
  RX_FS_CACHE=${RX_FRESH_CACHE:-$(scripts/rxlab/debian-root.sh ensure bookworm 2>/dev/null)}
  export RX_FS_CACHE
  part_done "roots"

  # The test CA and a server certificate for 127.0.0.1, for the HTTPS checks.
  export RX_FS_TLS=$tmp/tls
  mkdir -p "$RX_FS_TLS"
  (cd "$RX_FS_TLS" &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=rx fresh-system test CA" \
      -keyout ca.key -out ca.crt &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out server.csr &&
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >ext &&
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out server.crt) \
    >/dev/null 2>&1 || die "openssl could not make the test certificates"
  write_listener "$RX_FS_TLS/listener.py"

  part "(a) the .deb, installed by apt in a fresh copy"
  fresh_copy "$tmp/deb"
  unshare --mount --propagation private -- "$self" --inner part_deb "$tmp/deb" "$deb"
  part_done "deb"

  # The portable binary in each release's minimal tree, nothing installed; each tree keeps the
  # CA bundle where a different family of distributions does (Debian, Fedora/RHEL, Alpine/BSD).
  local suite release bundle
  for suite in bullseye:11:/etc/ssl/certs/ca-certificates.crt bookworm:12:/etc/pki/tls/certs/ca-bundle.crt \
    trixie:13:/etc/ssl/cert.pem; do
    IFS=: read -r suite release bundle <<<"$suite"
    part "(b) the tarball in a minimal Debian $release ($suite), nothing installed"
    fresh_tree "$(scripts/rxlab/debian-root.sh ensure "$suite")" "$tmp/tarball-$release"
    unshare --mount --propagation private -- "$self" --inner part_tarball "$tmp/tarball-$release" "$tarball" \
      "debian $release" "$bundle"
    rm -rf --one-file-system "$tmp/tarball-$release"
    part_done "tarball-$release"
  done

  part "(c) the image's root file system (skopeo copy, umoci unpack, chroot)"
  skopeo copy -q "oci-archive:$archive" "oci:$tmp/oci:release" >/dev/null
  umoci unpack --image "$tmp/oci:release" "$tmp/bundle" >/dev/null
  echo "  rootfs: $(cd "$tmp/bundle/rootfs" && find . ! -type d | wc -l) files, $(du -sm "$tmp/bundle/rootfs" | cut -f1) MiB; no shell: $(
    [ -e "$tmp/bundle/rootfs/bin/sh" ] && echo "/bin/sh present" || echo "none")"
  unshare --mount --propagation private -- "$self" --inner part_image "$tmp/bundle"
  part_done "image"

  part "(d) the image under podman (runc), in a loopback-only network namespace"
  mkdir -p "$tmp/podman"
  unshare --mount --propagation private --net -- "$self" --inner part_podman "$archive" \
    "localhost/reachability_exporter:$version" "$tmp/podman"
  part_done "podman"

  echo "fresh-system proof passed: ${times[*]}"
}

# The parts run as this script again inside their namespaces; whatever happens there, the
# listener they started is stopped and podman's container removed.
listener=""
inner_cleanup() {
  stop_listener
  [ -z "$podman_name" ] || podman_cleanup
}
if [ "${1:-}" = --inner ]; then
  shift
  trap inner_cleanup EXIT
  "$@"
  exit
fi
case "${1:-}" in
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
  -*) die "usage: scripts/lab fresh-system [RELEASE_DIR]" ;;
  *) main "$@" ;;
esac
