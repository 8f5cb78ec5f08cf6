#!/usr/bin/env bash
# Proof that the status page shows a month of history and loads nothing from outside.
# Run by scripts/test; runs alone too (expects built binaries, builds them if missing):
#
#   scripts/status-page-proof.sh
#
# 1. history_bench writes 30 days of synthetic history ending now (1-minute rounds, an outage of
#    5 minutes every 6 hours, a 10-minute gap every day) into a temp dir.
# 2. The built exporter starts on 127.0.0.1:0 with that --history.dir and one live loopback probe
#    (a TCP listener of this script); REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1.
# 3. Headless Chromium renders `/` through a logging proxy that forwards to the exporter only
#    (--proxy-bypass-list='<-loopback>' sends even loopback requests through it, and the host
#    resolver maps every other name to nothing): a screenshot (.build/artifacts/status-page.png)
#    and the DOM. scripts/status-page-proof.py then checks the DOM (verdict, timeline segments,
#    30 day bars, outage rows, RTT charts), parses the served HTML strictly with html5lib, checks
#    that no attribute or style points off the exporter, and that every request the page caused
#    (those with the page as Referer) went to the exporter; the browser's own background requests
#    are refused by the proxy and listed.
#
# Every process is started here and stopped by its PID; all waits are bounded (PROOF_TIMEOUT,
# default 180 s for the whole script).
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."
root=$PWD
export REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1

# The page is rendered inside a network namespace with only loopback, which needs root: without
# it the proof says so and does not run (it never passes silently).
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "NOTICE: status page proof NOT RUN (needs root and ip for a loopback-only network namespace; uid $(id -u))"
  exit 0
fi

# Installs first (package registries), before anything runs in the offline namespace below.
command -v chromium >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
python3 -c 'import html5lib' 2>/dev/null || python3 -m pip install -q html5lib >/dev/null 2>&1 \
  || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-html5lib >/dev/null; }

if [ -z "${RX_PROOF_INNER:-}" ]; then
  # Everything below (exporter, proxy, Chromium) runs in a network namespace made for this run
  # with only a loopback interface, so not even the browser's own background services can leave
  # the machine; the proxy and resolver rules stay as a second line.
  ns="rxproof-$$"
  ip netns add "$ns"
  trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
  ip -n "$ns" link set lo up
  rc=0
  RX_PROOF_INNER=1 timeout --kill-after=10 "${PROOF_TIMEOUT:-180}" ip netns exec "$ns" "$self" "$@" || rc=$?
  exit "$rc"
fi


binpath="$(swift build --show-bin-path)"
for product in reachability_exporter history_bench; do
  [ -x "$binpath/$product" ] || swift build --product "$product" 2>&1 | grep -Ev '^\[[0-9]+/[0-9]+\]' || true
  [ -x "$binpath/$product" ] || { echo "no $product binary in $binpath"; exit 1; }
done

tmp=$(mktemp -d /tmp/rx-status-proof.XXXXXX)
artifacts="$root/.build/artifacts"
mkdir -p "$artifacts"
pids=()
source "$root/scripts/procs.sh"
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
wait_for 30 grep -q 'msg=listening' "$tmp/exporter.log" || { echo "exporter did not start"; exit 1; }
addr=$(sed -n 's/.*msg=listening address=\([^ ]*\).*/\1/p' "$tmp/exporter.log")
page_ready() {
  curl -fsS --max-time 2 "http://$addr/" -o "$tmp/page.html" && grep -q '<tr class="probe"' "$tmp/page.html" \
    && grep -q 'data-state="full"' <(grep 'id="verdict"' "$tmp/page.html") && ! grep -q 'Reading the last day' "$tmp/page.html"
}
wait_for 30 page_ready || { echo "the page never showed a full verdict with the RTT history loaded"; exit 1; }
echo "== exporter on $addr: $(wc -c <"$tmp/page.html") bytes at /"

python3 "$root/scripts/status-page-proof.py" proxy "$tmp/proxy.port" "$tmp/proxy-requests.txt" "$addr" 2>"$tmp/proxy.log" &
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

python3 "$root/scripts/status-page-proof.py" check "$tmp/page.html" "$tmp/dom.html" "$tmp/proxy-requests.txt" "$addr"
echo "status page proof: passed"
