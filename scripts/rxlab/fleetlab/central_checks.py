"""What the fleet lab's central holds after the scenario (scenario.py's `Scenario` has these
methods): every site's samples over the whole run and the cut site's outage at the exporter's
own timestamps (its history), the rules and alerts evaluated centrally, and the cut site's
agent counters."""

import glob
import json
import os

from ..util import log


def history_transitions(site):
    """The overall transitions recorded in a site's exporter history files, in file order."""
    out = []
    for path in sorted(glob.glob(os.path.join(site.history, "history-*.jsonl"))):
        with open(path, errors="replace") as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("type") == "transition" and r.get("scope") == "overall":
                    out.append(r)
    return out


def accounting(points, start, end, interval):
    """Samples of one series in [start, end]: (present, expected, max gap including the edges).
    Expected: the points of the scrape grid (the agent scrapes a target at a fixed phase, the
    first sample's) that fall in the window."""
    ts = [t for t, _ in points if start <= t <= end]
    edges = [start] + ts + [end]
    gap = max(b - a for a, b in zip(edges, edges[1:], strict=False))
    expected = 0 if not ts else int((ts[0] - start) // interval) + int((end - ts[0]) // interval) + 1
    return len(ts), expected, gap


class CentralChecks:
    """Mixed into Scenario: uses its `c` (the central), `fleet`, `args`, `rows`, `cut_site`,
    `others`, `i` (the scrape interval) and `t` (the timeline's times)."""

    def assert_samples(self):
        """Every site's samples over the whole run (the others stayed full), the cut site's
        series without a gap and its outage at the central where its history puts it."""
        self.account_samples()
        self.assert_no_gap()
        self.assert_outage_samples()

    def account_samples(self):
        """self.summary: site -> series -> (present, expected, lost, max gap) in the window;
        self.cut_points: the cut site's reachable samples; a row per other site."""
        c, s, i, t = self.c, self.cut_site, self.i, self.t
        end = t["end"]
        span = int(end - t["base"]) + 2 * i
        window = (t["base"], end - self.args.settle)  # the last seconds may still sit in a batch
        self.summary = {}
        for name in ("reachability_internet_reachable", "up"):
            series = {lab.get("site"): pts for lab, pts in c.query(f'{name}{{job="reachability"}}[{span}s]', at=end)}
            for site in self.fleet.sites:
                pts = series.get(site.name, [])
                present, expected, gap = accounting(pts, *window, i)
                lost = max(0, expected - present)
                self.summary.setdefault(site.name, {})[name] = (present, expected, lost, gap)
                if name == "up" or site is s:
                    continue
                zeros = sum(1 for ts, v in pts if v != 1 and window[0] <= ts <= window[1])
                self.rows.add(
                    f"{site.name} stayed full throughout",
                    "every sample 1, no gap > 3 intervals",
                    zeros == 0 and gap <= 3 * i and present > 0,
                    f"{present} samples, {zeros} not 1, max gap {gap:.1f}s, lost {lost}",
                )
            if name == "reachability_internet_reachable":
                self.cut_points = series.get(s.name, [])
        for site in self.fleet.sites:
            for name, (present, expected, lost, gap) in self.summary[site.name].items():
                log(
                    f"    {site.name} {name}: {present}/{expected} samples in the window, lost {lost}, max gap {gap:.1f}s"
                )

    def assert_no_gap(self):
        """The cut site's reachable and up series: no gap over three intervals, nothing lost."""
        s, i = self.cut_site, self.i
        present, expected, lost, gap = self.summary[s.name]["reachability_internet_reachable"]
        up_present, up_expected, up_lost, up_gap = self.summary[s.name]["up"]
        self.rows.add(
            f"{s.name}: no gap in its series over the whole run",
            f"max gap <= {3 * i}s, nothing lost",
            gap <= 3 * i and up_gap <= 3 * i and lost == 0 and up_lost == 0,
            f"reachable {present}/{expected} (lost {lost}, max gap {gap:.1f}s); "
            f"up {up_present}/{up_expected} (lost {up_lost}, max gap {up_gap:.1f}s)",
        )

    def assert_outage_samples(self):
        """The exporter's own record of the outage, from its history, against its reachable==0
        samples at the central."""
        s, i, t, pts = self.cut_site, self.i, self.t, self.cut_points
        trans = history_transitions(s)
        down = next((r for r in trans if r["time"] >= t["cut"] and r.get("from") == "full"), None)
        up = next((r for r in trans if down and r["time"] > down["time"] and r.get("to") == "full"), None)
        zeros = [ts for ts, v in pts if v == 0]
        if not (down and up and zeros):
            self.rows.add(
                f"{s.name}'s outage samples at the central",
                "0 samples at the exporter's outage times",
                False,
                f"history down={down and down['time'] - t['cut']} up={up and up['time'] - t['cut']}, zeros {len(zeros)}",
            )
            return
        # The history stamps a transition at its round's start; the gauge turns when the round
        # ends (after the probes' timeout and the fault location's second), so a scrape within
        # one scrape interval after either transition may still show the state before it.
        outside = [
            ts
            for ts, v in pts
            if (v == 0) != (down["time"] <= ts < up["time"])
            and not any(0 <= ts - edge < i for edge in (down["time"], up["time"]))
        ]
        self.rows.add(
            f"{s.name}'s exporter (its history)",
            "limited after the cut, full after the restore",
            down["to"] != "full" and up["time"] >= t["restore"],
            f"{down['to']} ({down.get('reason', '')}) at cut {down['time'] - t['cut']:+.1f}s, "
            f"full at restore {up['time'] - t['restore']:+.1f}s",
        )
        n_expected = round((up["time"] - down["time"]) / i)
        self.rows.add(
            f"{s.name} reachable==0 samples at the central, original timestamps",
            "0 exactly while the exporter said not full",
            not outside
            and abs(len(zeros) - n_expected) <= 1
            and zeros[0] >= t["cut"]
            and zeros[-1] <= t["restore"] + 2 * i,
            f"{len(zeros)} zeros (exporter's outage spans {n_expected} scrapes), "
            f"first at cut {zeros[0] - t['cut']:+.1f}s, last at restore {zeros[-1] - t['restore']:+.1f}s, "
            f"{len(outside)} samples disagree with the history",
        )

    def assert_rules(self):
        c, s, t = self.c, self.cut_site, self.t
        groups = c.data("/api/v1/rules")["groups"]
        rules = [r for g in groups for r in g["rules"]]
        bad = [f"{r['name']}: {r.get('lastError')}" for r in rules if r.get("health") == "err"]
        self.rows.add(
            "central evaluates the shipped, fleet and lab rules",
            "no rule in error",
            not bad and len(rules) > 30,
            f"{len(rules)} rules in {len(groups)} groups, {len(bad)} errors {bad[:2]}",
        )

        ratio = c.by_site("reachability:availability:ratio_5m")
        others_ok = all(abs(ratio.get(o.name, 0) - 1) < 1e-9 for o in self.others)
        self.rows.add(
            "availability ratio_5m computed centrally after the outage",
            f"{s.name} < 1, others 1",
            ratio.get(s.name, 1) < 1 and others_ok,
            ", ".join(f"{k} {v:.3f}" for k, v in sorted(ratio.items())),
        )
        live = c.query_range(
            f'reachability:availability:ratio_5m{{site="{s.name}"}}',
            t["cut"] + 2 * self.i,
            t["restore"],
            self.args.eval_interval,
        )
        values = [v for _, pts in live for _, v in pts]
        self.rows.add(
            "ratio_5m recorded during the outage (not recomputed later)",
            "1: the rules could not see it live",
            bool(values) and min(values) == 1,
            f"min {min(values):.3f} over {len(values)} evaluations" if values else "no evaluations",
        )

        alerts = c.query_range('ALERTS{lab=~"short_.*"}', t["base"], t["end"], self.args.eval_interval)

        def times(name, state="firing", site=None):
            return sorted(
                ts
                for lab, pts in alerts
                if lab["alertname"] == name
                and lab["alertstate"] == state
                and (site is None or lab.get("site", lab.get("instance")) == site)
                for ts, _ in pts
            )

        silent_others = [o.name for o in self.others if times("ReachabilitySiteSilent", site=o.name)]
        silent_cut = times("ReachabilitySiteSilent", site=s.name)
        self.rows.add(
            "ReachabilitySiteSilent (variant) only for the cut site, resolved after",
            f"{s.name} only",
            not silent_others
            and bool(silent_cut)
            and t["caught"] is not None
            and silent_cut[-1] < t["caught"] + 3 * self.args.eval_interval,
            f"{s.name} firing {silent_cut[0] - t['cut']:.0f}..{silent_cut[-1] - t['cut']:.0f}s after the cut"
            + (f"; also {silent_others}" if silent_others else "")
            if silent_cut
            else f"never; others {silent_others}",
        )
        reported = times("ReachabilitySiteOutageReported", site=s.name)
        reported_others = [o.name for o in self.others if times("ReachabilitySiteOutageReported", site=o.name)]
        self.rows.add(
            "ReachabilitySiteOutageReported (5m variant) fires once the data is in",
            f"{s.name} only, not before the restore",
            bool(reported) and reported[0] >= t["restore"] and not reported_others,
            (f"firing {reported[0] - t['restore']:.1f}s after the restore" if reported else "never")
            + (f"; also {reported_others}" if reported_others else ""),
        )
        fired = times("ReachabilityInternetUnreachable")
        pending = times("ReachabilityInternetUnreachable", "pending")
        self.rows.add(
            f"ReachabilityInternetUnreachable (for: {self.fleet.short_for['ReachabilityInternetUnreachable']} copy) "
            "at the central",
            f"never fires, though the outage lasted {self.args.outage:.0f}s",
            not fired,
            f"firing at {len(fired)} evaluations, pending at {len(pending)}",
        )

    def assert_agent(self):
        s = self.cut_site
        m = self.fleet.agent_metrics(s)
        failed = m.get("prometheus_remote_storage_samples_failed_total")
        dropped = m.get("prometheus_remote_storage_samples_dropped_total", 0)
        retried = m.get("prometheus_remote_storage_samples_retried_total")
        appended = m.get("prometheus_remote_storage_samples_in_total", 0)
        wal = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(s.dir, "wal")) for f in fs)
        self.rows.add(
            f"{s.name}'s agent dropped nothing",
            "samples failed 0, dropped 0",
            failed == 0 and not dropped,
            f"failed {failed:.0f}, dropped {dropped:.0f}, retried {retried:.0f}; "
            f"WAL {wal / 1024:.0f} KiB for {appended:.0f} samples",
        )
