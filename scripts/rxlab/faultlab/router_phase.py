"""The router phase: real home-router software (homerouter.py) between two exporters and
the lab internet, each fault watched through both, with the family invariant sampled throughout
and `reachability_exporter check`'s exit status against the settled daemon."""

import threading
import time

from ..util import log, poll
from . import homerouter
from .addresses import LAB_NAME, PORT, V4_NET
from .faults import default_shape_flags, probe_flags
from .lab import Exporter
from .runner import Row, Runner

EXIT_STATUS = {"full": 0, "limited": 2, "portal": 3, "none": 4, "unknown": 1}  # CheckCommand.exitStatus
FAMILIES = ("ipv4", "ipv6")


class Sampler(threading.Thread):
    """Scrapes one exporter every 0.1 s for the whole of a scenario: the overall verdict must
    never be `full` while no family is `full`. Bounded in time (`limit` seconds)."""

    def __init__(self, exporter, limit=120.0):
        super().__init__(daemon=True)
        self.exporter, self.limit = exporter, limit
        self.done = threading.Event()
        self.samples, self.errors, self.violations, self.states = 0, 0, [], set()

    def run(self):
        end = time.time() + self.limit
        while not self.done.wait(0.1) and time.time() < end:
            try:
                m = self.exporter.scrape()
            except OSError:
                self.errors += 1
                continue
            self.samples += 1
            overall = m.verdict()[0]
            families = {f: m.verdict(f)[0] for f in FAMILIES}
            self.states.add(overall)
            if overall == "full" and "full" not in families.values():
                self.violations.append((time.time(), families))

    def finish(self):
        self.done.set()
        self.join(5)
        return self


