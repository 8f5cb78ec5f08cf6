"""The fleet lab's network and processes. Every namespace, process and file is made here and
undone by `Fleet.close()`:

    site1 (exporter + agent) --wan0/s1--+
    site2 (exporter + agent) --wan0/s2--+-- core (router) --net/eth0-- inet (10.77.200.1: ICMP, HTTP 204)
    site3 (exporter + agent) --wan0/s3--+         |                    10.77.200.2: ICMP (the second target)
                                              cen/eth0
                                                  |
                              central (Prometheus, remote-write receiver; Alertmanager, webhook)

Addresses are 10.77.0.0/16 only, and nothing routes out of the namespaces: site i is
10.77.i.2/24 behind 10.77.i.1, the central 10.77.100.2, the lab internet 10.77.200.0/24 (.1 and .2)
behind 10.77.250.2. An uplink outage is the core dropping everything to and from one site's link
(the site keeps its carrier and routes: its internet and the central both go silent). An internet
cut is the core dropping only what goes between one site and 10.77.200.0/24 (the site's path to
the central stays up). A target down is the lab internet dropping what comes for 10.77.200.2."""

import os
import shlex
import shutil
import subprocess
import tempfile

import yaml

from .. import netns, procs
from ..exposition import Exposition
from ..netns import Namespaces, NsWorker
from ..prom import Prometheus
from ..util import ROOT, log, run, tail, wait_until
from .alerting import Alerting, duration, seconds

FLEET = os.path.join(ROOT, "deploy", "fleet")
SHIPPED_RULES = [
    os.path.join(ROOT, "deploy", "prometheus", f) for f in ("reachability_rules.yml", "reachability_alerts.yml")
]
INTERNET = "10.77.200.1"
TARGET2 = "10.77.200.2"  # a second target every site pings; `target_down` takes it away
INTERNET_NET = "10.77.200.0/24"
CENTRAL = "10.77.100.2"
EXPORTER_PORT, AGENT_PORT, CENTRAL_PORT, HTTP_PORT = 10361, 10362, 9090, 8080
PLACEHOLDER = "branch-001"  # the SITE value in deploy/fleet/agent.yml

# The lab internet's web server: 204 on /generate_204 (a captive-portal check), quiet.
HTTP_204 = f"""import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(204 if self.path == "/generate_204" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("{INTERNET}", {HTTP_PORT}), H)
print("ready", flush=True)
s.serve_forever()
"""


class Site:
    def __init__(self, fleet, index):
        self.index = index
        self.name = f"site-{chr(ord('a') + index - 1)}"
        self.ns = f"{fleet.prefix}-site{index}"
        self.core_if = f"s{index}"
        self.address = f"10.77.{index}.2"
        self.dir = os.path.join(fleet.work, self.name)
        self.history = os.path.join(self.dir, "history")
        self.worker = None


