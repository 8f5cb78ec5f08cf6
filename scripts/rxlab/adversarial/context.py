"""What every adversarial case is given: its world (`Ctx`: a temp dir, the processes and sockets
to clean up, its checks) and the small helpers the cases share."""

import os
import shutil
import subprocess
import tempfile

from . import harness
from .harness import Exporter, write
from .servers import Listener


class Ctx:
    """One case's world: a temp dir, the processes and sockets to clean up, and its checks."""

    def __init__(self, binary, name):
        self.binary = binary
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix=f"rx-adv-{name}-")
        self.cleanups = []
        self.checks = []

    def expect(self, ok, text):
        self.checks.append((bool(ok), text))
        return ok

    @property
    def failed(self):
        return [t for ok, t in self.checks if not ok]

    def detail(self):
        return "; ".join(t if ok else f"{t} [FAILED]" for ok, t in self.checks)

    def later(self, fn):
        self.cleanups.append(fn)

    def exporter(self, probes, extra=(), wrap=None, wait=True, name=None):
        """Starts an exporter; with wait=False it does not wait for it to listen (it may exit)."""
        e = Exporter(self.binary, self.tmp, probes, extra, wrap=wrap, name=name)
        self.later(e.stop)
        e.start(wait=wait)
        return e

    def listener(self, **kw):
        lst = Listener(**kw)
        self.later(lst.close)
        return lst

    def path(self, name):
        return os.path.join(self.tmp, name)

    def close(self):
        for fn in reversed(self.cleanups):
            try:
                fn()
            except Exception:  # cleanup must go on
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)


_help_cache = {}


def supports(binary, flag):
    """Whether the binary knows a flag (the fixed binary has --web.enable-lifecycle)."""
    if binary not in _help_cache:
        r = subprocess.run([binary, "--help"], capture_output=True, text=True, env=harness.ENV, timeout=10)
        _help_cache[binary] = r.stdout + r.stderr
    return flag in _help_cache[binary]


def lifecycle_flag(c):
    return ["--web.enable-lifecycle"] if supports(c.binary, "web.enable-lifecycle") else []


def probe_config(c, listener, name="file-probe", extra=""):
    """A --config.file with one TCP probe to our loopback listener. Exporters started with it get
    no probe flags: with two probes a round is staggered over the interval."""
    path = c.path("config.yml")
    write(path, f'{extra}probes:\n  - name: {name}\n    type: tcp\n    target: "{listener.target}"\n')
    return path


def fmt(x, unit="", digits=1):
    return "none" if x is None else f"{x:.{digits}f}{unit}"
