# shellcheck shell=bash
# Sourced by scripts/test: how it runs a stage alone, and two stages side by side (its
# SIDE_BY_SIDE list says which, and why that is safe). Uses scripts/test's `selected` and
# `stage_*` functions and `bin_dir`.
# shellcheck disable=SC2154 # selected: scripts/test sets it before sourcing this

run_stage() {
  local started=$SECONDS
  echo "==== $1"
  "stage_${1//-/_}"
  echo "==== $1: $((SECONDS - started)) s"
}

# "B|LINE" for the stage that runs beside $1 in this run, if any.
partner() {
  local pair a b
  for pair in "${SIDE_BY_SIDE[@]}"; do
    read -r a b <<<"${pair%%|*}"
    [ "$a" = "$1" ] || continue
    [[ " ${selected[*]} " == *" $b "* ]] && echo "$b|${pair#*|}"
  done
}

# Runs A, then B beside it once A's log has a line starting with LINE, each into a log of its
# own; when both have ended, prints each log as one block (its ==== lines as when run alone),
# A's first, then fails if either failed.
side_by_side() {
  local a=$1 b=$2 line=$3 dir i rc=0 pids=() codes=() names=("$1" "$2") started=$SECONDS
  bin_dir >/dev/null  # once, before the stages (swift build --show-bin-path)
  dir=$(mktemp -d /tmp/rx-side.XXXXXX)
  echo "==== side by side: $a, then $b from A's line '$line' (each stage's output follows as one block when both have ended)"
  (run_stage "$a") >"$dir/0.log" 2>&1 &
  pids+=("$!")
  # shellcheck disable=SC2064 # expanded now: this PID, this directory
  trap "stop_stages ${pids[*]}; rm -rf '$dir'; exit 130" INT TERM
  while kill -0 "${pids[0]}" 2>/dev/null && ! grep -q "^$line" "$dir/0.log"; do sleep 1; done
  (renice -n 10 -p "$BASHPID" >/dev/null && run_stage "$b") >"$dir/1.log" 2>&1 &
  pids+=("$!")
  # shellcheck disable=SC2064
  trap "stop_stages ${pids[*]}; rm -rf '$dir'; exit 130" INT TERM
  echo "==== $b started $((SECONDS - started)) s after $a"
  for i in "${!pids[@]}"; do
    codes[i]=0
    wait "${pids[$i]}" || codes[i]=$?
  done
  trap - INT TERM
  for i in "${!names[@]}"; do
    cat "$dir/$i.log"
    if [ "${codes[$i]}" != 0 ]; then
      echo "==== ${names[$i]} FAILED (exit ${codes[$i]}), side by side with: $a $b"
      rc=1
    fi
  done
  rm -rf "$dir"
  echo "==== side by side: $a $b ended in $((SECONDS - started)) s"
  return "$rc"
}

# Interrupted: each stage's shell and its children (the labs sweep their namespaces on TERM).
stop_stages() {
  local p c
  for p in "$@"; do
    for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do kill -TERM "$c" 2>/dev/null || true; done
    kill -TERM "$p" 2>/dev/null || true
  done
  wait
}
