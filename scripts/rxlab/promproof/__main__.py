#!/usr/bin/env python3
"""Checks behind proof.sh, the Prometheus proof (`scripts/lab prometheus`, which runs proof.sh:
it starts the processes; this only reads files, runs the binary's `metrics` and `--help`, and
asks Prometheus). The checks live beside this file:

  static      dashboards, rules coverage, Kubernetes, compose, Containerfile, systemd, flags
                (dashboards.py, deploy.py)
  names       every metric name the dashboards and rules select, as Prometheus parses them,
                against the exporter's metric catalog (dashboards.py, remote_read.py)
  mutate      every alert's unit tests must fail when the alert is broken (alerts.py)
  variant     writes the short-`for` rules variant the live run uses (alerts.py)
  wait        polls a PromQL expression until it returns a series, or times out (alerts.py)
  silent      an expression returns no series now (alerts.py)
  live        evaluates every dashboard, variable, annotation and rule query (live.py)
  served      what the exporters serve against the catalog: names, labels, type, help (live.py)
  panel       prints one panel's query with the variables filled in (live.py)
"""

import argparse
import keyword

from ..prom import PrometheusError
from . import alerts, dashboards, deploy, live
from .queries import finish


def cmd_static(args):
    print("dashboards and rules:")
    rules = dashboards.check_rules()
    dashboards.check_dashboards()
    deploy.check_deploy(args.binary, rules)
    finish("static checks")


def main():
    ap = argparse.ArgumentParser(
        prog="python3 -m rxlab.promproof", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)

    def command(name, fn, *required, **optional):
        s = sub.add_parser(name)
        for flag in required:
            dest = flag.replace("-", "_")
            s.add_argument(f"--{flag}", dest=dest + "_" * keyword.iskeyword(dest), required=True)
        for flag, default in optional.items():
            s.add_argument(f"--{flag}", default=default, **({"type": type(default)} if default is not None else {}))
        s.set_defaults(fn=fn)
        return s

    command("static", cmd_static, "binary")
    command("names", dashboards.cmd_names, "binary", "prometheus", "remote-read", "out")
    command("mutate", alerts.cmd_mutate)
    command("variant", alerts.cmd_variant, "alert", "for", "out")
    command("wait", alerts.cmd_wait, "prometheus", "expr", "what", timeout=30.0)
    command("silent", alerts.cmd_silent, "prometheus", "expr", "what")
    command("live", live.cmd_live, "prometheus", "instances", "state", "phase", "names").add_argument(
        "--enforce", action="store_true"
    )
    command("served", live.cmd_served, "binary", "prometheus", "instances", "phase")
    command("panel", live.cmd_panel, "dashboard", "title", ref="A", instance="")
    args = ap.parse_args()
    try:
        args.fn(args)
    except PrometheusError as e:
        raise SystemExit(str(e)) from None


if __name__ == "__main__":
    main()