class Fleet:
    def __init__(self, args):
        self.args, self.prefix = args, args.prefix
        self.work = tempfile.mkdtemp(prefix=f"{self.prefix}-")
        self.core, self.inet, self.central_ns = f"{self.prefix}-core", f"{self.prefix}-inet", f"{self.prefix}-central"
        self.sites = [Site(self, i) for i in range(1, args.sites + 1)]
        self.namespaces, self.processes, self.workers = Namespaces(), [], []
        self.central = None  # Prometheus, once it runs
        self.alerting = Alerting(self, args.am_timer_scale)
        self.exporter_bin = os.path.join(self.work, "reachability_exporter")
        self.faults = {}  # nft tables of the faults in force: name -> (namespace, family)

    # ---- network --------------------------------------------------------------------------
    def build(self):
        shutil.copy2(self.args.exporter_bin, self.exporter_bin)  # the source may be rebuilt while we run
        for ns in (self.core, self.inet, self.central_ns, *(s.ns for s in self.sites)):
            self.namespaces.add(ns)
        netns.sysctl(self.core, "net.ipv4.ip_forward=1")
        self.namespaces.link(self.core, "net", "10.77.250.1/24", self.inet, "eth0", "10.77.250.2/24")
        for address in (INTERNET, TARGET2):
            run("ip", "-n", self.inet, "addr", "add", f"{address}/32", "dev", "lo")
        run("ip", "-n", self.inet, "route", "add", "default", "via", "10.77.250.1")
        run("ip", "-n", self.core, "route", "add", INTERNET_NET, "via", "10.77.250.2")
        self.namespaces.link(self.core, "cen", "10.77.100.1/24", self.central_ns, "eth0", f"{CENTRAL}/24")
        run("ip", "-n", self.central_ns, "route", "add", "default", "via", "10.77.100.1")
        for s in self.sites:
            self.namespaces.link(self.core, s.core_if, f"10.77.{s.index}.1/24", s.ns, "wan0", f"{s.address}/24")
            run("ip", "-n", s.ns, "route", "add", "default", "via", f"10.77.{s.index}.1")
            os.makedirs(s.history, exist_ok=True)
            s.worker = self.worker(s.ns)
        self.central_worker = self.worker(self.central_ns)

    def worker(self, ns):
        w = NsWorker(ns)
        self.workers.append(w)
        return w

    def fault(self, name, ns, hook, rules, on):
        """Loads (on) or deletes an nft table `name` in `ns` whose one chain at `hook` drops what
        `rules` match."""
        if on:
            body = "".join(f"    {r} drop\n" for r in rules)
            netns.nft(
                ns,
                f"table inet {name} {{\n  chain {hook} {{\n    type filter hook {hook} priority 0; policy accept;\n"
                f"{body}  }}\n}}\n",
            )
            self.faults[name] = ns
        else:
            netns.nft_delete(ns, "inet", name, check=True)
            self.faults.pop(name, None)

    def cut(self, site, on):
        """The site's uplink dies beyond its router: the core drops everything to and from it."""
        self.fault("rxfleet_cut", self.core, "forward", [f'iifname "{site.core_if}"', f'oifname "{site.core_if}"'], on)

    def cut_internet(self, site, on):
        """Only the site's internet dies: the core drops what goes between it and the lab internet,
        while its path to the central (and its gateway, the core itself) keeps working."""
        rules = [
            f'iifname "{site.core_if}" ip daddr {INTERNET_NET}',
            f'oifname "{site.core_if}" ip saddr {INTERNET_NET}',
        ]
        self.fault("rxfleet_inet_cut", self.core, "forward", rules, on)

    def target_down(self, on):
        """The second target dies for everyone: the lab internet drops what comes for it."""
        self.fault("rxfleet_target_down", self.inet, "input", [f"ip daddr {TARGET2}"], on)

    # ---- processes ------------------------------------------------------------------------
    def spawn(self, name, ns, argv, ready_line=False):
        path = os.path.join(self.work, f"{name}.log")
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if ready_line else subprocess.DEVNULL,
            stderr=open(path, "w"),
            text=True,
        )
        self.processes.append((name, p, path))
        if ready_line and not (p.stdout.readline() or "").startswith("ready"):
            raise RuntimeError(f"{name} did not start: {self.tail(path)}")
        return p

    @staticmethod
    def tail(path, lines=15):
        return tail(path, lines)

    def wait_ready(self, name, worker, url, timeout=40):
        proc, path = next((p, log_path) for n, p, log_path in self.processes if n == name)

        def ready():
            if proc.poll() is not None:
                return "exited"
            return "ok" if worker.get(url, timeout=2)[0] == 200 else None

        if wait_until(ready, timeout) != "ok":
            raise RuntimeError(f"{name} not ready at {url} (exit {proc.poll()}):\n{self.tail(path)}")

    def start(self):
        a = self.args
        self.spawn("inet-http", self.inet, ["python3", "-c", HTTP_204], ready_line=True)
        self.start_central()
        for s in self.sites:
            self.spawn(
                f"exporter-{s.name}",
                s.ns,
                [
                    "env",
                    "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1",
                    self.exporter_bin,
                    f"--web.listen-address=127.0.0.1:{EXPORTER_PORT}",
                    f"--probe.icmp={INTERNET}",
                    f"--probe.icmp={TARGET2}",
                    f"--probe.http=http://{INTERNET}:{HTTP_PORT}/generate_204",
                    f"--probe.interval={a.probe_interval}",
                    f"--probe.timeout={a.probe_timeout}",
                    f"--history.dir={s.history}",
                    "--log.level=info",
                ],
            )
        for s in self.sites:
            self.wait_ready(f"exporter-{s.name}", s.worker, f"http://127.0.0.1:{EXPORTER_PORT}/-/ready")
            self.start_agent(s)
        for s in self.sites:
            self.wait_ready(f"agent-{s.name}", s.worker, f"http://127.0.0.1:{AGENT_PORT}/-/ready")

    def agent_config(self, site):
        """deploy/fleet/agent.yml for one site: its SITE values, the lab's scrape interval and the
        central's lab address; queue_config and remote_timeout exactly as shipped."""
        with open(os.path.join(FLEET, "agent.yml")) as f:
            cfg = yaml.safe_load(f)
        if cfg["global"]["external_labels"].get("site") != PLACEHOLDER:
            raise RuntimeError(f"agent.yml: external_labels.site is not the placeholder {PLACEHOLDER}")
        cfg["global"]["external_labels"]["site"] = site.name
        cfg["global"]["scrape_interval"] = f"{self.args.scrape_interval}s"
        cfg["global"]["scrape_timeout"] = f"{max(1, self.args.scrape_interval // 2)}s"
        for job in cfg["scrape_configs"]:
            for sc in job["static_configs"]:
                if sc.get("labels", {}).get("instance") != PLACEHOLDER:
                    raise RuntimeError(f"agent.yml: job {job['job_name']} has no instance placeholder")
                sc["labels"]["instance"] = site.name
        (rw,) = cfg["remote_write"]
        rw["url"] = f"http://{CENTRAL}:{CENTRAL_PORT}/api/v1/write"
        return cfg

    def agent_flags(self, site, config):
        """The ExecStart of deploy/fleet/reachability-agent.service with its defaults file, paths
        moved into the lab (config, WAL); listen address as shipped (127.0.0.1 of the site)."""
        with open(os.path.join(FLEET, "reachability-agent.service")) as f:
            text = f.read().replace("\\\n", " ")
        line = next(ln for ln in text.splitlines() if ln.startswith("ExecStart="))
        env = {}
        with open(os.path.join(FLEET, "reachability-agent.default")) as f:
            for ln in f:
                if "=" in ln and not ln.startswith("#"):
                    k, v = ln.strip().split("=", 1)
                    env[k] = v.strip('"')
        argv = []
        for word in shlex.split(line[len("ExecStart=") :]):
            if word == "$ARGS":
                argv += shlex.split(env.get("ARGS", ""))
                continue
            for k, v in env.items():
                word = word.replace("${" + k + "}", v)
            if word.startswith("--config.file="):
                word = f"--config.file={config}"
            elif word.startswith("--storage.agent.path="):
                word = f"--storage.agent.path={os.path.join(site.dir, 'wal')}"
            argv.append(word)
        if argv[0] != "/usr/bin/prometheus" or "--enable-feature=agent" not in argv or "$" in " ".join(argv):
            raise RuntimeError(f"reachability-agent.service: unexpected ExecStart {argv}")
        return [self.args.prometheus] + argv[1:]

    def start_agent(self, site):
        config = os.path.join(site.dir, "agent.yml")
        with open(config, "w") as f:
            yaml.safe_dump(self.agent_config(site), f, sort_keys=False)
        site.agent_argv = self.agent_flags(site, config)
        self.spawn(f"agent-{site.name}", site.ns, site.agent_argv)

    def restart_agent(self, site):
        """Kills the site's agent (a crash, or the box losing power) and starts it again on the same
        WAL. (SIGTERM is no quicker during an outage: the agent waits up to the queue's 1-minute
        flush deadline before it exits.)"""
        name = f"agent-{site.name}"
        entry = next(e for e in self.processes if e[0] == name)
        entry[1].kill()
        entry[1].wait(15)
        self.processes.remove(entry)
        self.spawn(name, site.ns, site.agent_argv)
        self.wait_ready(name, site.worker, f"http://127.0.0.1:{AGENT_PORT}/-/ready")

    def lab_rules(self):
        """Short-window copies of the fleet alerts (label lab="short_window") and short-`for` copies
        of every alert with a `for:` (lab="short_for"), so that a one-minute outage can show what
        they do."""
        with open(os.path.join(FLEET, "fleet.rules.yml")) as f:
            fleet = yaml.safe_load(f)
        shipped = []
        for path in SHIPPED_RULES:
            with open(path) as f:
                shipped += yaml.safe_load(f)["groups"]
        rules = {r.get("alert"): r for g in fleet["groups"] + shipped for r in g["rules"]}
        self.alert_rules = rules
        out = []
        for name, old, new in (
            ("ReachabilitySiteSilent", "[2m]", f"[{self.args.silent_window}s]"),
            ("ReachabilitySiteOutageReported", "[1h]", "[5m]"),
        ):
            r = dict(rules[name])
            if old not in r["expr"]:
                raise RuntimeError(f"{name}: expected a {old} window in {r['expr']!r}")
            r["expr"] = r["expr"].replace(old, new)
            r["labels"] = dict(r.get("labels", {}), lab="short_window")
            out.append(r)
        # Every alert that waits (`for:`) gets a copy that waits a --for-scale'th of it: the
        # shipped unreachable alert's copy shows that `for:` never sees a silent site's outage; the
        # copies of the rest let the lab's faults reach Alertmanager, symptoms included, in minutes.
        self.short_for = {}
        for name, rule in rules.items():
            wait = seconds(str(rule.get("for", "0s"))) if name else 0
            if wait:
                r = dict(rule, labels=dict(rule.get("labels", {}), lab="short_for"))
                r["for"] = duration(wait / self.args.for_scale)
                self.short_for[name] = r["for"]
                out.append(r)
        return {"groups": [{"name": "reachability.fleet.lab", "rules": out}]}

    def start_central(self):
        d = os.path.join(self.work, "central")
        os.makedirs(d)
        with open(os.path.join(FLEET, "central.yml")) as f:
            cfg = yaml.safe_load(f)
        for rule_file in cfg["rule_files"]:  # as they are now, next to the config
            shutil.copy(os.path.normpath(os.path.join(FLEET, rule_file)), d)
        with open(os.path.join(d, "lab.rules.yml"), "w") as f:
            yaml.safe_dump(self.lab_rules(), f, sort_keys=False)
        cfg["rule_files"] = [os.path.basename(r) for r in cfg["rule_files"]] + ["lab.rules.yml"]
        cfg["global"]["evaluation_interval"] = f"{self.args.eval_interval}s"
        cfg["scrape_configs"] = []
        self.alerting.start(cfg)  # where central.yml's alerting section sends
        with open(os.path.join(d, "central.yml"), "w") as f:
            yaml.safe_dump(cfg, f, sort_keys=False)
        self.spawn(
            "central",
            self.central_ns,
            [
                self.args.prometheus,
                f"--config.file={d}/central.yml",
                f"--storage.tsdb.path={d}/data",
                "--web.enable-remote-write-receiver",
                f"--web.listen-address={CENTRAL}:{CENTRAL_PORT}",
                "--storage.tsdb.retention.time=1d",
            ],
        )
        url = f"http://{CENTRAL}:{CENTRAL_PORT}"
        self.wait_ready("central", self.central_worker, f"{url}/-/ready")
        self.central = Prometheus(url, fetch=self.central_worker.get)

    def agent_metrics(self, site):
        """The agent's own /metrics (remote-write queue state), read inside the site."""
        status, body = site.worker.get(f"http://127.0.0.1:{AGENT_PORT}/metrics")
        out = {}
        for name, _, value in Exposition(body).samples:
            if name.startswith("prometheus_remote_storage_"):
                out[name] = out.get(name, 0.0) + value
        return out

    def dead(self):
        """Names of lab processes that have exited."""
        return [n for n, p, _ in self.processes if p.poll() is not None]

    # ---- cleanup --------------------------------------------------------------------------
    def close(self):
        for name, ns in list(self.faults.items()):
            netns.nft_delete(ns, "inet", name)  # the namespace goes anyway
        # In reverse order of starting: agents before the central (they would log its shutdown).
        for _, p, _ in reversed(self.processes):
            procs.stop(p, grace=10)
        for w in self.workers:
            w.stop()
        self.namespaces.close()  # anything left in them was started by this run
        if self.args.keep:
            log(f"kept {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)
