# shellcheck shell=bash
# Sourced by bench/load.sh, bench/soak.sh and bench/idle_rss.sh: a network namespace with only loopback for this
# run (named <prefix>-<pid>), a scratch directory, and an EXIT trap that stops every PID in
# `pids` (processes the script started) and deletes both. `inns CMD...` runs CMD inside (in the foreground: `$!` of a backgrounded function is its subshell's).
#   bench_netns <prefix>
bench_netns() {
  ns="$1-$$"
  work=$(mktemp -d "/tmp/$1-XXXXXX")
  pids=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
  ip netns add "$ns"
  ip -n "$ns" link set lo up
}

bench_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}

inns() { ip netns exec "$ns" "$@"; }
