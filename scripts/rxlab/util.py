"""Small things every lab and proof uses: the repository root, logging, running a command,
reading the end of a log, waiting for a condition or an HTTP answer, loopback ports and a TCP
listener on one."""

import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(text=""):
    print(text, flush=True)


def run(*cmd, check=True, input_text=None, timeout=30):
    """Runs a command; raises with its output when it fails and `check` is set."""
    p = subprocess.run(cmd, capture_output=True, text=True, input=input_text, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stdout}{p.stderr}")
    return p


def tail(path, lines=15, skip=()):
    """The last `lines` lines of a log ("" when it cannot be read). `skip`: prefixes of noise
    lines to leave out (blank lines go too then)."""
    try:
        with open(path, errors="replace") as f:
            kept = [line for line in f if not skip or (line.strip() and not line.startswith(skip))]
        return "".join(kept[-lines:])
    except OSError:
        return ""


def wait_until(predicate, timeout, step=0.25):
    """Polls `predicate()` (exceptions count as false) until it returns something truthy or
    `timeout` seconds pass; returns that value or None."""
    deadline = time.time() + timeout
    while True:
        try:
            value = predicate()
            if value:
                return value
        except (OSError, RuntimeError, TimeoutError):
            pass
        if time.time() > deadline:
            return None
        time.sleep(step)


# curl saying only the HTTP status of the answer (its body goes nowhere).
CURL_STATUS = ("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}")


def poll(fetch, predicate, timeout, step=0.05):
    """Calls `fetch()` (OSError counts as not yet) until `predicate` holds for what it returns,
    or `timeout` seconds pass; returns that value or None."""
    deadline = time.time() + timeout
    while True:
        try:
            value = fetch()
            if predicate(value):
                return value
        except OSError:
            pass
        if time.time() > deadline:
            return None
        time.sleep(step)


def wait_http(url, timeout, step=0.2):
    """GETs `url` (from this thread's namespace) until it answers with a success status, trying
    every `step` seconds for `timeout` seconds: the body (bytes), or None when it never did."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                return r.read()
        except OSError:
            time.sleep(step)
    return None


def log_table(head, rows):
    """Logs `rows` (tuples of cells) under `head` as a Markdown table, each column as wide as its
    widest cell."""
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)) + " |"

    log(line(head))
    log("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        log(line(r))


def missing_tools(tools):
    """The commands of `tools` that are not on PATH."""
    return [t for t in tools if not shutil.which(t)]


def require_tools(what, tools, also_missing=()):
    """Raises RuntimeError("WHAT cannot run: missing ...") when any of `tools` is not on PATH
    (or `also_missing` names something)."""
    missing = missing_tools(tools) + list(also_missing)
    if missing:
        raise RuntimeError(f"{what} cannot run: missing {', '.join(missing)}")


def read_from(path, mark=0):
    """The text of the file at `path` from byte `mark` on ("" when it cannot be read)."""
    try:
        with open(path, errors="replace") as f:
            f.seek(mark)
            return f.read()
    except OSError:
        return ""


def size_of(path):
    """The size of the file at `path` (0 when it is not there): a mark for `read_from`."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def connects(address, port, timeout=0.5):
    """Whether a TCP connection to (address, port) is accepted from this thread's namespace."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Listener(threading.Thread):
    """Accepts and closes TCP connections on 127.0.0.1:`port` (0: a free one; `self.port`
    either way) until stopped: a TCP probe's target. Start it with start()."""

    def __init__(self, port=0):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
                conn.close()
            except OSError:
                continue
        self.sock.close()

    def stop(self):
        self.stopped.set()
        self.join(2)
