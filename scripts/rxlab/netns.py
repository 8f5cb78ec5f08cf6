"""Network namespaces, one implementation for every lab: made and joined (`Namespaces`),
entered by a thread (`enter`, `NsWorker`), emptied and deleted (`Namespaces.close`, `sweep`), and a
loopback-only namespace for one command (`isolated`).

A lab names its namespaces PREFIX-* (PREFIX unique per run, e.g. rxlab-PID): `sweep(PREFIX)` is
the last resort of the entry point (scripts/lab) after the lab's own cleanup, and removes only
what carries that prefix. Processes are ended by PID, never by name."""

import argparse
import ctypes
import os
import queue
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

from .util import run

CLONE_NEWNET = 0x40000000
# Set by `isolated` in the environment of the command it runs in a namespace of its own.
ISOLATED_ENV = "RXLAB_ISOLATED"


def enter(ns):
    """Moves the calling thread into network namespace `ns` (setns affects only that thread;
    threads it starts later inherit it). Sockets opened afterwards live there."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns")
    finally:
        os.close(fd)


def kill_inside(ns, sig=signal.SIGKILL):
    """Sends `sig` to every process in namespace `ns` (by PID; never this process, which may
    have entered it). Everything there was started by the lab that made it."""
    pids = run("ip", "netns", "pids", ns, check=False).stdout.split()
    for pid in (int(p) for p in pids if p.isdigit() and int(p) != os.getpid()):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def lab_arguments(prog, doc, epilog, prefix):
    """The command line of a lab whose namespaces scripts/lab names and sweeps: --prefix (`prefix`
    shows its form, e.g. rxlab-PID) and --exporter-bin, both given by scripts/lab; the lab adds
    its own options."""
    ap = argparse.ArgumentParser(
        prog=prog, description=doc, epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--prefix", required=True, help=f"namespace name prefix, unique per run ({prefix})")
    ap.add_argument("--exporter-bin", required=True)
    return ap


def nft(ns, ruleset, check=True):
    """Loads nft `ruleset` (text, as `nft -f -` reads it) in namespace `ns`."""
    return run("ip", "netns", "exec", ns, "nft", "-f", "-", input_text=ruleset, check=check)


def nft_delete(ns, family, name, check=False):
    """Deletes nft table FAMILY NAME of `ns` (by default quietly, when it is not there)."""
    return run("ip", "netns", "exec", ns, "nft", "delete", "table", family, name, check=check)


def masquerade(ns, oifname, table=("ip", "rxnat")):
    """A NAT table in `ns` (a lab router) that masquerades what leaves through `oifname`."""
    family, name = table
    nft(
        ns,
        f"table {family} {name} {{\n  chain postrouting {{\n    type nat hook postrouting priority srcnat;\n"
        f'    oifname "{oifname}" masquerade\n  }}\n}}\n',
    )


def flush_conntrack(ns):
    """Forgets the connection tracking entries of `ns` (NAT of running flows would outlive a change)."""
    run("ip", "netns", "exec", ns, "conntrack", "-F", check=False)


def sysctl(ns, *settings):
    """Sets KEY=VALUE `settings` in `ns`."""
    run("ip", "netns", "exec", ns, "sysctl", "-qw", *settings)


def addresses(ns, dev, *addrs):
    """Adds `addrs` (CIDR; IPv6 ones without duplicate address detection) to `dev` of `ns`, then
    sets the link up."""
    for addr in addrs:
        run("ip", "-n", ns, "addr", "add", addr, "dev", dev, *(["nodad"] if ":" in addr else []))
    run("ip", "-n", ns, "link", "set", dev, "up")


class Namespaces:
    """The namespaces one lab made, in order; `close()` kills what still runs in them and
    deletes them, last made first."""

    # What the fault lab sets in each of its namespaces: no duplicate address detection (an
    # address is usable at once) and IPv6 addresses kept while a link is down.
    QUIET_IPV6 = (
        "net.ipv6.conf.all.accept_dad=0",
        "net.ipv6.conf.default.accept_dad=0",
        "net.ipv6.conf.all.keep_addr_on_down=1",
        "net.ipv6.conf.default.keep_addr_on_down=1",
    )

    def __init__(self, sysctls=()):
        self.names, self.sysctls = [], tuple(sysctls)

    def add(self, name):
        run("ip", "netns", "add", name)
        self.names.append(name)
        run("ip", "-n", name, "link", "set", "lo", "up")
        for key in self.sysctls:
            run("ip", "netns", "exec", name, "sysctl", "-qw", key)
        return name

    @staticmethod
    def veth(ns_a, if_a, ns_b, if_b):
        """A veth pair: `if_a` in `ns_a`, its peer `if_b` in `ns_b` (both down, no address)."""
        run("ip", "-n", ns_a, "link", "add", if_a, "type", "veth", "peer", "name", if_b, "netns", ns_b)

    def link(self, ns_a, if_a, addr_a, ns_b, if_b, addr_b):
        """A veth pair with one address on each end, both up."""
        self.veth(ns_a, if_a, ns_b, if_b)
        for ns, dev, addr in ((ns_a, if_a, addr_a), (ns_b, if_b, addr_b)):
            run("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            run("ip", "-n", ns, "link", "set", dev, "up")

    def close(self):
        for ns in reversed(self.names):
            kill_inside(ns)
            run("ip", "netns", "del", ns, check=False)
        self.names = []


class ResolvConf:
    """/etc/netns/NS/resolv.conf of lab namespaces (`ip netns exec` bind-mounts it over
    /etc/resolv.conf, so what runs there asks the lab's resolver). `close()` removes the
    directories written, and /etc/netns itself when this object made it and it is empty again."""

    ROOT = "/etc/netns"

    def __init__(self):
        self.dirs, self.made_root = [], False

    def write(self, ns, text):
        """Writes NS's resolv.conf (`text`, may be empty); returns its path."""
        if not self.dirs:
            self.made_root = not os.path.isdir(self.ROOT)
        d = os.path.join(self.ROOT, ns)
        os.makedirs(d, exist_ok=True)
        self.dirs.append(d)
        path = os.path.join(d, "resolv.conf")
        with open(path, "w") as f:
            f.write(text)
        return path

    def close(self):
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)
        if self.made_root:
            try:
                os.rmdir(self.ROOT)  # only when this run made it and it is empty again
            except OSError:
                pass


