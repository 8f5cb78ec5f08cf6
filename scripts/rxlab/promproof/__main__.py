#!/usr/bin/env python3
"""Checks behind scripts/prometheus-proof.sh (which runs the processes; this only reads files, runs
the binary's `metrics` and `--help`, and asks Prometheus). The checks live in scripts/proof/:

  static      dashboards, rules coverage, Kubernetes, compose, Containerfile, systemd, flags
                (proof/dashboards.py, proof/deploy.py)
  names       every metric name the dashboards and rules select, as Prometheus parses them,
                against the exporter's metric catalog (proof/dashboards.py, proof/remote_read.py)
  mutate      every alert's unit tests must fail when the alert is broken (proof/alerts.py)
  variant     writes the short-`for` rules variant the live run uses (proof/alerts.py)
  wait        polls a PromQL expression until it returns a series, or times out (proof/alerts.py)
  silent      an expression returns no series now (proof/alerts.py)
  live        evaluates every dashboard, variable, annotation and rule query (proof/live.py)
  served      what the exporters serve against the catalog: names, labels, type, help (proof/live.py)
  panel       prints one panel's query with the variables filled in (proof/live.py)
"""
import argparse
import keyword
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from proof import alerts, dashboards, deploy, live  # noqa: E402
from proof.common import finish  # noqa: E402


def cmd_static(args):
    print("dashboards and rules:")
    rules = dashboards.check_rules()
    dashboards.check_dashboards()
    deploy.check_deploy(args.binary, rules)
    finish("static checks")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
        "--enforce", action="store_true")
    command("served", live.cmd_served, "binary", "prometheus", "instances", "phase")
    command("panel", live.cmd_panel, "dashboard", "title", ref="A", instance="")
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
