"""The fleet lab's scenario: every site healthy at the central, one site's uplink cut for a
minute, restored, and what the central holds afterwards, asserted row by row through its HTTP
API (instant queries with range selectors for the raw samples and their timestamps, query_range
for the recorded rules and the alerts: central_checks.py)."""

import time

from ..util import log, log_table, wait_until
from .central_checks import CentralChecks
from .delivery import Delivery

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
        log_table(head, cells)


class Scenario(CentralChecks, Delivery):
    """The timeline (baseline, outage, recovery, post) and then the checks of what the central
    holds (central_checks.py)."""

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
        self.delivery()

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
        log(f"after the outage: {max(0, end - time.time()):.0f}s more for the rules, a target fault meanwhile")
        self.target_fault_after_return()
        time.sleep(max(0.0, end - time.time()))
        self.t["end"] = time.time()
