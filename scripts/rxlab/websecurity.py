"""Proof of the web configuration against a real Prometheus (issue #19), loopback only.

- Exporter A: TLS + basic auth (bcrypt) + a security header; exporter B: TLS with
  RequireAndVerifyClientCert; exporter C: plain HTTP. They probe a loopback TCP listener
  (--probe.trust-local-targets).
- Prometheus scrapes A with the right password (job a-auth), A with a wrong one (a-wrong),
  B with a client certificate (b-cert), B without one (b-nocert) and C (c-plain): up must be
  1, 0, 1, 0, 1.
- Plain HTTP on A's TLS port gets a 400 and no metrics.
- 1000 slow clients against C (half-sent request heads) and 1000 against A (half of them a
  half-sent ClientHello, half silent after connecting), from 250 source addresses (so the
  total, not the per-address, limit is what they press on), then 1500 against C (past the
  1024-connection limit, where the oldest give way): a scrape gets 200 at once, Prometheus's
  scrapes keep succeeding, and the exporter's RSS per slow connection is reported and bounded.
- The deploy files: deploy/kubernetes/make-web-secret.sh's output serves TLS + basic auth and
  Prometheus scrapes it by the ServiceMonitor's serverName (job k8s); deploy/compose's web
  config with its scrape-password file (job compose); deploy/systemd/web-config.yml as shipped
  is refused at start with exit 78 naming the key (as shipped, and with its files in place but
  the placeholder hash), and once completed serves TLS + basic auth (job systemd).

usage: scripts/lab web-security     (python3 -m rxlab.websecurity EXPORTER_BINARY underneath)
"""

import base64
import crypt
import os
import resource
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

from . import certs
from .prom import Prometheus
from .util import CURL_STATUS, ROOT, Listener, free_port
from .websecurity_load import RSS_PER_SLOW_KIB_LIMIT, SLOW, rss_kib, slow_clients

ENV = dict(os.environ, REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS="1")


def make_pki(d):
    """The proof's CA (ca.pem, ca.key), the exporters' server certificate for 127.0.0.1 and
    localhost (server.pem, server.key) and Prometheus's client certificate (client.pem, client.key)."""
    certs.make_ca(d, "rx-proof-ca")
    certs.make_leaf(d, "server", "server", "IP:127.0.0.1,DNS:localhost")
    certs.make_leaf(d, "client", "client", "DNS:prometheus.rx-proof", usage="clientAuth")


def wait_for(what, predicate, limit, show=None):
    end = time.time() + limit
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise SystemExit(f"FAIL: {what} within {limit} s" + (f"; last: {show()}" if show else ""))


