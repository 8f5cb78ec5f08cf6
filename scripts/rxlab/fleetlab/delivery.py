"""The fleet lab's notifications: what the webhook behind the shipped Alertmanager configuration
received for each fault, asserted row by row, and the closing table (fault, notifications
received, time to notify).

Three faults, one at a time:
- the uplink cut of the outage scenario (scenario.py): the central hears nothing from the site;
- a target down for every site (the lab internet drops what comes for the second target), from
  the moment the cut site's group has been notified of its return (while the outage scenario's
  rules settle: it touches no series those rows read);
- one site's internet cut while its path to the central stays up (its exporter reports `limited`
  at `upstream`, and the central sees it live), after the outage scenario's checks.

For each: the notifications while the fault lasts (exactly the expected page, no duplicate, no
symptom: Alertmanager must hold the symptoms that fire at the central as inhibited), and after
the fault ends the resolved notifications (send_resolved) and nothing newly firing. A fault is
held until its symptoms have reached Alertmanager, so that an inhibition that does not hold shows
as a page. Arrival times are the webhook's."""

import re
import time
from collections import Counter
from datetime import datetime

from ..util import log, log_table, wait_until
from .alerting import seconds
from .topology import INTERNET, TARGET2


def ts(text):
    """An RFC 3339 time of Alertmanager's JSON as a Unix time (0 for the zero time)."""
    if not text or text.startswith("0001-"):
        return 0.0
    return datetime.fromisoformat(text).timestamp()


def key(alert):
    """alertname{site or target[, lab copy]}: how the rows name an alert."""
    lab = alert["labels"]
    where = [lab.get("site") or lab.get("target") or lab.get("instance") or ""]
    if lab.get("site") and lab.get("target"):
        where.append(lab["target"])
    if lab.get("lab"):
        where.append(lab["lab"])
    return f"{lab.get('alertname')}{{{', '.join(where)}}}"


def short(alert):
    """NAME{site or target}: an inhibiting alert, its lab copy and the shipped one alike."""
    lab = alert["labels"]
    return f"{lab.get('alertname')}{{{lab.get('site') or lab.get('target') or ''}}}"


def said(alert):
    """The part of an alert's description that says where it breaks ("(now: ...; breaks at: ...)")."""
    text = alert["annotations"].get("description", "")
    start = text.find("(now: ")
    return text[start:].rstrip(".") if start >= 0 else text[-60:]


def about_site(alert, site):
    return alert["labels"].get("site") == site


def about_target(alert, target):
    return alert["labels"].get("target") == target and "site" not in alert["labels"]


def firing(match):
    return lambda a: a["status"] == "firing" and match(a)


def resolved(match):
    return lambda a: a["status"] == "resolved" and match(a)


class Phase:
    """One fault's times and what was received for it."""

    def __init__(self, name):
        self.name, self.start = name, time.time()
        self.page = self.restore = self.done = self.end = None
        self.states, self.left_out = {}, []