def sweep(prefix, settle=0.3):
    """The last resort after a lab run: every namespace named PREFIX-* loses its processes
    (SIGTERM, `settle` seconds, SIGKILL) and is deleted, and /etc/netns/PREFIX-* (resolver files
    of lab namespaces) goes. Returns the namespaces it found."""
    listed = run("ip", "netns", "list", check=False).stdout.split("\n")
    spaces = [line.split()[0] for line in listed if line.split() and line.split()[0].startswith(prefix + "-")]
    for ns in spaces:
        kill_inside(ns, signal.SIGTERM)
    if spaces:
        time.sleep(settle)
    for ns in spaces:
        kill_inside(ns)
        run("ip", "netns", "del", ns, check=False)
    etc = "/etc/netns"
    if os.path.isdir(etc):
        for name in os.listdir(etc):
            if name.startswith(prefix + "-"):
                shutil.rmtree(os.path.join(etc, name), ignore_errors=True)
    return spaces


def isolated(argv, name, env=None):
    """Runs `argv` in a network namespace made for it (`name`) with only a loopback interface up,
    and deletes the namespace afterwards; returns the exit status. The command finds
    RXLAB_ISOLATED=1 in its environment."""
    run("ip", "netns", "add", name)
    try:
        run("ip", "-n", name, "link", "set", "lo", "up")
        env = dict(env or os.environ, **{ISOLATED_ENV: "1"})
        return subprocess.run(["ip", "netns", "exec", name, *argv], env=env).returncode
    finally:
        kill_inside(name)
        run("ip", "netns", "del", name, check=False)


class NsWorker(threading.Thread):
    """A thread that has entered network namespace `ns` (setns affects only the calling thread)
    and runs the callables it is given there: every socket they open is in that namespace."""

    def __init__(self, ns):
        super().__init__(daemon=True, name=f"ns-{ns}")
        self.ns, self.jobs, self.entered, self.error = ns, queue.Queue(), threading.Event(), None
        self.start()
        self.entered.wait(5)
        if self.error or not self.entered.is_set():
            raise RuntimeError(f"cannot enter namespace {ns}: {self.error}")

    def run(self):
        try:
            enter(self.ns)
        except OSError as e:
            self.error = e
            self.entered.set()
            return
        self.entered.set()
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, box, done = job
            try:
                box["value"] = fn()
            except BaseException as e:  # handed back to the caller
                box["error"] = e
            done.set()

    def call(self, fn, timeout=20):
        box, done = {}, threading.Event()
        self.jobs.put((fn, box, done))
        if not done.wait(timeout):
            raise TimeoutError(f"{self.ns}: call did not return within {timeout} s")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def get(self, url, timeout=5):
        """GET `url` from inside the namespace: (status, body)."""

        def fetch():
            try:
                with urllib.request.urlopen(url, timeout=timeout) as r:
                    return r.status, r.read().decode(errors="replace")
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode(errors="replace")

        return self.call(fetch, timeout + 5)

    def connect(self, host, port, timeout=2.0):
        """A TCP connect from inside the namespace: 'connected', 'refused' (the host answered) or
        'timeout' (nothing came back: the path is dead)."""

        def attempt():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(timeout)
            try:
                s.connect((host, port))
                return "connected"
            except ConnectionRefusedError:
                return "refused"
            except TimeoutError:
                return "timeout"
            except OSError as e:
                return f"error {e.strerror or e}"
            finally:
                s.close()

        return self.call(attempt, timeout + 5)

    def stop(self):
        self.jobs.put(None)
