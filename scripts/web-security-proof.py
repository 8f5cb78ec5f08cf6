#!/usr/bin/env python3
"""Proof of the web configuration against a real Prometheus (issue #19), loopback only.

- Exporter A: TLS + basic auth (bcrypt) + a security header; exporter B: TLS with
  RequireAndVerifyClientCert. Both probe a loopback TCP listener (--probe.trust-local-targets).
- Prometheus scrapes A with the right password (job a-auth), A with a wrong one (a-wrong),
  B with a client certificate (b-cert) and B without one (b-nocert): up must be 1, 0, 1, 0.
- Plain HTTP on A's TLS port gets no metrics.
- 1000 slow clients against A (half-sent request heads over TLS-less TCP, which A answers with
  a failed handshake only after its deadline, and half-open TLS handshakes): Prometheus's next
  scrapes of A still succeed, and an authenticated curl gets 200 at once; A's RSS is reported.

usage: web-security-proof.py EXPORTER_BINARY
"""
import crypt
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

ENV = dict(os.environ, REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS="1")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sh(*args, cwd=None):
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_pki(d):
    k = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    sh("openssl", "req", "-x509", *k, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=rx-proof-ca",
       "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    for name, san, eku in [("server", "IP:127.0.0.1,DNS:localhost", "serverAuth"),
                           ("client", "DNS:prometheus.rx-proof", "clientAuth")]:
        sh("openssl", "req", "-new", *k, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write(f"subjectAltName={san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage={eku}\n")
        sh("openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
           "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d)


class Listener(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            try:
                self.sock.accept()[0].close()
            except OSError:
                pass


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def wait_for(what, predicate, limit):
    end = time.time() + limit
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise SystemExit(f"FAIL: {what} within {limit} s")


def main():
    binary = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="rx-websec-")
    procs = []
    slow = []
    try:
        make_pki(tmp)
        password = "s3cret-proof"
        hashed = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10))
        a_cfg = os.path.join(tmp, "a.yml")
        with open(a_cfg, "w") as f:
            f.write(f"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
                    f"http_server_config:\n  headers: {{X-Content-Type-Options: nosniff}}\n"
                    f"basic_auth_users:\n  prometheus: {hashed}\n")
        b_cfg = os.path.join(tmp, "b.yml")
        with open(b_cfg, "w") as f:
            f.write("tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
                    "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n")
        target = Listener()
        target.start()
        ports = {}
        for name, cfg in [("a", a_cfg), ("b", b_cfg)]:
            ports[name] = free_port()
            procs.append(subprocess.Popen(
                [binary, f"--web.listen-address=127.0.0.1:{ports[name]}", f"--web.config.file={cfg}",
                 f"--probe.tcp=127.0.0.1:{target.port}", "--probe.trust-local-targets", "--no-path.monitor",
                 "--probe.interval=1s", "--probe.timeout=500ms"],
                env=ENV, stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, f"{name}.log"), "w")))
        exporter_a = procs[0]
        ctx = ssl.create_default_context(cafile=os.path.join(tmp, "ca.pem"))
        auth = "Basic " + __import__("base64").b64encode(f"prometheus:{password}".encode()).decode()

        def get(path, authorization=auth):
            req = urllib.request.Request(f"https://127.0.0.1:{ports['a']}{path}", headers={"Authorization": authorization})
            try:
                with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
                    return r.status, r.read().decode(), dict(r.headers)
            except urllib.error.HTTPError as e:
                return e.code, "", dict(e.headers)
            except OSError:
                return None, "", {}

        wait_for("exporter A serving over TLS", lambda: get("/-/healthy")[0] == 200, 20)
        status, _, headers = get("/metrics", "Basic " + __import__("base64").b64encode(b"prometheus:wrong").decode())
        print(f"wrong password: {status}, WWW-Authenticate: {headers.get('WWW-Authenticate')}")
        assert status == 401 and headers.get("WWW-Authenticate", "").startswith("Basic"), "401 expected"
        plain = subprocess.run(["curl", "-sS", "--max-time", "3", f"http://127.0.0.1:{ports['a']}/metrics"],
                               capture_output=True, text=True)
        print(f"plain HTTP on the TLS port: curl exit {plain.returncode}, metrics in answer: {'reachability_' in plain.stdout}")
        assert "reachability_" not in plain.stdout

        prom_cfg = os.path.join(tmp, "prometheus.yml")
        ca, cert, key = (os.path.join(tmp, n) for n in ("ca.pem", "client.pem", "client.key"))
        with open(prom_cfg, "w") as f:
            f.write(f"""global: {{scrape_interval: 1s, scrape_timeout: 900ms}}
scrape_configs:
  - job_name: a-auth
    scheme: https
    tls_config: {{ca_file: {ca}}}
    basic_auth: {{username: prometheus, password: {password}}}
    static_configs: [{{targets: ["127.0.0.1:{ports['a']}"]}}]
  - job_name: a-wrong
    scheme: https
    tls_config: {{ca_file: {ca}}}
    basic_auth: {{username: prometheus, password: wrong}}
    static_configs: [{{targets: ["127.0.0.1:{ports['a']}"]}}]
  - job_name: b-cert
    scheme: https
    tls_config: {{ca_file: {ca}, cert_file: {cert}, key_file: {key}}}
    static_configs: [{{targets: ["127.0.0.1:{ports['b']}"]}}]
  - job_name: b-nocert
    scheme: https
    tls_config: {{ca_file: {ca}}}
    static_configs: [{{targets: ["127.0.0.1:{ports['b']}"]}}]
""")
        pport = free_port()
        procs.append(subprocess.Popen(
            ["prometheus", f"--config.file={prom_cfg}", f"--storage.tsdb.path={tmp}/tsdb",
             f"--web.listen-address=127.0.0.1:{pport}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w")))
        api = f"http://127.0.0.1:{pport}/api/v1/"

        def query(expr):
            try:
                with urllib.request.urlopen(api + "query?" + urllib.parse.urlencode({"query": expr}), timeout=3) as r:
                    return json.loads(r.read())["data"]["result"]
            except OSError:
                return None

        def ups():
            res = query("up") or []
            return {r["metric"]["job"]: r["value"][1] for r in res}

        want = {"a-auth": "1", "a-wrong": "0", "b-cert": "1", "b-nocert": "0"}
        got = wait_for("Prometheus to scrape every job as expected", lambda: ups() == want and ups(), 30)
        print(f"Prometheus up: {got}")
        series = query('count(reachability_internet_reachable{job=~"a-auth|b-cert"})')
        print(f"reachability_internet_reachable series scraped over TLS: {series[0]['value'][1] if series else 0}")
        assert series and series[0]["value"][1] == "2"
        with urllib.request.urlopen(api + "targets", timeout=3) as r:
            targets = json.loads(r.read())["data"]["activeTargets"]
        for t in targets:
            if t["labels"]["job"] in ("a-wrong", "b-nocert"):
                print(f"  {t['labels']['job']}: {t['lastError']}")

        rss_before = rss_kib(exporter_a.pid)
        started = time.time()
        for i in range(1000):
            s = socket.create_connection(("127.0.0.1", ports["a"]), timeout=5)
            if i % 2 == 0:
                s.send(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # the start of a ClientHello, then nothing
            slow.append(s)
        opened = time.time() - started
        time.sleep(1)
        rss_during = rss_kib(exporter_a.pid)
        t0 = time.time()
        status, body, _ = get("/metrics")
        scrape_time = time.time() - t0
        print(f"1000 slow clients opened in {opened:.1f} s; an authenticated scrape then: {status} in {scrape_time * 1000:.0f} ms,"
              f" {len(body)} bytes; exporter RSS {rss_before} KiB before, {rss_during} KiB with them")
        assert status == 200 and "reachability_internet_reachable" in body
        time.sleep(3)
        prom_ok = query('min_over_time(up{job="a-auth"}[3s])')
        print(f"Prometheus's scrapes of A during the slow clients: min up over 3 s = {prom_ok[0]['value'][1] if prom_ok else None}")
        assert prom_ok and prom_ok[0]["value"][1] == "1"
        print("web security proof: OK")
    finally:
        for s in slow:
            s.close()
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
