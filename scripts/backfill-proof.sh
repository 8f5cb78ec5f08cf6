#!/usr/bin/env bash
# History backfill proof (issue #18): a real exporter's history → `history export
# --format=openmetrics` → `promtool tsdb create-blocks-from openmetrics` → a Prometheus on that
# TSDB answers the outage back. Loopback only; bounded (BACKFILL_TIMEOUT, default 120 s).
#   scripts/backfill-proof.sh                       (the built .build/debug exporter)
#   RX_BIN_DIR=/path/to/bin scripts/backfill-proof.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${RX_BIN_DIR:-.build/debug}/reachability_exporter
[ -x "$bin" ] || { echo "backfill proof: $bin not built" >&2; exit 1; }
command -v promtool >/dev/null && command -v prometheus >/dev/null || { echo "backfill proof: needs prometheus and promtool" >&2; exit 1; }
exec timeout --kill-after=10 "${BACKFILL_TIMEOUT:-120}" python3 scripts/backfill-proof.py "$bin"
