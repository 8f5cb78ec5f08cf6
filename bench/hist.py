#!/usr/bin/env python3
"""Percentiles of a Prometheus histogram between two scrapes (bench/load.sh, bench/soak.sh).

    hist.py BEFORE.prom AFTER.prom METRIC   -> "count=N p50=… p90=… p99=… max<=…" (seconds)

Percentiles are the upper bound of the bucket that holds them (what histogram_quantile would
interpolate within)."""

import sys


def buckets(path, metric):
    out, count = {}, 0.0
    for line in open(path):
        if line.startswith(metric + "_bucket{"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            out[float("inf") if le == "+Inf" else float(le)] = float(line.rsplit(" ", 1)[1])
        elif line.startswith(metric + "_count"):
            count = float(line.rsplit(" ", 1)[1])
    return out, count


b0, c0 = buckets(sys.argv[1], sys.argv[3])
b1, c1 = buckets(sys.argv[2], sys.argv[3])
n = c1 - c0
if n <= 0:
    print("count=0")
    sys.exit(0)
cumulative = sorted((le, b1[le] - b0.get(le, 0)) for le in b1)


def pct(q):
    for le, c in cumulative:
        if c >= q * n:
            return "+Inf" if le == float("inf") else f"{le * 1000:g}ms"
    return "+Inf"


top = next((le for le, c in cumulative if c >= n), float("inf"))
print(
    f"count={n:.0f} p50<={pct(0.5)} p90<={pct(0.9)} p99<={pct(0.99)} max<={'+Inf' if top == float('inf') else f'{top * 1000:g}ms'}"
)
