# shellcheck shell=bash disable=SC2154 # tmp and pids are the sourcing script's
# Sourced by the proofs' shell parts (promproof/proof.sh, statuspage/proof.sh): stop what they
# started, by PID, and clean up on exit. Expects `tmp` (a scratch directory) and the array `pids`
# (processes the sourcing script started).

stop() {  # stop <pid>: TERM, wait up to 5 s, then KILL; only PIDs this script started
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {  # the EXIT trap: stop every started PID; on failure show each log's tail; remove tmp
  local rc=$?
  for pid in "${pids[@]}"; do stop "$pid"; done
  if [ "$rc" != 0 ] && [ -d "$tmp" ]; then
    for log in "$tmp"/*.log; do [ -f "$log" ] && { echo "--- $(basename "$log") (last lines)"; tail -15 "$log"; }; done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
