#!/usr/bin/env bash
# Proof that the dashboards, the Prometheus rules and the deploy files work, against the real
# exporter and a real Prometheus. Run by scripts/test (and so by .ci/run); runs alone too, through
# the one entry (which finds the exporter and bounds the run: PROOF_TIMEOUT, default 300 s):
#
#   scripts/lab prometheus
#   RX_BIN_DIR=/path/to/bin scripts/lab prometheus   (a prebuilt exporter; no swift build)
#
# 1. Static: promtool check config/rules, promtool test rules, mutation of every alert (its unit
#    tests must catch it), yamllint, kubernetes-validate (offline, in an empty network
#    namespace), the PrometheusRule and ConfigMap equal to their sources, compose, Containerfile
#    and systemd structure, systemd-analyze verify/security, amtool check-config. Metric names:
#    a Prometheus with no scrapes parses every dashboard and rule query and hands each selector
#    to a remote-read endpoint (remote_read.py); every name selected must be in the
#    exporter's catalog (`reachability_exporter metrics --output=json`), a recording rule or
#    Prometheus' own.
# 2. Live (loopback only): a 204 server, two exporters (A: http mode with an uplink bound to lo
#    and ICMP to 127.0.0.1; B: the netlink path monitor on and a configuration file; both keep a
#    history) and Prometheus scraping them every second with the shipped rules. What they serve
#    matches the catalog (names, label names, type, help). Every dashboard query (panels,
#    variables, annotations) and every rule expression is evaluated through the HTTP API: no
#    errors; empty only where live.py allows it. Then the 204 server stops:
#    ReachabilityInternetUnreachable must go pending (the shipped 5m `for`) and fire (a variant
#    with `for: 2s`, labelled proof="short_for"); B's file breaks: its reload must fail and
#    ReachabilityConfigReloadFailed go pending. Then exporter B stops: ReachabilityExporterDown
#    must go pending.
#
# Every process is started here and stopped by its PID; everything lives in one temp dir.
# Expects RX_BIN_DIR (the directory of reachability_exporter) and PYTHONPATH with scripts/: the
# entry sets both.
set -euo pipefail
cd "$(dirname "$(realpath "$0")")/../../.."
root=$PWD
export REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1
started=$(date +%s)
step() { printf '\n== %s (t=%ss)\n' "$*" "$(( $(date +%s) - started ))"; }
wait_for() {  # wait_for <seconds> <command...>
  local limit=$(( $1 * 10 )); shift
  for _ in $(seq "$limit"); do "$@" && return 0; sleep 0.1; done
  return 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ---- tools ------------------------------------------------------------------------------------
need_apt=()
command -v prometheus >/dev/null || need_apt+=(prometheus)
command -v amtool >/dev/null || need_apt+=(prometheus-alertmanager)
command -v curl >/dev/null || need_apt+=(curl)
if ((${#need_apt[@]})); then
  echo "installing: ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
py_missing=()
python3 -c 'import yaml' 2>/dev/null || py_missing+=(PyYAML)
command -v yamllint >/dev/null || py_missing+=(yamllint)
command -v kubernetes-validate >/dev/null || py_missing+=(kubernetes-validate)
python3 -c 'import jsonschema' 2>/dev/null || py_missing+=(jsonschema)
python3 -c 'import cramjam' 2>/dev/null || py_missing+=(cramjam)
if ((${#py_missing[@]})); then
  echo "pip installing: ${py_missing[*]}"
  python3 -m pip install -q "${py_missing[@]}" >/dev/null 2>&1
fi

bin="${RX_BIN_DIR:?run through scripts/lab prometheus}/reachability_exporter"
[ -x "$bin" ] || { echo "no exporter binary at $bin"; exit 1; }

tmp=$(mktemp -d /tmp/rx-proof.XXXXXX)
pids=()
# shellcheck source=scripts/rxlab/procs.sh
source "$root/scripts/rxlab/procs.sh"
trap cleanup EXIT
trap 'exit 124' TERM INT

proof() { python3 -m rxlab.promproof "$@"; }

# ---- 1. static --------------------------------------------------------------------------------
step "promtool: config, rules, unit tests"
promtool check config deploy/prometheus/prometheus.yml
mkdir -p "$tmp/compose-prometheus"  # the compose layout: config and rules side by side in /etc/prometheus
cp deploy/compose/prometheus.yml deploy/prometheus/reachability_{rules,alerts}.yml "$tmp/compose-prometheus/"
promtool check config "$tmp/compose-prometheus/prometheus.yml"
promtool check rules deploy/prometheus/reachability_rules.yml deploy/prometheus/reachability_alerts.yml
python3 -c 'import yaml,sys; yaml.safe_dump(yaml.safe_load(open(sys.argv[1]))["spec"], open(sys.argv[2], "w"))' \
  deploy/kubernetes/prometheusrule.yaml "$tmp/prometheusrule-spec.yml"
promtool check rules "$tmp/prometheusrule-spec.yml"
(cd deploy/prometheus && promtool test rules reachability.rules.test.yml)

step "alert mutations (the unit tests must catch each broken alert)"
proof mutate

step "yamllint"
yamllint -s -c deploy/yamllint.yml deploy && echo "yamllint: deploy/ clean"

step "kubernetes-validate (API schemas bundled with the package; no network: empty network namespace)"
k8s_files=(deploy/kubernetes/{namespace,configmap,daemonset,service}.yaml)
if unshare -n true 2>/dev/null; then offline=(unshare -n); else offline=(); echo "note: unshare -n unavailable; validating without a network namespace"; fi
for v in 1.29 1.37; do
  "${offline[@]}" kubernetes-validate --strict --quiet -k "$v" "${k8s_files[@]}"
  echo "kubernetes-validate --strict -k $v: ${k8s_files[*]##*/} valid"
done
echo "ServiceMonitor and PrometheusRule (CRDs, no bundled schema): checked by rxlab.promproof static and promtool above"

step "amtool check-config (compose's Alertmanager)"
amtool check-config deploy/compose/alertmanager.yml

step "systemd-analyze verify and security"
# verify insists that ExecStart exists; check a copy pointing at the built binary.
sed "s#/usr/local/bin/reachability_exporter#$bin#" deploy/systemd/reachability_exporter.service > "$tmp/reachability_exporter.service"
if systemd-analyze verify "$tmp/reachability_exporter.service"; then
  echo "systemd-analyze verify: clean"
  systemd-analyze security --offline=true "$tmp/reachability_exporter.service" 2>/dev/null | tail -1
else
  echo "systemd-analyze verify failed"; exit 1
fi

step "dashboards, rules coverage, kubernetes, compose, Containerfile, systemd, flags"
proof static --binary "$bin"

step "metric names: what the dashboards and rules select, as Prometheus parses it, against the catalog"
python3 -m rxlab.promproof.remote_read --port-file "$tmp/remote-read.port" 2>"$tmp/remote-read.log" &
rr_pid=$!; pids+=("$rr_pid")
wait_for 5 test -s "$tmp/remote-read.port" || { echo "remote-read endpoint did not start"; exit 1; }
remote_read="http://127.0.0.1:$(cat "$tmp/remote-read.port")"
# No scrapes and no rules: every selector of every query goes to the remote-read endpoint.
printf 'remote_read:\n  - url: %s/read\n    read_recent: true\n' "$remote_read" > "$tmp/parser.yml"
parser_port=$(free_port)
prometheus --config.file="$tmp/parser.yml" --storage.tsdb.path="$tmp/parser-tsdb" \
  --web.listen-address="127.0.0.1:$parser_port" --log.level=warn 2>"$tmp/prometheus-parser.log" &
parser_pid=$!; pids+=("$parser_pid")
parser="http://127.0.0.1:$parser_port"
wait_for 30 curl -fs -o /dev/null "$parser/-/ready" || { echo "parser Prometheus not ready"; exit 1; }
proof names --binary "$bin" --prometheus "$parser" --remote-read "$remote_read" --out "$tmp/names.json"
stop "$parser_pid"; stop "$rr_pid"

step "the example configuration file (ConfigMap, compose)"
# check-config reads the file exactly as the exporter would and sends no traffic.
"$bin" check-config deploy/reachability_exporter.yml

# ---- 2. live ----------------------------------------------------------------------------------
step "live: 204 server, two exporters, Prometheus (loopback only)"
cat > "$tmp/server204.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(204); self.end_headers()
    do_HEAD = do_GET
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
EOF
python3 "$tmp/server204.py" "$tmp/204.port" 2>"$tmp/server204.log" &
srv=$!; pids+=("$srv")
wait_for 5 test -s "$tmp/204.port" || { echo "204 server did not start"; exit 1; }
url="http://127.0.0.1:$(cat "$tmp/204.port")/generate_204"

addr_a="" addr_b="" pid_a="" pid_b=""  # set by start_exporter
start_exporter() {  # start_exporter <name> <flags...>; sets addr_<name> and pid_<name>
  local name=$1; shift
  "$bin" --web.listen-address=127.0.0.1:0 "$@" 2>"$tmp/exporter-$name.log" &
  pids+=("$!"); eval "pid_$name=$!"
  wait_for 10 grep -q 'msg=listening' "$tmp/exporter-$name.log" || { echo "exporter $name did not start"; exit 1; }
  eval "addr_$name=$(sed -n 's/.*msg=listening address=\([^ ]*\).*/\1/p' "$tmp/exporter-$name.log")"
}
# A: the verdict follows the HTTP probe alone (--probe.mode=http), so stopping the 204 server makes
# it unreachable; the TCP probe to port 9 fails throughout (failure reasons); every probe also runs
# bound to lo (an uplink), DNS resolves localhost, ICMP pings 127.0.0.1.
start_exporter a --no-path.monitor --probe.trust-local-targets --probe.mode=http --probe.http="$url" --probe.tcp=127.0.0.1:9 \
  --probe.dns=localhost --probe.uplink=lo --probe.icmp=127.0.0.1 --probe.interval=1s --probe.timeout=500ms \
  --history.dir="$tmp/history-a"
# B: the path monitor on (path and interface metrics), a second instance for the fleet view, with
# a configuration file (the reload metrics; broken later) beside its probe flags, holding a probe
# with a constant label (reachability_probe_labels_info, the dashboards' $probe_check).
printf 'global:\n  interval: 1s\n  timeout: 500ms\nprobes:\n  - {name: labelled-tcp, type: tcp, target: "127.0.0.1:9", labels: {check: refused}}\n' > "$tmp/exporter-b.yml"
start_exporter b --probe.trust-local-targets --probe.tcp=127.0.0.1:9 --probe.dns=localhost --probe.interval=1s --probe.timeout=500ms \
  --history.dir="$tmp/history-b" --config.file="$tmp/exporter-b.yml" --web.enable-lifecycle
echo "exporter A $addr_a (pid $pid_a), exporter B $addr_b (pid $pid_b), 204 server $url (pid $srv)"

proof variant --alert ReachabilityInternetUnreachable --for 2s --out "$tmp/short-for.rules.yml"
prom_port=$(free_port)
cat > "$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files:
  - $root/deploy/prometheus/reachability_rules.yml
  - $root/deploy/prometheus/reachability_alerts.yml
  - $tmp/short-for.rules.yml
scrape_configs:
  - job_name: reachability
    static_configs:
      - targets: ["$addr_a", "$addr_b"]
EOF
promtool check config "$tmp/prometheus.yml" >/dev/null
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn 2>"$tmp/prometheus.log" &
prom_pid=$!; pids+=("$prom_pid")
prom="http://127.0.0.1:$prom_port"
wait_for 30 curl -fs -o /dev/null "$prom/-/ready" || { echo "Prometheus not ready"; exit 1; }
echo "Prometheus $(prometheus --version 2>&1 | head -1 | cut -d' ' -f3) on $prom (pid $prom_pid)"
# A short run: both targets up with at least 10 samples each, and the rules evaluated.
proof wait --prometheus "$prom" --timeout 40 --what "both exporters scraped 10 times" \
  --expr 'count(count_over_time(up{job="reachability"}[1m]) >= 10 and up{job="reachability"} == 1) == 2'
proof wait --prometheus "$prom" --timeout 20 --what "verdict of A is full" \
  --expr "reachability_internet_reachable{instance=\"$addr_a\"} == 1"

step "live, healthy phase: what the exporters serve against the catalog; every dashboard query and rule expression"
served() { proof served --binary "$bin" --prometheus "$prom" --instances "$addr_a,$addr_b" "$@"; }
live() { proof live --prometheus "$prom" --instances "$addr_a,$addr_b" --names "$tmp/names.json" --state "$tmp/live-state.json" "$@"; }
served --phase healthy
live --phase healthy
# The panels say what the exporter says: the state encoding shows 4 (full) for A.
state_now=$(proof panel --dashboard reachability-host.json --title "State now" --instance "$addr_a")
proof wait --prometheus "$prom" --timeout 5 --what '"State now" panel shows 4 (full) for A' --expr "($state_now) == 4"
# Silent when they should be: nothing about A's reachability, B's scrape or B's file is pending or firing.
silent() { proof silent --prometheus "$prom" --expr "$1" --what "$2"; }
silent "ALERTS{alertname=\"ReachabilityInternetUnreachable\",instance=\"$addr_a\"}" "ReachabilityInternetUnreachable for A while its 204 target answers"
silent "ALERTS{alertname=\"ReachabilityExporterDown\"}" "ReachabilityExporterDown while both exporters run"
silent "ALERTS{alertname=\"ReachabilityConfigReloadFailed\"}" "ReachabilityConfigReloadFailed while B's file is valid"

step "live: stop the 204 server; the unreachable alert must go pending, and fire with for: 2s"
stop "$srv"
echo "204 server (pid $srv) stopped"
proof wait --prometheus "$prom" --timeout 30 --what "A's verdict left full (reachability_internet_reachable == 0)" \
  --expr "reachability_internet_reachable{instance=\"$addr_a\"} == 0"
proof wait --prometheus "$prom" --timeout 20 --what "shipped rule (for: 5m): pending" \
  --expr "ALERTS{alertname=\"ReachabilityInternetUnreachable\",instance=\"$addr_a\",alertstate=\"pending\",proof=\"\"}"
proof wait --prometheus "$prom" --timeout 20 --what "variant (for: 2s): firing" \
  --expr "ALERTS{alertname=\"ReachabilityInternetUnreachable\",instance=\"$addr_a\",alertstate=\"firing\",proof=\"short_for\"}"
curl -fsS "$prom/api/v1/alerts" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    if a["labels"]["alertname"] == "ReachabilityInternetUnreachable":
        print("  alert:", a["state"], a["labels"].get("proof", "shipped"), "|", a["annotations"]["description"])'

proof wait --prometheus "$prom" --timeout 10 --what '"State now" panel shows 3 (limited) for A' --expr "($state_now) == 3"
sites_offline=$(proof panel --dashboard reachability-fleet.json --title "Sites offline")
# At least A (B's verdict depends on this machine's routes: the path monitor is on there).
proof wait --prometheus "$prom" --timeout 10 --what 'fleet "Sites offline" panel counts A' --expr "($sites_offline) >= 1"

step "live: break B's configuration file; its reload must fail and ReachabilityConfigReloadFailed go pending"
printf 'global:\n  interval: 1s\n  timeout: 500ms\n  no_such_key: 1\n' > "$tmp/exporter-b.yml"
code=$(curl -sS -o "$tmp/reload-b.txt" -w '%{http_code}' -X POST "http://$addr_b/-/reload")
[ "$code" = 500 ] || { echo "  FAIL POST /-/reload of a broken file answered $code, not 500: $(cat "$tmp/reload-b.txt")"; exit 1; }
echo "  ok   POST /-/reload answered 500: $(head -c 160 "$tmp/reload-b.txt")"
proof wait --prometheus "$prom" --timeout 10 --what "B's reachability_exporter_config_last_reload_successful is 0" \
  --expr "reachability_exporter_config_last_reload_successful{instance=\"$addr_b\"} == 0"
proof wait --prometheus "$prom" --timeout 10 --what "ReachabilityConfigReloadFailed pending for B" \
  --expr "ALERTS{alertname=\"ReachabilityConfigReloadFailed\",instance=\"$addr_b\",alertstate=\"pending\"}"

step "live, outage phase: served metrics and every query again (the outage panels now have data); each must have returned series in some phase"
served --phase outage
live --phase outage --enforce

step "live: stop exporter B; ReachabilityExporterDown must go pending"
stop "$pid_b"
echo "exporter B (pid $pid_b) stopped"
proof wait --prometheus "$prom" --timeout 20 --what "ReachabilityExporterDown pending for B" \
  --expr "ALERTS{alertname=\"ReachabilityExporterDown\",instance=\"$addr_b\",alertstate=\"pending\"}"

step "prometheus proof passed in $(( $(date +%s) - started ))s"
