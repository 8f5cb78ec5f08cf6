"""The second review's cases about secrets (issue #41): credentials a redirect carries to
another origin, and passwords (URL userinfo, a scalar basic_auth_users) quoted in errors, logs
and response bodies."""

import signal
import subprocess
import time

from . import harness
from .auth import basic, bcrypt_hash
from .context import lifecycle_flag
from .harness import write
from .servers import RecordingHTTPServer

# [2] redirect_credentials


def response(status, extra=""):
    return f"HTTP/1.1 {status}\r\n{extra}Content-Length: 2\r\nConnection: close\r\n\r\nok".encode()


def case_redirect_credentials(c):
    """A web-mode HTTP probe with an Authorization and a Cookie header, answered 302 to another
    origin (127.0.0.1, another port): those headers must not follow it there. The control: a
    same-origin redirect keeps them (so the case sees headers at all)."""
    other = RecordingHTTPServer(lambda path: response("200 OK"))
    c.later(other.close)

    def origin(path):
        if path.startswith("/cross"):
            return response("302 Found", f"Location: http://127.0.0.1:{other.port}/landing\r\n")
        if path.startswith("/same"):
            return response("302 Found", "Location: /other\r\n")
        return response("200 OK")

    first = RecordingHTTPServer(origin)
    c.later(first.close)
    auth = basic("alice", "S3CRETpw")
    headers = f'{{Authorization: "{auth}", Cookie: "sid=S3CRETcookie"}}'
    cfg = c.path("redirect.yml")
    write(
        cfg,
        "probes:\n"
        f"  - {{name: cross, type: http, target: 'http://127.0.0.1:{first.port}/cross', "
        f"http: {{mode: web, headers: {headers}}}}}\n"
        f"  - {{name: same, type: http, target: 'http://127.0.0.1:{first.port}/same', "
        f"http: {{mode: web, headers: {headers}}}}}\n",
    )
    argv = [
        c.binary,
        "check",
        f"--config.file={cfg}",
        "--probe.trust-local-targets",
        "--no-path.monitor",
        "--probe.timeout=2s",
        "--probe.interval=3s",
    ]
    r = subprocess.run(argv, capture_output=True, env=harness.ENV, timeout=20)
    time.sleep(0.2)

    def creds(headers):
        return sorted(k for k in ("authorization", "cookie") if k in headers)

    at = {path: creds(h) for path, h in first.seen}
    landed = [creds(h) for path, h in other.seen]
    c.expect(
        at.get("/cross") == ["authorization", "cookie"] and at.get("/same") == ["authorization", "cookie"],
        f"check exit {r.returncode}; the first requests carry {at.get('/cross')} and {at.get('/same')} "
        "(want both headers)",
    )
    c.expect(
        at.get("/other") == ["authorization", "cookie"],
        f"control, same-origin redirect /same -> /other: {at.get('/other', 'not followed')} (want both headers)",
    )
    c.expect(
        landed and not any(landed),
        f"cross-origin redirect to 127.0.0.1:{other.port}: "
        + (f"arrived with {landed}" if landed else "not followed")
        + " (want followed, with neither Authorization nor Cookie)",
    )


# [10] secrets_in_errors

SECRET = "S3CRETpw"
URL = f"http://alice:{SECRET}@127.0.0.1:9/"


def leaked(text):
    return SECRET in text


def case_secrets_in_errors(c):
    """A probe URL with `user:password` and a scalar `basic_auth_users` (a password where a map
    belongs) are refused; none of the refusals may quote the password: check-config, a flag's
    error, the start error, the reload's log line and its 500 body, a web config's start and
    reload errors."""
    results = []  # (label, refused as expected, leaked)

    def run(label, argv):
        r = subprocess.run(argv, capture_output=True, env=harness.ENV, timeout=20)
        out = (r.stdout + r.stderr).decode("utf-8", "replace")
        results.append((label, r.returncode != 0, leaked(out)))

    bad = c.path("bad.yml")
    write(bad, f'probes:\n  - name: p\n    type: http\n    target: "{URL}"\n')
    run("check-config", [c.binary, "check-config", bad])
    run("check --probe.http", [c.binary, "check", f"--probe.http={URL}", "--no-path.monitor"])
    run("check --config.file", [c.binary, "check", f"--config.file={bad}", "--no-path.monitor"])

    def start(label, probes, extra):
        e = c.exporter(probes, extra, wait=False, name=label.replace(" ", "-"))
        rc = e.wait_exit(5)
        if rc is None:
            e.stop()
        results.append((label, rc not in (None, 0), leaked(e.stderr())))

    start("start --probe.http", [f"--probe.http={URL}"], [])
    start("start --config.file", [], [f"--config.file={bad}"])
    scalar = c.path("scalar-web.yml")
    write(scalar, f"basic_auth_users: {SECRET}2\n")
    lst = c.listener()
    start("start web config", [f"--probe.tcp={lst.target}"], [f"--web.config.file={scalar}"])

    # Reloads: the file becomes bad under a running exporter.
    cfg = c.path("config.yml")
    write(cfg, f'probes:\n  - {{name: p, type: tcp, target: "{lst.target}"}}\n')
    web = c.path("web.yml")
    write(web, f"basic_auth_users:\n  prom: {bcrypt_hash('pw', 4)}\n")
    e = c.exporter([], [f"--config.file={cfg}", f"--web.config.file={web}"] + lifecycle_flag(c), name="reloaded")
    creds = {"Authorization": basic("prom", "pw")}
    e.wait_rounds(1, headers=creds)
    write(cfg, open(bad).read())
    try:
        st, _, body = e.request("POST", "/-/reload", creds, timeout=10)
    except OSError as err:
        st, body = type(err).__name__, b""
    results.append(("POST /-/reload body", st == 500, leaked(body.decode("utf-8", "replace"))))
    e.proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    log = e.stderr()
    results.append(("reload log", "reload failed" in log, leaked(log)))
    # The web config becomes a scalar: re-read at a new connection, at most once a second.
    lines = len(log.splitlines())
    time.sleep(1.1)
    write(web, f"basic_auth_users: {SECRET}2\n")
    time.sleep(1.1)
    for _ in range(2):
        try:
            e.request("GET", "/-/healthy", creds, timeout=3)
        except OSError:
            pass
        time.sleep(0.3)
    log = "\n".join(e.stderr().splitlines()[lines:])
    m = e.wait_metric(lambda m: True, 3, headers=creds)
    fails = m.total("reachability_exporter_web_config_reloads_total", result="failure") if m else 0
    results.append(("web config reload log", fails >= 1, leaked(log)))
    e.stop()
    results.append(("everything the exporter logged", True, leaked(e.stderr())))
    spoke = [label for label, _, leak in results if leak]
    quiet = [label for label, _, leak in results if not leak]
    c.expect(not spoke, f"{SECRET!r} quoted by: {', '.join(spoke) or 'none'} (want none); not by: {', '.join(quiet)}")
    unrefused = [label for label, refused, _ in results if not refused]
    c.expect(not unrefused, f"every path refused as expected (not: {', '.join(unrefused) or 'none'})")