class Proof:
    """The proof's state: its temp dir, the exporters and Prometheus it started (stopped by PID in
    close()), their ports, the slow clients still open. Each phase is a method, run in order."""

    def __init__(self, binary):
        self.binary = binary
        self.tmp = tempfile.mkdtemp(prefix="rx-websec-")
        self.procs = []
        self.slow = []
        self.ports = {}
        self.password = "s3cret-proof"
        self.hashed = crypt.crypt(self.password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10))
        self.ctx = None
        self.prom = None
        self.kube = os.path.join(self.tmp, "kube")

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write_configs(self):
        """Exporter A's and B's web configs, and the Kubernetes Secret's material as
        make-web-secret.sh writes it (run on a copy)."""
        make_pki(self.tmp)
        with open(self.path("a.yml"), "w") as f:
            f.write(
                f"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
                f"http_server_config:\n  headers: {{X-Content-Type-Options: nosniff}}\n"
                f"basic_auth_users:\n  prometheus: {self.hashed}\n"
            )
        with open(self.path("b.yml"), "w") as f:
            f.write(
                "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
                "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"
            )
        os.makedirs(self.kube)
        shutil.copy(os.path.join(ROOT, "deploy/kubernetes/make-web-secret.sh"), self.kube)
        subprocess.run(["bash", os.path.join(self.kube, "make-web-secret.sh")], check=True, stdout=subprocess.DEVNULL)

    def start(self, name, cfg):
        """An exporter probing the loopback listener, serving with web config `cfg` (or none)."""
        self.ports[name] = free_port()
        args = [
            self.binary,
            f"--web.listen-address=127.0.0.1:{self.ports[name]}",
            f"--probe.tcp=127.0.0.1:{self.target.port}",
            "--probe.trust-local-targets",
            "--no-path.monitor",
            "--probe.interval=1s",
            "--probe.timeout=500ms",
        ]
        if cfg:
            args.append(f"--web.config.file={cfg}")
        p = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL, stderr=open(self.path(f"{name}.log"), "w"))
        self.procs.append(p)
        return p

    def start_exporters(self):
        self.target = Listener()
        self.target.start()
        self.exporter_a = self.start("a", self.path("a.yml"))
        self.start("b", self.path("b.yml"))
        self.exporter_c = self.start("c", None)
        self.start("k8s", os.path.join(self.kube, "web", "web-config.yml"))
        self.start("compose", os.path.join(ROOT, "deploy/compose/web-config.yml"))

    def check_systemd_example(self):
        """The systemd example: as shipped (no certificate yet), then with its files in place but
        the placeholder hash kept, each refused at start with exit 78 naming the key; then completed."""
        shipped = os.path.join(ROOT, "deploy/systemd/web-config.yml")
        text = open(shipped).read()
        staged = self.path("systemd-web-config.yml")
        with open(staged, "w") as f:
            f.write(
                text.replace("/etc/reachability_exporter/web.crt", self.path("server.pem")).replace(
                    "/run/credentials/reachability_exporter.service/web.key", self.path("server.key")
                )
            )
        for cfg, key in [(shipped, "tls_server_config.cert_file"), (staged, "basic_auth_users.prometheus")]:
            r = subprocess.run(
                [
                    self.binary,
                    "--web.listen-address=127.0.0.1:0",
                    "--probe.tcp=127.0.0.1:9",
                    f"--web.config.file={cfg}",
                ],
                env=ENV,
                capture_output=True,
                text=True,
                timeout=20,
            )
            print(
                f"systemd web-config.yml ({'as shipped' if cfg == shipped else 'files in place, placeholder hash'}):"
                f" exit {r.returncode}: {r.stderr.strip()[:200]}"
            )
            assert r.returncode == 78 and key in r.stderr and cfg in r.stderr, r.stderr
        completed = open(staged).read()
        with open(staged, "w") as f:
            f.write(completed.replace("$2y$12$REPLACE.THIS.WITH.A.REAL.BCRYPT.HASH.OF.YOUR.PASSWORD.xxx", self.hashed))
        self.start("systemd", staged)

    def get(self, path, authorization=None, port=None):
        """An HTTPS request to exporter A (or `port`), with the right password unless told."""
        auth = "Basic " + base64.b64encode(f"prometheus:{self.password}".encode()).decode()
        req = urllib.request.Request(
            f"https://127.0.0.1:{port or self.ports['a']}{path}", headers={"Authorization": authorization or auth}
        )
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=5) as r:
                return r.status, r.read().decode(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, "", dict(e.headers)
        except OSError:
            return None, "", {}

    def check_direct(self):
        """A wrong password, plain HTTP on the TLS port, the Kubernetes Secret's exporter by curl."""
        self.ctx = ssl.create_default_context(cafile=self.path("ca.pem"))
        wait_for("exporter A serving over TLS", lambda: self.get("/-/healthy")[0] == 200, 20)
        status, _, headers = self.get("/metrics", "Basic " + base64.b64encode(b"prometheus:wrong").decode())
        print(f"wrong password: {status}, WWW-Authenticate: {headers.get('WWW-Authenticate')}")
        assert status == 401 and headers.get("WWW-Authenticate", "").startswith("Basic"), "401 expected"
        plain = subprocess.run(
            ["curl", "-sS", "--max-time", "3", f"http://127.0.0.1:{self.ports['a']}/metrics"],
            capture_output=True,
            text=True,
        )
        print(
            f"plain HTTP on the TLS port: {plain.stdout.strip()!r}, metrics in answer: {'reachability_' in plain.stdout}"
        )
        assert "reachability_" not in plain.stdout and "HTTPS server" in plain.stdout
        kweb = os.path.join(self.kube, "web")
        kpass = open(os.path.join(kweb, "password")).read()
        with open(self.path("k8s-password"), "w") as f:
            f.write(kpass)
        kcurl = [
            *CURL_STATUS,
            "--max-time",
            "5",
            "--cacert",
            os.path.join(kweb, "ca.crt"),
            "--resolve",
            f"{KUBE_NAME}:{self.ports['k8s']}:127.0.0.1",
            f"https://{KUBE_NAME}:{self.ports['k8s']}/metrics",
        ]
        k_ok = wait_for(
            "the Kubernetes Secret's exporter serving",
            lambda: (
                subprocess.run(kcurl + ["-u", f"prometheus:{kpass}"], capture_output=True, text=True).stdout == "200"
            ),
            20,
        )
        k_none = subprocess.run(kcurl, capture_output=True, text=True).stdout
        print(
            f"make-web-secret.sh output: TLS verified by the CA for {KUBE_NAME}, password 200: {k_ok}, none: {k_none}"
        )
        assert k_none == "401"

    def start_prometheus(self):
        """Prometheus scraping every exporter, one job per way of asking (prometheus.yml)."""
        ports, ca = self.ports, self.path("ca.pem")
        cert, key = self.path("client.pem"), self.path("client.key")
        kweb = os.path.join(self.kube, "web")
        prom_cfg = self.path("prometheus.yml")
        with open(prom_cfg, "w") as f:
            f.write(f"""global: {{scrape_interval: 1s, scrape_timeout: 900ms}}
scrape_configs:
  - job_name: a-auth
    scheme: https
    tls_config: {{ca_file: {ca}}}
    basic_auth: {{username: prometheus, password: {self.password}}}
    static_configs: [{{targets: ["127.0.0.1:{ports["a"]}"]}}]
  - job_name: a-wrong
    scheme: https
    tls_config: {{ca_file: {ca}}}
    basic_auth: {{username: prometheus, password: wrong}}
    static_configs: [{{targets: ["127.0.0.1:{ports["a"]}"]}}]
  - job_name: b-cert
    scheme: https
    tls_config: {{ca_file: {ca}, cert_file: {cert}, key_file: {key}}}
    static_configs: [{{targets: ["127.0.0.1:{ports["b"]}"]}}]
  - job_name: b-nocert
    scheme: https
    tls_config: {{ca_file: {ca}}}
    static_configs: [{{targets: ["127.0.0.1:{ports["b"]}"]}}]
  - job_name: c-plain
    static_configs: [{{targets: ["127.0.0.1:{ports["c"]}"]}}]
  - job_name: k8s
    scheme: https
    tls_config: {{ca_file: {os.path.join(kweb, "ca.crt")}, server_name: {KUBE_NAME}}}
    basic_auth: {{username: prometheus, password_file: {self.path("k8s-password")}}}
    static_configs: [{{targets: ["127.0.0.1:{ports["k8s"]}"]}}]
  - job_name: systemd
    scheme: https
    tls_config: {{ca_file: {ca}}}
    basic_auth: {{username: prometheus, password: {self.password}}}
    static_configs: [{{targets: ["127.0.0.1:{ports["systemd"]}"]}}]
  - job_name: compose
    basic_auth: {{username: prometheus, password_file: {os.path.join(ROOT, "deploy/compose/scrape-password")}}}
    static_configs: [{{targets: ["127.0.0.1:{ports["compose"]}"]}}]
""")
        pport = free_port()
        argv = ["prometheus", f"--config.file={prom_cfg}", f"--storage.tsdb.path={self.tmp}/tsdb"]
        argv.append(f"--web.listen-address=127.0.0.1:{pport}")
        log = open(self.path("prometheus.log"), "w")
        self.procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log))
        self.prom = Prometheus(f"http://127.0.0.1:{pport}", timeout=3)

    def query(self, expr):
        try:
            return self.prom.result(expr)
        except OSError:
            return None

    def targets_now(self):
        try:
            return self.prom.data("/api/v1/targets")["activeTargets"]
        except OSError:
            return []

    def check_scrapes(self):
        """up per job as expected, the probe series scraped through every web config."""

        def ups():
            return {r["metric"]["job"]: r["value"][1] for r in self.query("up") or []}

        got = wait_for(
            "Prometheus to scrape every job as expected",
            lambda: ups() == UP_WANTED and ups(),
            40,
            show=lambda: (ups(), [(t["labels"]["job"], t["lastError"]) for t in self.targets_now() if t["lastError"]]),
        )
        print(f"Prometheus up: {got}")
        series = self.query('count(reachability_internet_reachable{job=~"a-auth|b-cert|k8s|compose|systemd"})')
        print(
            f"reachability_internet_reachable series scraped with a web config: {series[0]['value'][1] if series else 0}"
        )
        assert series and series[0]["value"][1] == "5"
        for t in self.prom.data("/api/v1/targets")["activeTargets"]:
            if t["labels"]["job"] in ("a-wrong", "b-nocert"):
                print(f"  {t['labels']['job']}: {t['lastError']}")

    def check_slow_clients(self):
        """Three runs of slow clients; the third holds more than --web.max-connections (1024): the
        oldest give way."""
        for name, proc, tls, job, count in [
            ("C (plain HTTP)", self.exporter_c, False, "c-plain", SLOW),
            ("A (TLS + basic auth)", self.exporter_a, True, "a-auth", SLOW),
            ("C, past the connection limit", self.exporter_c, False, "c-plain", 1500),
        ]:
            self.slow_run(name, proc, tls, job, count)

    def slow_run(self, name, proc, tls, job, count):
        port = self.ports["a" if tls else "c"]
        rss_before = rss_kib(proc.pid)
        started = time.time()
        self.slow = slow_clients(port, tls, count)
        opened = time.time() - started
        time.sleep(1)
        rss_during = rss_kib(proc.pid)
        t0 = time.time()
        if tls:
            status, body, _ = self.get("/metrics")
        else:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                status, body = r.status, r.read().decode()
        scrape_time = time.time() - t0
        per = (rss_during - rss_before) / min(count, 1024)
        print(
            f"{name}: {count} slow clients from 250 addresses opened in {opened:.1f} s; a scrape then: {status}"
            f" in {scrape_time * 1000:.0f} ms, {len(body)} bytes; RSS {rss_before} -> {rss_during} KiB"
            f" ({per:.1f} KiB per slow connection)"
        )
        assert status == 200 and "reachability_internet_reachable" in body
        assert per < RSS_PER_SLOW_KIB_LIMIT, f"{per:.1f} KiB per slow connection"
        time.sleep(3)
        prom_ok = self.query(f'min_over_time(up{{job="{job}"}}[3s])')
        print(
            f"  Prometheus's scrapes during the slow clients: min up over 3 s = {prom_ok[0]['value'][1] if prom_ok else None}"
        )
        assert prom_ok and prom_ok[0]["value"][1] == "1"
        for c in self.slow:
            c.close()
        self.slow = []

    def close(self):
        for c in self.slow:
            c.close()
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


KUBE_NAME = "reachability-exporter.reachability.svc"
UP_WANTED = {
    "a-auth": "1",
    "a-wrong": "0",
    "b-cert": "1",
    "b-nocert": "0",
    "c-plain": "1",
    "k8s": "1",
    "compose": "1",
    "systemd": "1",
}


def main():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 4096:
        raise SystemExit(f"FAIL: the open-file hard limit ({hard}) is below the 4096 the slow clients need")
    resource.setrlimit(resource.RLIMIT_NOFILE, (8192 if hard == resource.RLIM_INFINITY else min(8192, hard), hard))
    proof = Proof(sys.argv[1])
    try:
        proof.write_configs()
        proof.start_exporters()
        proof.check_systemd_example()
        proof.check_direct()
        proof.start_prometheus()
        proof.check_scrapes()
        proof.check_slow_clients()
        print("web security proof: OK")
    finally:
        proof.close()


if __name__ == "__main__":
    main()
