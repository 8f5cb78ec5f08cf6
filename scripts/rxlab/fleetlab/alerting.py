"""The fleet lab's Alertmanager and the webhook it delivers to, both in the central's namespace.

The configuration is deploy/fleet/alertmanager.yml as shipped, with two substitutions made here
and nothing else: every receiver delivers to the lab's webhook (its URL; a receiver that names
no integration gets a webhook too, with the shipped `send_resolved` where one is set), and the
route tree's timers (group_wait, group_interval, repeat_interval, and Alertmanager's defaults for
the root when the file leaves them out) are divided by --am-timer-scale. The routing tree, its
matchers and the inhibition rules stay as shipped. The central Prometheus reaches Alertmanager
through central.yml's own `alerting` section (Alertmanager listens where it points, inside the
central's namespace).

The webhook (a Python http.server) appends every notification to a JSON-lines file with its
arrival time; `Notification` reads one back (status, groupLabels, the alerts with their labels,
annotations, startsAt and endsAt)."""

import copy
import json
import os
import re

import yaml

from ..util import ROOT, log, run

AM_CONFIG = os.path.join(ROOT, "deploy", "fleet", "alertmanager.yml")
AM_BINARY = "prometheus-alertmanager"  # Debian's name for alertmanager
AM_DEFAULTS = {"group_wait": "30s", "group_interval": "5m", "repeat_interval": "4h"}  # Alertmanager's own
WEBHOOK_PORT = 9099

# The webhook: one JSON line per POST (arrival time, path, the payload), answered 200.
WEBHOOK = """import http.server, json, sys, time
out = open(sys.argv[1], "a")
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        received = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            payload = json.loads(body)
        except ValueError:
            payload = {"unparsed": body.decode(errors="replace")}
        out.write(json.dumps({"received": received, "path": self.path, "payload": payload}) + "\\n")
        out.flush()
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", int(sys.argv[2])), H)
print("ready", flush=True)
s.serve_forever()
"""

UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def seconds(duration):
    """A Prometheus/Alertmanager duration ("30s", "1h30m", "500ms") in seconds."""
    parts = re.findall(r"(\d+)(ms|s|m|h|d|w|y)", duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        raise ValueError(f"not a duration: {duration!r}")
    return sum(int(n) * UNITS[u] for n, u in parts)


def duration(value):
    """Seconds as a duration Alertmanager reads, to the millisecond ("1s", "10s", "8m", "750ms")."""
    ms = max(1, round(value * 1000))
    if ms % 1000:
        return f"{ms}ms"
    s = ms // 1000
    return f"{s // 60}m" if s % 60 == 0 and s >= 60 else f"{s}s"


def lab_config(shipped, webhook_url, scale):
    """The shipped configuration with the lab's two substitutions; returns (config, what changed)."""
    cfg = copy.deepcopy(shipped)
    changed = []

    def scale_route(route, where):
        for key in AM_DEFAULTS:
            if key in route:
                new = duration(seconds(route[key]) / scale)
                changed.append(f"{where}.{key} {route[key]} -> {new}")
                route[key] = new
        for i, child in enumerate(route.get("routes") or []):
            scale_route(child, f"{where}.routes[{i}]")

    root = cfg["route"]
    for key, default in AM_DEFAULTS.items():  # the root's defaults are every child's: scale them too
        if key not in root:
            root[key] = default
            changed.append(f"route.{key} (Alertmanager's default {default})")
    scale_route(root, "route")
    for receiver in cfg.get("receivers") or []:
        integrations = [k for k in receiver if k.endswith("_configs")]
        stated = [c["send_resolved"] for k in integrations for c in receiver[k] if "send_resolved" in c]
        for k in integrations:
            del receiver[k]
        hook = {"url": f"{webhook_url}/{receiver['name']}"}
        if stated:
            hook["send_resolved"] = all(stated)
        receiver["webhook_configs"] = [hook]
        changed.append(f"receiver {receiver['name']}: {', '.join(integrations) or 'no integration'} -> webhook")
    return cfg, changed


class Notification:
    """One webhook delivery: arrival time, receiver, status, groupLabels and its alerts."""

    def __init__(self, record):
        p = record["payload"]
        self.received, self.path = record["received"], record["path"]
        self.receiver, self.status = p.get("receiver"), p.get("status")
        self.group_labels = p.get("groupLabels") or {}
        self.alerts = [
            {
                "status": a.get("status"),
                "labels": a.get("labels") or {},
                "annotations": a.get("annotations") or {},
                "startsAt": a.get("startsAt"),
                "endsAt": a.get("endsAt"),
            }
            for a in p.get("alerts") or []
        ]

    def firing(self):
        return [a for a in self.alerts if a["status"] == "firing"]

    def resolved(self):
        return [a for a in self.alerts if a["status"] == "resolved"]


class Alerting:
    """The Alertmanager of `fleet` (a Fleet) and its webhook: made and started by `start()`,
    stopped with the fleet's processes."""

    def __init__(self, fleet, scale):
        self.fleet, self.scale = fleet, scale
        self.dir = os.path.join(fleet.work, "alertmanager")
        self.log_path = os.path.join(self.dir, "notifications.jsonl")
        self.config_path = os.path.join(self.dir, "alertmanager.yml")
        self.changed, self.cfg = [], None
        self.url = None

    def listen_address(self, central_cfg):
        """Where central.yml's `alerting` section sends: (host, port) of its one static target."""
        (am,) = central_cfg["alerting"]["alertmanagers"]
        (sc,) = am["static_configs"]
        (target,) = sc["targets"]
        host, port = target.rsplit(":", 1)
        if host not in ("localhost", "127.0.0.1") or am.get("path_prefix") or am.get("scheme", "http") != "http":
            raise RuntimeError(f"central.yml alerting: expected an Alertmanager on localhost over http, got {am}")
        return "127.0.0.1", int(port)

    def start(self, central_cfg):
        os.makedirs(self.dir)
        f = self.fleet
        f.spawn("webhook", f.central_ns, ["python3", "-c", WEBHOOK, self.log_path, str(WEBHOOK_PORT)], ready_line=True)
        with open(AM_CONFIG) as fh:
            shipped = yaml.safe_load(fh)
        self.cfg, self.changed = lab_config(shipped, f"http://127.0.0.1:{WEBHOOK_PORT}", self.scale)
        with open(self.config_path, "w") as fh:
            yaml.safe_dump(self.cfg, fh, sort_keys=False)
        run("amtool", "check-config", self.config_path)
        log("alertmanager: " + "; ".join(self.changed))
        host, port = self.listen_address(central_cfg)
        f.spawn(
            "alertmanager",
            f.central_ns,
            [
                AM_BINARY,
                f"--config.file={self.config_path}",
                f"--storage.path={self.dir}/data",
                f"--web.listen-address={host}:{port}",
                "--cluster.listen-address=",  # one Alertmanager, no gossip
                "--log.level=info",
            ],
        )
        self.url = f"http://{host}:{port}"
        f.wait_ready("alertmanager", f.central_worker, f"{self.url}/-/ready")

    def timer(self, name):
        """The longest `name` (group_wait, group_interval, repeat_interval) in the lab's route tree, in seconds."""

        def walk(route):
            yield seconds(route[name]) if name in route else 0
            for child in route.get("routes") or []:
                yield from walk(child)

        return max(walk(self.cfg["route"]))

    def notifications(self):
        """Every notification received so far, in arrival order."""
        out = []
        try:
            with open(self.log_path) as fh:
                for line in fh:
                    if line.strip():
                        out.append(Notification(json.loads(line)))
        except FileNotFoundError:
            pass
        return out

    def alerts(self):
        """Alertmanager's view of every alert it holds (active, inhibited and silenced)."""
        status, body = self.fleet.central_worker.get(f"{self.url}/api/v2/alerts")
        if status != 200:
            raise RuntimeError(f"alertmanager /api/v2/alerts: HTTP {status}: {body[:200]}")
        return json.loads(body)