class RouterScenario:
    """One fault applied once and watched through every exporter (one per probe set): a row per
    exporter with the verdicts, detection and recovery times, the family invariant (sampled
    throughout) and `check`'s exit status against the settled daemon's state."""

    def __init__(self, r, sets, name, expected):
        self.r, self.sets, self.name = r, sets, name
        self.rows = {label: Row(f"router: {name} [{label}]", expected) for label, _, _ in sets}
        self.notes = []  # observations shared by every row (resolver, portal answers)
        self.bad = False

    @staticmethod
    def meets(m, expect):
        return all(m.verdict(s)[0] == st and (rs is None or m.verdict(s)[1] == rs) for s, (st, rs) in expect.items())

    @staticmethod
    def describe(m, scopes):
        parts = []
        for s in scopes:
            state, reason = m.verdict(s)
            parts.append((f"{state}({reason})" if reason else f"{state}") if s == "overall" else f"{s} {state}")
        return " ".join(parts)

    def wait(self, exporter, predicate, timeout):
        return poll(exporter.scrape, predicate, timeout)

    def run(
        self,
        expect,
        apply=None,
        revert=None,
        during=None,
        scopes=("overall",) + FAMILIES,
        recover_scopes=("overall",) + FAMILIES,
        hold=0.0,
        wait_timeout=10.0,
    ):
        """`expect`: scope -> (state, reason or None). `apply` may return the moment the fault
        took effect (else the call's start counts). `during()` -> (ok, text) runs while the
        fault holds, after the daemons settled. Without `apply`, the scenario is the healthy
        lab watched for `hold` seconds."""

        def healthy(m):
            return all(m.verdict(s)[0] == "full" for s in recover_scopes)

        self.wait_healthy(healthy, scopes)
        samplers = {label: Sampler(ex) for label, ex, _ in self.sets}
        for s in samplers.values():
            s.start()
        reverted = True  # until the fault is in place
        try:
            t0 = time.time()
            if apply:
                t0 = apply() or t0
                reverted = revert is None
            met = self.watch(expect, wait_timeout if apply else hold, until_all=bool(apply))
            if during:
                ok, text = during()
                self.notes.append(text)
                self.bad |= not ok
            checks = {}
            for label, ex, flags in self.sets:
                code, state, reason, probes = ex.check(flags)
                checks[label] = (code, state, reason, probes, ex.scrape())
            t1 = time.time()
            reverted = True
            if revert:
                revert()
            recovered = {}
            if apply:
                for label, ex, _ in self.sets:
                    recovered[label] = self.wait(ex, healthy, 20)
        finally:
            for s in samplers.values():
                s.finish()
            if not reverted:  # the scenario broke while the fault held: undo it for the next one
                try:
                    revert()
                except Exception as e:
                    log(f"  could not revert '{self.name}': {e}")
        for label, ex, _ in self.sets:
            outcome = (met.get(label), checks[label], recovered.get(label), samplers[label])
            self.judge(label, ex, outcome, expect, scopes, bool(apply), (t0, t1))
        return self

    def wait_healthy(self, healthy, scopes):
        """Every exporter healthy before the scenario (RuntimeError naming the first that is not)."""
        for label, ex, _ in self.sets:
            if self.wait(ex, healthy, 30) is None:
                raise RuntimeError(
                    f"[{label}] not healthy before '{self.name}': "
                    + self.describe(ex.scrape(), scopes)
                    + "\n"
                    + ex.tail()
                )

    def watch(self, expect, seconds, until_all):
        """Scrapes every exporter for `seconds` (or, `until_all`, until each met `expect`):
        label -> the first scrape that met it."""
        met, deadline = {}, time.time() + seconds
        while time.time() < deadline and (not until_all or len(met) < len(self.sets)):
            for label, ex, _ in self.sets:
                try:
                    m = ex.scrape()
                except OSError:
                    continue
                if label not in met and self.meets(m, expect):
                    met[label] = m
            time.sleep(0.05)
        return met

    def judge(self, label, ex, outcome, expect, scopes, applied, times):
        """One exporter's row: `outcome` is (the scrape that met `expect` or None, its check
        (exit, state, reason, probes, the scrape then), the scrape that recovered or None, its
        sampler); `times` (fault applied, reverted)."""
        (first, (code, state, reason, probes, settled), back, sampler), (t0, t1) = outcome, times
        row = self.rows[label]
        m = settled if first is None else first
        ok = self.meets(m, expect) and not self.bad
        row.observed = f"{self.describe(m, scopes)}, check {code}"
        if applied and back is None:
            row.notes.append("did not recover within 20 s")
            ok = False
        elif applied and first is not None:
            row.detect = Runner.since(m) - t0
            row.recover = Runner.since(back) - t1
        daemon = settled.verdict()[0]
        if code != EXIT_STATUS.get(daemon):
            row.notes.append(f"check exited {code} ({state} {reason}) while the daemon said {daemon}")
            ok = False
        if sampler.violations:
            when, families = sampler.violations[0]
            row.notes.append(
                f"overall full while no family was, in {len(sampler.violations)} of {sampler.samples} samples "
                f"(first at +{when - t0:.1f}s: {families})"
            )
            ok = False
        if sampler.samples < 5:
            row.notes.append(f"only {sampler.samples} samples ({sampler.errors} scrape errors)")
            ok = False
        if not self.meets(m, expect):
            row.notes.append(
                f"states seen: {sorted(s for s in sampler.states if s)}; check said {state}({reason}): {probes}"
            )
        row.notes.extend(self.notes)
        row.status = "PASS" if ok else "FAIL"
        if not ok:
            row.notes.append("exporter log tail:\n" + ex.tail(8))

    def fail(self, error):
        for row in self.rows.values():
            row.status, row.observed = "FAIL", row.observed or "did not run"
            row.notes.append(str(error))

    def add(self):
        for label, _, _ in self.sets:
            self.r.add(self.rows[label])


