#!/usr/bin/env bash
# Idle memory with five probes, side by side in one run: reachability_exporter as packaged
# (release, --static-swift-stdlib) probing five loopback targets every 5 s (ICMP x2, TCP, HTTP
# x2), prometheus-smokeping-prober pinging five loopback hosts, and prometheus-blackbox-exporter
# idle (it probes only when scraped on /probe; scraped five times first). RSS after SETTLE
# seconds, split into anonymous memory and file pages (the binary and libraries mapped in) from
# /proc/PID/status. Everything runs in a network namespace made here (loopback only, deleted on
# exit); every process is stopped by PID. Bounded: about SETTLE + 10 s.
#
#   bench/idle_rss.sh            # SETTLE=30
set -euo pipefail
cd "$(dirname "$0")/.."
SETTLE=${SETTLE:-30}
[ "$(id -u)" = 0 ] || { echo "needs root (network namespace)" >&2; exit 1; }
SMOKE=${SMOKE:-/usr/bin/prometheus-smokeping-prober}
BLACKBOX=${BLACKBOX:-/usr/bin/prometheus-blackbox-exporter}
for b in "$SMOKE" "$BLACKBOX"; do [ -x "$b" ] || { echo "missing $b" >&2; exit 1; }; done
flock /tmp/swift-build.lock swift build -c release --static-swift-stdlib --product reachability_exporter >/dev/null
OURS="$(swift build -c release --static-swift-stdlib --show-bin-path)/reachability_exporter"
source bench/netns.sh
bench_netns rx-idle
tmp=$work
ip netns exec "$ns" sysctl -qw net.ipv4.ping_group_range="0 2147483647"

ip netns exec "$ns" python3 -c '
import http.server, socket, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self): self.send_response(204); self.end_headers()
    def log_message(self, *a): pass
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); t.bind(("127.0.0.1", 9)); t.listen(64)
threading.Thread(target=lambda: [t.accept()[0].close() for _ in iter(int, 1)], daemon=True).start()
http.server.ThreadingHTTPServer(("127.0.0.1", 8080), H).serve_forever()' &
pids+=($!)
sleep 1

REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 ip netns exec "$ns" "$OURS" --web.listen-address=127.0.0.1:10361 \
  --probe.icmp=127.0.0.1 --probe.icmp=127.0.0.2 --probe.tcp=127.0.0.1:9 \
  --probe.http=http://127.0.0.1:8080/a --probe.http=http://127.0.0.1:8080/b \
  --probe.trust-local-targets --no-path.monitor --log.level=warn 2>"$tmp/ours.log" &
ours=$!; pids+=("$ours")
printf 'targets: []\n' >"$tmp/smokeping.yml"
ip netns exec "$ns" "$SMOKE" --config.file="$tmp/smokeping.yml" --web.listen-address=127.0.0.1:9374 -i 1s --log.level=error \
  127.0.0.1 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 >"$tmp/smokeping.log" 2>&1 &
smoke=$!; pids+=("$smoke")
printf 'modules:\n  http_2xx:\n    prober: http\n    http: {valid_status_codes: [204], preferred_ip_protocol: ip4}\n' >"$tmp/bb.yml"
ip netns exec "$ns" "$BLACKBOX" --config.file="$tmp/bb.yml" --web.listen-address=127.0.0.1:9115 --log.level=warn >"$tmp/bb.log" 2>&1 &
bb=$!; pids+=("$bb")
sleep 3
for _ in 1 2 3 4 5; do inns curl -fsS --max-time 5 -o /dev/null "http://127.0.0.1:9115/probe?module=http_2xx&target=http://127.0.0.1:8080/" || true; done
# Each is scraped once, as Prometheus would.
inns curl -fsS --max-time 5 -o /dev/null http://127.0.0.1:10361/metrics
inns curl -fsS --max-time 5 -o /dev/null http://127.0.0.1:9374/metrics
inns curl -fsS --max-time 5 -o /dev/null http://127.0.0.1:9115/metrics
sleep "$SETTLE"
echo "# idle RSS, five probes, after ${SETTLE}s, $(date -u +%FT%TZ)"
printf '%-34s %10s %10s %10s %8s\n' process "RSS MiB" "anon MiB" "file MiB" threads
for row in "reachability_exporter (static):$ours" "smokeping_prober (5 hosts):$smoke" "blackbox_exporter (idle):$bb"; do
  name=${row%:*}; pid=${row##*:}
  kill -0 "$pid" 2>/dev/null || { echo "$name exited: see logs"; exit 1; }
  awk -v name="$name" '/^VmRSS/ { r = $2 } /^RssAnon/ { a = $2 } /^RssFile/ { f = $2 } /^RssShmem/ { s = $2 } /^Threads/ { t = $2 }
    END { printf "%-34s %10.1f %10.1f %10.1f %8d\n", name, r / 1024, a / 1024, (f + s) / 1024, t }' "/proc/$pid/status"
done
