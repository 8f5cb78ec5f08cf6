"""The two exporters of the blackbox side-by-side lab, in the client namespace on loopback:
Debian's prometheus-blackbox-exporter (run directly, `--config.file`) and reachability_exporter
(`--modules.file`, REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1, its one probe of its own a TCP
connect to its own port on 127.0.0.1); a GET from the client namespace; and whether one module
file loads in either (blackbox's `--config.check`; ours started, its exit 78 and message read)."""

import http.client
import os
import re
import subprocess
import time
from dataclasses import dataclass

from ..util import run, tail, wait_until

BLACKBOX = "prometheus-blackbox-exporter"


@dataclass
class Response:
    status: int
    headers: dict  # lower-case names
    body: str


def get(port, path, headers=None, timeout=15):
    """GET http://127.0.0.1:PORT/PATH from this thread's namespace."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        body = r.read().decode(errors="replace")
        return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, body)
    finally:
        conn.close()


def our_argv(exporter, modules_file, port):
    return [
        exporter,
        f"--modules.file={modules_file}",
        f"--web.listen-address=127.0.0.1:{port}",
        f"--probe.tcp=127.0.0.1:{port}",
        "--probe.trust-local-targets",
        "--no-path.monitor",
    ]


def our_env():
    return dict(os.environ, REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS="1")


def blackbox_version():
    out = run(BLACKBOX, "--version", check=False)
    m = re.search(r"version (\S+)", out.stdout + out.stderr)
    return m.group(1) if m else "?"


def blackbox_check(ns, path):
    """(loads, message) of `blackbox --config.check` on the file."""
    p = run("ip", "netns", "exec", ns, BLACKBOX, "--config.check", f"--config.file={path}", check=False)
    text = (p.stdout + p.stderr).strip()
    if p.returncode == 0:
        return True, ""
    m = re.search(r'err="([^"]*(?:\\.[^"]*)*)"', text)
    return False, (m.group(1) if m else text.splitlines()[-1] if text else f"exit {p.returncode}")


# Our refusal: "reachability_exporter: error: modules: FILE:LINE:COL: PATH: expected …"
# A refusal in our log: a module refused at load (the exporter serves the file's other modules),
# or the whole file (exit 78); both are log records with err="FILE:LINE:COL: PATH: MESSAGE".
REFUSAL = re.compile(r'err="(?P<file>[^:"]+):(?P<line>\d+):(?P<col>\d+): (?P<path>\S+): (?P<message>(?:[^"\\]|\\.)*)"')


def our_check(ns, exporter, path, port, work, timeout=10):
    """(loads, refusal) of ours started on the module file: exit 78 with its message, or serving
    /probe (then stopped). `refusal` is {file, line, path, key, message} or None."""
    log = os.path.join(work, f"check-{port}.log")
    with open(log, "w") as out:
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *our_argv(exporter, path, port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=our_env(),
        )
    try:
        done = wait_until(lambda: p.poll() is not None or "msg=listening" in tail(log, 50), timeout, step=0.05)
        if not done:
            return False, {"message": f"neither served nor exited in {timeout} s", "key": "?", "line": "?"}
        text = tail(log, 20)
        if p.poll() is None:
            if "module refused" not in text:
                return True, None
        m = REFUSAL.search(text)
        if not m:
            return False, {"message": f"exit {p.returncode}: {text.strip()[:300]}", "key": "?", "line": "?"}
        key = re.sub(r"\[\d+\]", "", m.group("path")).split(".")[-1]
        missing = re.match(r'expected a key "([^"]+)"', m.group("message"))
        if missing:  # a key that must be there and is not
            key = f"{missing.group(1)} (missing)"
        return False, {
            "exit": p.poll(),
            "line": m.group("line"),
            "path": m.group("path"),
            "key": key,
            "message": m.group("message"),
        }
    finally:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


class Exporters:
    """Both exporters on one module file in namespace `ns`, started by `start` and stopped by
    the lab's cleanup (their Popen objects are in `processes`)."""

    def __init__(self, ns, exporter, work, processes):
        self.ns, self.exporter, self.work, self.processes = ns, exporter, work, processes

    def start(self, modules_file, blackbox_port, our_port, client_call):
        bb_log, our_log = os.path.join(self.work, "blackbox.log"), os.path.join(self.work, "ours.log")
        with open(bb_log, "w") as out:
            self.blackbox = subprocess.Popen(
                ["ip", "netns", "exec", self.ns, BLACKBOX, f"--config.file={modules_file}",
                 f"--web.listen-address=127.0.0.1:{blackbox_port}"],
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.processes.append(self.blackbox)
        with open(our_log, "w") as out:
            self.ours = subprocess.Popen(
                ["ip", "netns", "exec", self.ns, *our_argv(self.exporter, modules_file, our_port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=our_env(),
            )
        self.processes.append(self.ours)
        for name, proc, port, log in (
            ("blackbox", self.blackbox, blackbox_port, bb_log),
            ("ours", self.ours, our_port, our_log),
        ):

            def up(proc=proc, port=port):
                if proc.poll() is not None:
                    return "exited"
                return client_call(get, port, "/metrics", timeout=2).status == 200

            if wait_until(up, 15, step=0.1) is not True:
                raise RuntimeError(f"the {name} exporter did not serve on {port}:\n{tail(log)}")
        time.sleep(0.1)