def phase_router(r, lab, args):
    """home client -- router (dnsmasq DHCP+DNS, openNDS, NAT, nft) -- upstream (homerouter.py).
    Two exporters watch every fault at once: A, the product's default probe-set shape with names
    through the system resolver (the lease's dnsmasq), and B, the lab's explicit probes."""
    router = homerouter.HomeRouter(lab)
    lab.router = router
    router.build()
    lab.enter(router.home)
    try:
        a_flags, b_flags = default_shape_flags(), probe_flags()
        sets = [
            ("A", Exporter(lab, router.home, "router-A", a_flags, PORT).start(), a_flags),
            ("B", Exporter(lab, router.home, "router-B", b_flags, PORT + 1).start(), b_flags),
        ]
        log(
            f"  home {router.client_ip} by DHCP from dnsmasq, resolver {open(router.resolv).read().split()[-1]}, "
            f"IPv6 static {homerouter.HOME_V6}; dnsmasq --min-cache-ttl={homerouter.MIN_CACHE_TTL} (the lab DNS TTL is 60 s)"
        )
        down = {"overall": ("limited", None), "ipv4": ("limited", None), "ipv6": ("limited", None)}
        scenario(
            r,
            sets,
            "healthy",
            "full (ipv4 full, ipv6 full)",
            expect={s: ("full", None) for s in ("overall",) + FAMILIES},
            hold=3.0,
        )
        scenario(
            r,
            sets,
            "blackhole (router drops all forwarded)",
            "limited (ipv4 limited, ipv6 limited)",
            expect=down,
            revert=lambda: router.blackhole(False),
            **resolver(router, "the blackhole", lambda: router.blackhole(True), "upstream"),
        )
        scenario(
            r,
            sets,
            "router uplink down",
            "limited (ipv4 limited, ipv6 limited)",
            expect=down,
            revert=lambda: router.uplink(True),
            **resolver(router, "the uplink outage", lambda: router.uplink(False), "cached"),
        )
        portal_scenario(r, sets, router)
        for _, ex, _ in sets:
            ex.stop()
    finally:
        lab.enter(lab.client)


def scenario(r, sets, name, expected, **kw):
    """One RouterScenario: run, its rows added."""
    sc = RouterScenario(r, sets, name, expected)
    try:
        sc.run(**kw)
    except Exception as e:  # one broken scenario fails its rows; the others still run
        sc.fail(f"{name}: {e}")
    sc.add()
    return sc


def resolver(router, what, fault, source):
    """The home's lookup must answer during the fault, and dnsmasq's log must show the
    source: "upstream" (its own queries leave the blackholed router; the blackhole
    empties its cache first) or "cached" (nothing reaches the upstream)."""
    mark = {}

    def apply():
        mark["at"] = router.dns_log_mark()
        return fault()

    def check():
        ok, text = router.resolve(LAB_NAME)
        n = router.dns_answers_since(mark.get("at", 0))
        good = n["upstream"] > 0 if source == "upstream" else n["cached"] > 0 and n["upstream"] == 0
        return ok and V4_NET in text and good, (
            f"home resolver during {what}: {'answers ' + text if ok else 'FAILS: ' + text}; dnsmasq answered "
            f"{n['cached']}x from cache, {n['upstream']} upstream records, {n['forwarded']} forwarded (want {source})"
        )

    return dict(apply=apply, during=check)


def portal_scenario(r, sets, router):
    """openNDS's portal, then ndsctl auth. openNDS handles IPv4 only (its docs: disable IPv6 on
    the managed interface), so the hotspot LAN has no IPv6: no default route at the home, ipv6
    `none` throughout."""
    router.home_ipv6(False)
    try:

        def portal_answers():
            get = router.http("GET", V4_NET, "/generate_204")
            head = router.http("HEAD", V4_NET, "/generate_204")
            ok = get[0] == 307 and ":2050/" in get[1] and head[0] == 511
            text = f"openNDS before auth: GET {get[0]} -> {get[1][:60]}..., HEAD {head[0]}"
            log("  " + text)
            return ok, text

        def auth():
            p = router.ndsctl("auth", router.client_ip)
            if "authenticated" not in p.stdout:
                raise RuntimeError(f"ndsctl auth {router.client_ip}: {p.stdout}{p.stderr}")

        scenario(
            r,
            sets,
            "openNDS portal, then ndsctl auth",
            "portal (ipv4 portal, ipv6 none); full after auth",
            expect={"overall": ("portal", None), "ipv4": ("portal", None), "ipv6": ("none", None)},
            apply=router.start_opennds,
            revert=auth,
            during=portal_answers,
            recover_scopes=("overall", "ipv4"),
        )
    finally:
        router.stop_opennds()
        router.home_ipv6(True)
