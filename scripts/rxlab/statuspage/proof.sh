#!/usr/bin/env bash
# Proof that the status page shows a month of history and loads nothing from outside.
# Run by scripts/test; runs alone too, through the one entry (which finds the binaries, runs this
# in a network namespace of its own with only loopback, and bounds the run: PROOF_TIMEOUT,
# default 180 s):
#
#   scripts/lab status-page
#   RX_BIN_DIR=/path/to/bin scripts/lab status-page   (prebuilt binaries; no swift build)
#
# This is its first part; the entry then runs the second, prefix.py beside this file (the page
# behind nginx at a path prefix; alone: scripts/lab status-page-prefix).
#
# 1. history_bench writes 30 days of synthetic history ending now (1-minute rounds, an outage of
#    5 minutes every 6 hours, a 10-minute gap every day) into a temp dir.
# 2. The built exporter starts on 127.0.0.1:0 with that --history.dir and one live loopback probe
#    (a TCP listener of this script); REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1.
# 3. Headless Chromium renders `/` through a logging proxy that forwards to the exporter only
#    (--proxy-bypass-list='<-loopback>' sends even loopback requests through it, and the host
#    resolver maps every other name to nothing): a screenshot (.build/artifacts/status-page.png)
#    and the DOM. __main__.py (beside this file) then checks the DOM (verdict, timeline segments,
#    30 day bars, outage rows, RTT charts), parses the served HTML strictly with html5lib, checks
#    that no attribute or style points off the exporter, and that every request the page caused
#    (those with the page as Referer) went to the exporter; the browser's own background requests
#    are refused by the proxy and listed.
#
# Every process is started here and stopped by its PID; all waits are bounded. Expects RX_BIN_DIR
# (reachability_exporter, history_bench) and PYTHONPATH with scripts/: the entry sets both, and
# has installed chromium and html5lib before entering the offline namespace.
set -euo pipefail
cd "$(dirname "$(realpath "$0")")/../../.."
root=$PWD
export REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1

binpath="${RX_BIN_DIR:?run through scripts/lab status-page}"
for product in reachability_exporter history_bench; do
  [ -x "$binpath/$product" ] || { echo "no $product binary in $binpath"; exit 1; }
done

tmp=$(mktemp -d /tmp/rx-status-proof.XXXXXX)
artifacts="$root/.build/artifacts"
mkdir -p "$artifacts"
pids=()
# shellcheck source=scripts/rxlab/procs.sh
source "$root/scripts/rxlab/procs.sh"
trap cleanup EXIT
trap 'exit 124' TERM INT

wait_for() {  # wait_for <seconds> <command...>: poll every 0.1 s
  local tries=$(( $1 * 10 )); shift
  for _ in $(seq "$tries"); do "$@" && return 0; sleep 0.1; done
  return 1
}

echo "== generating 30 days of history"
"$binpath/history_bench" generate "$tmp/history" --days 30 --interval 60 --probes 2 --until-now

# The live probe's target: a loopback TCP listener that accepts and closes.
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept(); c.close()' "$tmp/listener.port" &
pids+=($!)
wait_for 10 test -s "$tmp/listener.port" || { echo "listener did not start"; exit 1; }

"$binpath/reachability_exporter" --web.listen-address=127.0.0.1:0 --no-path.monitor --probe.trust-local-targets \
  --probe.tcp="127.0.0.1:$(cat "$tmp/listener.port")" --probe.interval=1s --probe.timeout=500ms \
  --history.dir="$tmp/history" 2>"$tmp/exporter.log" &
pids+=($!)
wait_for 30 grep -qs 'msg=listening' "$tmp/exporter.log" || { echo "exporter did not start"; exit 1; }
addr=$(sed -n 's/.*msg=listening address=\([^ ]*\).*/\1/p' "$tmp/exporter.log")
page_ready() {
  curl -fsS --max-time 2 "http://$addr/" -o "$tmp/page.html" && grep -q '<tr class="probe"' "$tmp/page.html" \
    && grep -q 'data-state="full"' <(grep 'id="verdict"' "$tmp/page.html") && ! grep -q 'Reading the last day' "$tmp/page.html"
}
wait_for 30 page_ready || { echo "the page never showed a full verdict with the RTT history loaded"; exit 1; }
echo "== exporter on $addr: $(wc -c <"$tmp/page.html") bytes at /"

python3 -m rxlab.statuspage proxy "$tmp/proxy.port" "$tmp/proxy-requests.txt" "$addr" 2>"$tmp/proxy.log" &
pids+=($!)
wait_for 10 test -s "$tmp/proxy.port" || { echo "proxy did not start"; exit 1; }

browse() {  # browse <extra chromium flags...>: headless, every request through the logging proxy
  # In the background and waited for, with its PID in `pids`: a TERM to this script then stops it.
  timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-default-apps \
    --disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter --no-pings \
    --user-data-dir="$tmp/chromium" --proxy-server="http://127.0.0.1:$(cat "$tmp/proxy.port")" \
    --proxy-bypass-list='<-loopback>' --host-resolver-rules='MAP * ~NOTFOUND, EXCLUDE 127.0.0.1' \
    "$@" "http://$addr/" 2>>"$tmp/chromium.log" &
  local pid=$!
  pids+=("$pid")
  wait "$pid"
}
browse --window-size=1280,3000 --screenshot="$artifacts/status-page.png" >/dev/null
browse --dump-dom >"$tmp/dom.html"
[ -s "$artifacts/status-page.png" ] || { echo "no screenshot"; exit 1; }
echo "== screenshot: $artifacts/status-page.png ($(wc -c <"$artifacts/status-page.png") bytes)"
cp "$tmp/page.html" "$artifacts/status-page.html"

python3 -m rxlab.statuspage check "$tmp/page.html" "$tmp/dom.html" "$tmp/proxy-requests.txt" "$addr"
echo "status page proof: passed"
