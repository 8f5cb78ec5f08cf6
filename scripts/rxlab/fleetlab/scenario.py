"""The fleet lab's scenario: every site healthy at the central, one site's uplink cut for a
minute, restored, and what the central holds afterwards, asserted row by row through its HTTP
API (instant queries with range selectors for the raw samples and their timestamps, query_range
for the recorded rules and the alerts)."""

import glob
import json
import os
import time

from ..util import log, wait_until

REACHABLE = 'reachability_internet_reachable{job="reachability"}'
SERIES = ('up{job="reachability"}', REACHABLE)  # a sample each per scrape, likely in different shards


def newest(c):
    """Per site: (newest sample timestamp over both series, the older of the two series' newest)."""
    per = [c.by_site(f"max by (site) (timestamp({s}))") for s in SERIES]
    return {site: (max(p.get(site, 0) for p in per), min(p.get(site, 0) for p in per)) for site in per[0]}


class Row:
    def __init__(self, check, expected):
        self.check, self.expected, self.observed, self.status = check, expected, "", "FAIL"

    def set(self, ok, observed):
        self.status, self.observed = ("PASS" if ok else "FAIL"), observed
        return ok


class Rows(list):
    def add(self, check, expected, ok, observed):
        row = Row(check, expected)
        row.set(ok, observed)
        self.append(row)
        log(f"  [{row.status}] {check}: {observed}")
        return ok

    def table(self):
        head = ("check", "expected", "observed", "result")
        cells = [(r.check, r.expected, r.observed, r.status) for r in self]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *cells, strict=False)]

        def line(cs):
            return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cs, widths, strict=False)) + " |"

        log(line(head))
        log("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for c in cells:
            log(line(c))


def history_transitions(site):
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


class Scenario:
    def __init__(self, fleet, args, rows):
        self.fleet, self.args, self.rows = fleet, args, rows
        self.c = fleet.central
        self.cut_site = fleet.sites[args.cut - 1]
        self.others = [s for s in fleet.sites if s is not self.cut_site]
        self.i = args.scrape_interval
        self.t = {}
        self.during = {"cut_newest": 0.0, "others_age": 0.0, "silent_at": None}

    def run(self):
        self.baseline()
        self.outage()
        self.recovery()
        self.post()
        self.assert_samples()
        self.assert_rules()
        self.assert_agent()

    # ---- the timeline ---------------------------------------------------------------------
    def baseline(self):
        names = {s.name for s in self.fleet.sites}
        t0 = time.time()
        got = wait_until(
            lambda: (lambda v: set(v) == names and all(x == 1 for x in v.values()) and v)(self.c.by_site(REACHABLE)),
            60,
            0.5,
        )
        ok = self.rows.add(
            "every site full at the central",
            f"{len(names)} sites, reachable 1",
            bool(got),
            f"all {len(names)} in {time.time() - t0:.1f}s" if got else f"{self.c.by_site(REACHABLE)}",
        )
        if not ok:
            raise RuntimeError("the fleet never became healthy at the central")
        s = self.cut_site
        before = (
            self.fleet.central_worker.connect(s.address, 9),
            s.worker.connect("10.77.100.2", 9090),
            s.worker.connect("10.77.200.1", 8080),
        )
        self.rows.add(
            f"paths of {s.name} before the cut (witness)",
            "central->site refused, site->central and internet connected",
            before == ("refused", "connected", "connected"),
            f"central->site {before[0]}, site->central {before[1]}, site->internet {before[2]}",
        )
        self.t["base"] = time.time()
        log(f"baseline: {self.args.baseline:.0f}s with every site delivering")
        time.sleep(self.args.baseline)

    def outage(self):
        s, c = self.cut_site, self.c
        log(f"cutting {s.name}'s uplink for {self.args.outage:.0f}s")
        self.t["cut"] = time.time()
        self.fleet.cut(s, True)
        end = self.t["cut"] + self.args.outage
        witnessed = False
        while time.time() < end - 1:
            step = time.time()
            seen = newest(c)
            self.during["cut_newest"] = max(self.during["cut_newest"], seen.get(s.name, (0, 0))[0])
            self.during["others_age"] = max(
                [self.during["others_age"]] + [step - seen.get(o.name, (0, 0))[1] for o in self.others]
            )
            if self.during["silent_at"] is None and s.name in c.by_site(
                'ALERTS{alertname="ReachabilitySiteSilent", lab="short_window", alertstate="firing"}'
            ):
                self.during["silent_at"] = step
            if (
                self.args.restart_agent_at
                and "restarted" not in self.during
                and step > self.t["cut"] + self.args.restart_agent_at
            ):
                log(f"restarting {s.name}'s agent {step - self.t['cut']:.0f}s into the outage")
                self.fleet.restart_agent(s)
                self.during["restarted"] = time.time()
            if not witnessed and step > self.t["cut"] + 5:
                witnessed = True
                self.witness(s)
            if step > end - 4 and "stale" not in self.during:
                self.during["stale"] = c.by_site(REACHABLE).get(s.name)
                self.during["age"] = c.by_site("reachability:site_last_sample_age_seconds").get(s.name)
                m = self.fleet.agent_metrics(s)
                sent = m.get("prometheus_remote_storage_queue_highest_sent_timestamp_seconds", 0)
                self.during["agent_backlog"] = (  # nothing sent since a restart: no backlog to speak of
                    m.get("prometheus_remote_storage_highest_timestamp_in_seconds", 0) - sent if sent else 0
                )
                self.during["agent_pending"] = m.get("prometheus_remote_storage_samples_pending")
            time.sleep(max(0.0, 1.0 - (time.time() - step)))
        time.sleep(max(0.0, end - time.time()))
        cut = self.t["cut"]
        self.rows.add(
            f"central receives nothing from {s.name} during the outage",
            f"newest sample <= cut + {2 * self.i}s",
            0 < self.during["cut_newest"] <= cut + 2 * self.i,
            f"newest {s.name} sample at cut {self.during['cut_newest'] - cut:+.1f}s",
        )
        self.rows.add(
            "other sites keep delivering during the outage",
            "newest sample age < 20s",
            self.during["others_age"] < 20,
            f"max age {self.during['others_age']:.1f}s",
        )
        self.rows.add(
            f"central's instant view of {s.name} near the outage's end",
            "1: its last delivered value (stale)",
            self.during.get("stale") == 1,
            f"reachable={self.during.get('stale')}, last sample age {self.during.get('age') or 0:.0f}s "
            "(reachability:site_last_sample_age_seconds)",
        )
        silent = self.during["silent_at"]
        self.rows.add(
            f"ReachabilitySiteSilent [{self.args.silent_window}s variant] fires during the outage",
            f"firing for {s.name}",
            silent is not None,
            f"firing {silent - cut:.1f}s after the cut" if silent else "never fired",
        )
        backlog = self.during.get("agent_backlog", 0)
        self.rows.add(
            f"{s.name}'s agent buffers in its WAL",
            f"backlog ~ {self.args.outage:.0f}s",
            backlog >= self.args.outage - 15,
            f"highest appended - highest sent = {backlog:.0f}s, pending samples {self.during.get('agent_pending')}",
        )

    def witness(self, s):
        """Both directions are dead: a TCP connect gets no answer at all (before the cut the
        same connect was refused by the far end, i.e. the path worked)."""
        central_to_site = self.fleet.central_worker.connect(s.address, 9)
        site_to_central = s.worker.connect("10.77.100.2", 9090)
        inet = s.worker.connect("10.77.200.1", 8080)
        self.rows.add(
            f"uplink of {s.name} cut (witness)",
            "central->site, site->central, site->internet: timeout",
            central_to_site == site_to_central == inet == "timeout",
            f"central->site {central_to_site}, site->central {site_to_central}, site->internet {inet}",
        )

    def recovery(self):
        s, c = self.cut_site, self.c
        self.t["restore"] = time.time()
        self.fleet.cut(s, False)
        log(f"restored {s.name}'s uplink; waiting for its backlog at the central")
        first = caught = None
        deadline = self.t["restore"] + self.args.catchup_timeout
        while time.time() < deadline and caught is None:
            now = time.time()
            try:
                latest, oldest_newest = newest(c).get(s.name, (0, 0))
            except (OSError, RuntimeError, TimeoutError):
                latest = oldest_newest = 0
            if first is None and latest > self.t["cut"] + 3 * self.i:
                first = now
            if oldest_newest >= self.t["restore"]:
                caught = now
            time.sleep(0.25)
        self.t["first"], self.t["caught"] = first, caught
        r = self.t["restore"]
        bound = (
            10 + 5 + 5 + self.args.eval_interval
        )  # remote_timeout + max_backoff + batch_send_deadline (agent.yml) + a poll
        self.rows.add(
            "delivery delay after restore",
            f"backlog complete within {bound:.0f}s",
            caught is not None and caught - r <= bound,
            (
                f"first backlog sample after {first - r:.1f}s, caught up after {caught - r:.1f}s"
                if caught
                else f"not caught up within {self.args.catchup_timeout:.0f}s (first: {first and first - r})"
            ),
        )

    def post(self):
        end = self.t["restore"] + self.args.post
        log(f"after the outage: {max(0, end - time.time()):.0f}s more for the rules")
        time.sleep(max(0.0, end - time.time()))
        self.t["end"] = time.time()

    # ---- what the central holds -----------------------------------------------------------
    def assert_samples(self):
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

        pts = self.cut_points
        present, expected, lost, gap = self.summary[s.name]["reachability_internet_reachable"]
        up_present, up_expected, up_lost, up_gap = self.summary[s.name]["up"]
        self.rows.add(
            f"{s.name}: no gap in its series over the whole run",
            f"max gap <= {3 * i}s, nothing lost",
            gap <= 3 * i and up_gap <= 3 * i and lost == 0 and up_lost == 0,
            f"reachable {present}/{expected} (lost {lost}, max gap {gap:.1f}s); "
            f"up {up_present}/{up_expected} (lost {up_lost}, max gap {up_gap:.1f}s)",
        )

        # The exporter's own record of the outage, from its history.
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
        outside = [ts for ts, v in pts if (v == 0) != (down["time"] <= ts < up["time"])]
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
            f"ReachabilityInternetUnreachable (for: {self.args.short_for}s variant) at the central",
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
