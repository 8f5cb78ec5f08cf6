"""Small things every lab and proof uses: the repository root, logging, running a command,
reading the end of a log, waiting for a condition, loopback ports."""

import os
import socket
import subprocess
import time

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