class Delivery:
    """Mixed into Scenario after its outage checks: uses `fleet`, `args`, `rows`, `cut_site`,
    `t` (the outage's times) and `c` (the central)."""

    def target_fault_after_return(self):
        """During the outage scenario's last part: once the cut site's group has been notified of
        its return (bounded by the end of that part), the target fault (its rows come later)."""
        self.am = self.fleet.alerting
        s, t = self.cut_site.name, self.t
        back = (resolved(lambda a: about_site(a, s)), firing(lambda a: a["labels"]["alertname"].endswith("Reported")))
        wait_until(
            lambda: all(self.wait_for(t["restore"], p, 0) for p in back), t["restore"] + self.args.post - time.time()
        )
        self.target_phase = self.target_fault()

    def delivery(self):
        self.closing = []  # (fault, notifications received, time to notify)
        self.uplink_cut_notifications()
        self.target_down_rows(self.target_phase)
        self.internet_cut_phase()
        self.no_duplicates()
        log("")
        log_table(("fault", "notifications received", "time to notify"), self.closing)

    # ---- helpers ---------------------------------------------------------------------------
    def received(self, start, end=None):
        return [n for n in self.am.notifications() if n.received >= start and (end is None or n.received < end)]

    def wait_for(self, start, predicate, timeout):
        """The first notification since `start` with an alert `predicate` holds for (None after `timeout`)."""
        return wait_until(
            lambda: next((n for n in self.received(start) if any(predicate(a) for a in n.alerts)), None), timeout
        )

    def am_states(self, match, since):
        """Alertmanager's alerts that started at `since` or later and `match` holds for:
        key -> 'active' or 'inhibited by NAME{site or target}, ...'."""
        alerts = self.am.alerts()
        names = {a["fingerprint"]: short(a) for a in alerts}
        out = {}
        for a in alerts:
            if not match(a) or ts(a["startsAt"]) < since:
                continue
            by = a["status"].get("inhibitedBy") or []
            out[key(a)] = f"inhibited by {', '.join(sorted({names.get(f, f) for f in by}))}" if by else "active"
        return out

    @staticmethod
    def describe(notes, since):
        """Each notification: its arrival after `since`, its alerts by status (a lab copy and the
        shipped alert of the same name and site counted together: ×2)."""
        out = []
        for n in notes:
            parts = []
            for status in ("firing", "resolved"):
                lab = [x["labels"] for x in n.alerts if x["status"] == status]
                count = Counter(f"{x['alertname']}{{{x.get('site') or x.get('target') or ''}}}" for x in lab)
                if count:
                    parts.append(
                        f"{status} " + ", ".join(k + (f" ×{c}" if c > 1 else "") for k, c in sorted(count.items()))
                    )
            out.append(f"+{n.received - since:.1f}s " + "; ".join(parts))
        return " / ".join(out) or "none"

    def run_phase(self, name, inject, page, symptom, losses):
        """Injects a fault (`inject(True)`) and waits for the notification of an alert `page`
        holds for. Then holds the fault until each (site, target) of `losses` has lost more echoes
        than ReachabilityPacketLoss allows for longer than its lab copy's `for` (the symptom is
        due: firing and inhibited, or left out by its rule), and one group_wait and an evaluation
        more (for any page it would make); records Alertmanager's state of every alert `symptom`
        holds for and which losses never reached it; ends the fault and waits for the resolved
        notification and one group_interval more (what the end of the fault releases)."""
        a, am = self.args, self.am
        rule = self.fleet.alert_rules["ReachabilityPacketLoss"]
        threshold = float(re.search(r"ratio_5m > ([0-9.]+)", rule["expr"]).group(1))
        wait = seconds(self.fleet.short_for["ReachabilityPacketLoss"])
        p = Phase(name)
        log(f"{name}: fault")
        inject(True)

        def lossy():
            got = self.c.query(f"reachability:icmp_loss:ratio_5m > {threshold}")
            return losses <= {(lab.get("site"), lab.get("target")) for lab, _ in got}

        lossy_at, deadline = None, p.start + a.notify_timeout
        while (p.page is None or lossy_at is None) and time.time() < deadline:
            p.page = p.page or self.wait_for(p.start, firing(page), 0)
            lossy_at = lossy_at or (wait_until(lossy, 0) and time.time())
            time.sleep(0.5)
        if p.page and lossy_at:  # the symptom fires (or would) one evaluation after its `for`
            time.sleep(max(0.0, lossy_at + wait + a.eval_interval + am.timer("group_wait") + 1.5 - time.time()))
        p.states = self.am_states(symptom, p.start)
        present = {
            (x["labels"].get("site"), x["labels"].get("target"))
            for x in am.alerts()
            if x["labels"].get("alertname") == "ReachabilityPacketLoss"
        }
        p.left_out = sorted(losses - present)
        p.restore = time.time()
        inject(False)
        log(f"{name}: restored")
        p.done = self.wait_for(p.restore, resolved(page), a.notify_timeout)
        time.sleep(am.timer("group_interval") + a.eval_interval + 1 if p.done else 0)
        p.end = time.time()
        return p

    def add_closing(self, fault, back, p):
        during = self.received(p.start, p.restore)
        after = self.received(p.restore, p.end)
        fired = min((ts(x["startsAt"]) for x in p.page.firing()), default=0) if p.page else 0
        self.closing.append(
            (
                fault,
                self.describe(during, p.start),
                f"{p.page.received - p.start:.1f}s (fired at the central +{fired - p.start:.1f}s)"
                if p.page
                else "never",
            )
        )
        self.closing.append(
            (back, self.describe(after, p.restore), f"{p.done.received - p.restore:.1f}s" if p.done else "never")
        )

    def inhibited_row(self, check, p, notified):
        """The symptoms: alerts at Alertmanager that were not notified, by what inhibits them, and
        the packet losses that never became an alert (left out by their rule)."""
        symptoms = {k: v for k, v in p.states.items() if k not in notified}
        by = {}
        for k, v in sorted(symptoms.items()):
            by.setdefault(v, []).append(k.replace("Reachability", "").replace(", short_for", ""))
        left = [f"PacketLoss{{{site}, {target}}}" for site, target in p.left_out]
        return self.rows.add(
            check,
            "each inhibited at Alertmanager or not firing; loss above the threshold for longer than its for",
            bool(symptoms or left) and all(v.startswith("inhibited") for v in symptoms.values()),
            "; ".join(
                [f"{v}: {', '.join(ks)}" for v, ks in sorted(by.items())]
                + ([f"not firing (the rule leaves them out): {', '.join(left)}"] if left else [])
            )
            or "no symptom",
        )

    # ---- the uplink cut (scenario.py's outage) ----------------------------------------------
    def uplink_cut_notifications(self):
        s, t = self.cut_site.name, self.t
        during = self.received(t["cut"], t["restore"])
        pages = [n for n in during if any(about_site(a, s) for a in n.firing())]
        first = pages[0] if pages else None
        fired = min((ts(a["startsAt"]) for a in first.firing()), default=0) if first else 0
        self.rows.add(
            f"notifications while {s}'s uplink is cut",
            f"exactly 1: {s}'s ReachabilitySiteSilent; nothing else",
            len(during) == 1
            and bool(first)
            and {x["labels"]["alertname"] for x in first.alerts} == {"ReachabilitySiteSilent"},
            self.describe(during, t["cut"]) + (f" (fired at the central +{fired - t['cut']:.1f}s)" if fired else ""),
        )
        after = self.received(t["restore"], self.target_phase.start)
        notified = {key(a) for n in pages for a in n.firing()}
        closed = {key(a) for n in after for a in n.resolved()}
        late = {x["labels"]["alertname"] for n in after for x in n.firing()}
        self.rows.add(
            f"{s}'s uplink restored: its group notified again",
            "SiteSilent resolved, SiteOutageReported (the site's own samples) firing; nothing else",
            1 <= len(after) <= 2
            and bool(notified)
            and notified <= closed
            and late == {"ReachabilitySiteOutageReported"},
            self.describe(after, t["restore"]),
        )
        p = Phase("uplink")
        p.start, p.restore, p.end, p.page = t["cut"], t["restore"], self.target_phase.start, first
        p.done = next((n for n in after if n.resolved()), None)
        self.add_closing(
            f"{s}'s uplink cut for {self.args.outage:.0f}s (the central hears nothing)",
            f"{s}'s uplink back (its backlog arrives)",
            p,
        )

    # ---- a target down for every site --------------------------------------------------------
    def target_fault(self):
        return self.run_phase(
            f"target {TARGET2} down",
            self.fleet.target_down,
            lambda a: about_target(a, TARGET2),
            lambda a: "site" in a["labels"],
            {(s.name, TARGET2) for s in self.fleet.sites},
        )

    def target_down_rows(self, p):
        during = self.received(p.start, p.restore)
        pages = [n for n in during if any(about_target(x, TARGET2) for x in n.firing())]
        self.rows.add(
            f"target {TARGET2} down for every site: notifications",
            "exactly 1: ReachabilityTargetDown for the target",
            len(during) == 1 and len(pages) == 1,
            self.describe(during, p.start),
        )
        notified = {key(x) for n in pages for x in n.firing()}
        self.inhibited_row(f"target {TARGET2} down: the sites' symptoms", p, notified)
        after = self.received(p.restore, p.end)
        site_pages = [n for n in self.received(p.start, p.end) if any("site" in x["labels"] for x in n.firing())]
        self.rows.add(
            f"target {TARGET2} back: resolved notification, no site pages",
            "1: the target resolved; no site notified from the fault on",
            bool(p.done) and len(after) == 1 and not after[0].firing() and not site_pages,
            self.describe(after, p.restore)
            + (f"; site pages: {self.describe(site_pages, p.start)}" if site_pages else ""),
        )
        self.add_closing(f"target {TARGET2} down for every site", f"target {TARGET2} back", p)

    # ---- one site's internet cut, its path to the central up ----------------------------------
    def internet_cut_phase(self):
        site = self.fleet.sites[self.args.isolate - 1]
        s = site.name
        p = self.run_phase(
            f"{s}'s internet cut",
            lambda on: self.fleet.cut_internet(site, on),
            lambda a: about_site(a, s),
            lambda a: about_site(a, s),
            {(s, INTERNET), (s, TARGET2)},
        )
        during = self.received(p.start, p.restore)
        pages = [n for n in during if any(about_site(x, s) for x in n.firing())]
        alerts = [x for n in pages for x in n.firing()]
        located = [x for x in alerts if "breaks at: upstream" in x["annotations"].get("description", "")]
        self.rows.add(
            f"{s}'s internet cut, its path to the central up: notifications",
            f"exactly 1: {s}'s ReachabilityInternetUnreachable, breaks at: upstream",
            len(during) == 1
            and {x["labels"]["alertname"] for x in alerts} == {"ReachabilityInternetUnreachable"}
            and bool(located),
            self.describe(during, p.start)
            + (f"; in {short(located[0])}: '{said(located[0])}'" if located else "; no location"),
        )
        notified = {key(x) for n in pages for x in n.firing()}
        self.inhibited_row(f"{s}'s symptoms", p, notified)
        after = self.received(p.restore, p.end)
        closed = {key(x) for n in after for x in n.resolved()}
        self.rows.add(
            f"{s}'s internet back: resolved notification",
            "every alert notified resolved; nothing newly firing",
            bool(p.done) and bool(notified) and notified <= closed and not any(n.firing() for n in after),
            self.describe(after, p.restore),
        )
        self.add_closing(f"{s}'s internet cut (its path to the central up)", f"{s}'s internet back", p)

    def no_duplicates(self):
        """Over the whole run: no alert notified firing twice with the same start (a repeat, or a
        group notified again with it)."""
        notes = self.am.notifications()
        seen, dup = set(), []
        for n in notes:
            for x in n.firing():
                k = (key(x), x["startsAt"])
                if k in seen:
                    dup.append(key(x))
                seen.add(k)
        self.rows.add(
            "no alert notified twice",
            "each firing alert in one notification",
            not dup,
            f"{len(notes)} notifications, {len(seen)} firing alerts" + (f"; twice: {', '.join(dup)}" if dup else ""),
        )
