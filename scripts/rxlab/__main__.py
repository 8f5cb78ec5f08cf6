"""scripts/lab NAME [ARGS...]: the one entry of every lab and proof (scripts/lab --list names them).

Each lab is run the same way: the tools it needs are checked (a lab that needs root or a tool
that is missing prints a NOTICE and does not run: it never passes silently), the binaries are
found, the lab runs as a child process, and what it made is swept afterwards whatever happened
(namespaces named after this run, their processes by PID, /etc/netns and /tmp leftovers).

Binaries: RX_BIN_DIR=DIR (or RXLAB_BIN_DIR=DIR) names the directory of reachability_exporter,
reachability-lab and history_bench built elsewhere; SwiftPM is then never invoked. Without it
the directory is `swift build --show-bin-path`, and the products a lab needs are built when
missing (the fault lab builds them every time, unless RXLAB_NO_BUILD=1). RXLAB_LAB_BIN names a
reachability-lab of its own. Bounds: PROOF_TIMEOUT (prometheus 300 s, status-page 180 s each part),
BACKFILL_TIMEOUT (120 s), RXFLEET_TIMEOUT (600 s), RXHOPS_TIMEOUT (180 s),
RXBB_TIMEOUT (240 s), RXCAPTIVE_TIMEOUT (300 s).

Traffic: every exporter gets lab or loopback targets only, and
REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 is set for all of them."""

import os
import shutil
import signal
import subprocess
import sys

from . import netns
from .util import ROOT

HERE = os.path.dirname(os.path.abspath(__file__))


def child_env(**extra):
    env = dict(os.environ, REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS="1", PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(HERE), os.environ.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def module(name, *args, python_flags=()):
    return [sys.executable, "-u", *python_flags, "-m", f"rxlab.{name}", *args]


def bounded(seconds_env, default, kill_after, argv):
    return ["timeout", f"--kill-after={kill_after}", os.environ.get(seconds_env) or str(default), *argv]


def missing(tools, modules=()):
    gone = [t for t in tools if not shutil.which(t)]
    for m in modules:
        if subprocess.run([sys.executable, "-c", f"import {m}"], capture_output=True).returncode != 0:
            gone.append({"yaml": "PyYAML"}.get(m, m))
    return gone


def notice(what, needs, gone):
    """The NOTICE of a lab that cannot run here (not root, or tools missing): 0, not a pass."""
    print(
        f"NOTICE: {what} NOT RUN (needs root and {needs}; missing: {', '.join(gone) or 'none'}, uid {os.getuid()})",
        flush=True,
    )
    return 0


def bin_dir(products, build="missing"):
    """The directory of the built binaries. `build`: "always" (swift build each product, unless
    RXLAB_NO_BUILD), "missing" (only those not built yet) or "never"."""
    given = os.environ.get("RXLAB_BIN_DIR") or os.environ.get("RX_BIN_DIR")
    if given:
        return os.path.abspath(given)
    if build == "always" and not os.environ.get("RXLAB_NO_BUILD"):
        for product in products:
            swift_build(product)
    path = subprocess.run(
        ["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    if build != "never" and not os.environ.get("RXLAB_NO_BUILD"):
        for product in products:
            if not os.access(os.path.join(path, product), os.X_OK):
                swift_build(product)
    return path


def swift_build(product):
    p = subprocess.run(["swift", "build", "--product", product], cwd=ROOT, capture_output=True, text=True)
    for line in (p.stdout + p.stderr).splitlines():
        if "error" in line:
            print(line, flush=True)


def binaries(directory, *names):
    """The paths of `names` in `directory`; exits 1 naming the first one that is not there."""
    paths = [os.path.join(directory, n) for n in names]
    for p in paths:
        if not os.access(p, os.X_OK):
            print(f"no {os.path.basename(p)} at {p} (build it, or set RX_BIN_DIR)", flush=True)
            sys.exit(1)
    return paths


def run_swept(argv, prefix=None, keep=False, settle=0.3):
    """Runs the lab; afterwards (also after Ctrl-C or SIGTERM) sweeps namespaces PREFIX-*, their
    processes and /etc/netns entries, and /tmp/PREFIX-* unless `keep`. Exits 130 when
    interrupted, as the lab's own cleanup then ran too."""
    proc = subprocess.Popen(argv, cwd=ROOT, env=child_env())
    interrupted = []

    def forward(signum, _frame):
        interrupted.append(signum)
        if signum == signal.SIGTERM and proc.poll() is None:
            proc.terminate()  # Ctrl-C reaches the child through the terminal's process group

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            try:
                rc = proc.wait()
                break
            except KeyboardInterrupt:
                continue
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if prefix:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the sweep runs to its end
            netns.sweep(prefix, settle=settle)
            if not keep:
                for name in os.listdir("/tmp"):
                    if name.startswith(prefix + "-"):
                        shutil.rmtree(os.path.join("/tmp", name), ignore_errors=True)
    return 130 if interrupted else rc


# ---- the labs ---------------------------------------------------------------------------------


def lab_fault(args):
    gone = missing(("ip", "nft", "openssl", "python3"))
    if os.getuid() != 0 or gone:
        return notice("fault lab", "ip/nft/openssl/python3", gone)
    directory = bin_dir(("reachability_exporter", "reachability-lab"), build="always")
    (exporter,) = binaries(directory, "reachability_exporter")
    lab_bin = os.environ.get("RXLAB_LAB_BIN") or binaries(directory, "reachability-lab")[0]
    if not os.access(lab_bin, os.X_OK):
        print(f"no reachability-lab at {lab_bin}", flush=True)
        return 1
    prefix = f"rxlab-{os.getpid()}"
    argv = module("faultlab", f"--prefix={prefix}", f"--exporter-bin={exporter}", f"--lab-bin={lab_bin}", *args)
    return run_swept(argv, prefix, keep="--keep" in args)


def lab_fleet(args):
    gone = missing(("ip", "nft", "prometheus", "promtool", "prometheus-alertmanager", "amtool", "python3"), ("yaml",))
    if os.getuid() != 0 or gone:
        return notice("fleet lab", "ip/nft/prometheus/promtool/prometheus-alertmanager/amtool/python3+PyYAML", gone)
    (exporter,) = binaries(bin_dir(("reachability_exporter",), build="never"), "reachability_exporter")
    prefix = f"rxfleet-{os.getpid()}"
    argv = bounded(
        "RXFLEET_TIMEOUT", 600, 15, module("fleetlab", f"--prefix={prefix}", f"--exporter-bin={exporter}", *args)
    )
    return run_swept(argv, prefix, keep="--keep" in args, settle=0.5)


def nft_lab(args, what, package, prefix, timeout_env, timeout):
    """A lab of namespaces and nft rules around the built exporter (root, ip, nft)."""
    gone = missing(("ip", "nft", "python3"))
    if os.getuid() != 0 or gone:
        return notice(what, "ip/nft/python3", gone)
    (exporter,) = binaries(bin_dir(("reachability_exporter",)), "reachability_exporter")
    prefix = f"{prefix}-{os.getpid()}"
    argv = bounded(timeout_env, timeout, 10, module(package, f"--prefix={prefix}", f"--exporter-bin={exporter}", *args))
    return run_swept(argv, prefix, keep="--keep" in args)


def lab_hops(args):
    return nft_lab(args, "hop lab", "hoplab", "rxhops", "RXHOPS_TIMEOUT", 180)


def lab_uplinks(args):
    return nft_lab(args, "uplink lab", "uplinklab", "rxup", "RXUPLINKS_TIMEOUT", 300)


def given_exporter(args, lab):
    """The exporter a lab runs, SwiftPM never invoked: the first argument, else RX_BIN_DIR's;
    (path, the other arguments), or (exit status, args) after saying why not."""
    if args and not args[0].startswith("-"):
        exporter = os.path.abspath(args[0])
        if not os.access(exporter, os.X_OK):
            print(f"no executable exporter at {exporter}", flush=True)
            return 1, args
        return exporter, args[1:]
    if os.environ.get("RXLAB_BIN_DIR") or os.environ.get("RX_BIN_DIR"):
        (exporter,) = binaries(bin_dir(("reachability_exporter",), build="never"), "reachability_exporter")
        return exporter, args
    print(f"usage: scripts/lab {lab} BINARY [--only ROW] [--jobs N] [--keep] (or RX_BIN_DIR=DIR)", flush=True)
    return 64, args


def lab_truth(args):
    """`scripts/lab truth BINARY [--only ROW] [--jobs N] [--keep]`: the binary is given (or found
    in RX_BIN_DIR); SwiftPM is never invoked. Bound: RXTRUTH_TIMEOUT (360 s)."""
    gone = missing(("ip", "nft", "dnsmasq", "conntrack", "openssl", "python3"))
    if os.getuid() != 0 or gone:
        return notice("truth lab", "ip/nft/dnsmasq/conntrack/openssl/python3", gone)
    exporter, args = given_exporter(args, "truth")
    if isinstance(exporter, int):
        return exporter
    prefix = f"rxtruth-{os.getpid()}"
    argv = bounded(
        "RXTRUTH_TIMEOUT", 360, 10, module("truthlab", f"--prefix={prefix}", f"--exporter-bin={exporter}", *args)
    )
    return run_swept(argv, prefix, keep="--keep" in args)


def lab_captive(args):
    """`scripts/lab captive [BINARY] [--only ROW] [--jobs N] [--keep] [--network-only]`: the binary
    is given (or found in RX_BIN_DIR) and copied before it runs; SwiftPM is never invoked;
    --network-only needs none. Bound: RXCAPTIVE_TIMEOUT (300 s)."""
    tools = ("ip", "nft", "dnsmasq", "conntrack", "nginx", "busybox", "dhclient", "openssl", "python3")
    gone = missing(tools)
    if os.getuid() != 0 or gone:
        return notice("captive lab", "ip/nft/dnsmasq/conntrack/nginx/busybox/dhclient/openssl/python3", gone)
    exporter, args = ("none", args) if "--network-only" in args else given_exporter(args, "captive")
    if isinstance(exporter, int):
        return exporter
    prefix = f"rxcap-{os.getpid()}"
    argv = bounded(
        "RXCAPTIVE_TIMEOUT", 300, 10, module("captivelab", f"--prefix={prefix}", f"--exporter-bin={exporter}", *args)
    )
    return run_swept(argv, prefix, keep="--keep" in args)


def lab_blackbox_side_by_side(args):
    """`scripts/lab blackbox-side-by-side`: /probe against Debian's blackbox_exporter, side by side.
    Bound: RXBB_TIMEOUT (240 s)."""
    tools = ("ip", "nft", "nginx", "unbound", "unbound-checkconf", "prometheus", "promtool",
             "prometheus-blackbox-exporter", "openssl", "python3")  # fmt: skip
    gone = missing(tools)
    if os.getuid() != 0 or gone:
        return notice(
            "blackbox side-by-side lab",
            "ip/nft/nginx/unbound/prometheus/promtool/prometheus-blackbox-exporter/openssl/python3 (Debian packages "
            "nftables nginx unbound prometheus prometheus-blackbox-exporter openssl, installed under a policy-rc.d "
            "that exits 101)",
            gone,
        )
    (exporter,) = binaries(bin_dir(("reachability_exporter",)), "reachability_exporter")
    prefix = f"rxbb-{os.getpid()}"
    argv = bounded(
        "RXBB_TIMEOUT", 240, 10, module("blackboxlab", f"--prefix={prefix}", f"--exporter-bin={exporter}", *args)
    )
    return run_swept(argv, prefix, keep="--keep" in args)


def lab_prometheus(args):
    directory = bin_dir(("reachability_exporter",))
    binaries(directory, "reachability_exporter")
    argv = bounded("PROOF_TIMEOUT", 300, 10, ["bash", os.path.join(HERE, "promproof", "proof.sh"), *args])
    return subprocess.run(argv, cwd=ROOT, env=child_env(RX_BIN_DIR=directory)).returncode


def lab_backfill(args):
    if missing(("promtool", "prometheus")):
        print("backfill proof: needs prometheus and promtool", file=sys.stderr)
        return 1
    (exporter,) = binaries(bin_dir(("reachability_exporter",), build="never"), "reachability_exporter")
    argv = bounded("BACKFILL_TIMEOUT", 120, 10, module("backfill", exporter, *args))
    return subprocess.run(argv, cwd=ROOT, env=child_env()).returncode


def status_page_ready(what):
    """The status page proofs' binaries directory, after installing chromium, html5lib and nginx
    (before anything runs in an offline namespace); None, after a NOTICE, when not root."""
    # The page is rendered in a network namespace with only loopback, which needs root.
    if os.getuid() != 0 or not shutil.which("ip"):
        print(
            f"NOTICE: {what} NOT RUN (needs root and ip for a loopback-only network namespace; uid {os.getuid()})",
            flush=True,
        )
        return None
    # Installs first (package registries), before anything runs in the offline namespace.
    apt = "apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends"
    if not shutil.which("chromium"):
        subprocess.run(["sh", "-c", f"{apt} chromium >/dev/null"], check=False)
    if not shutil.which("nginx"):
        # Debian's nginx ships a service: a policy-rc.d keeps apt from starting it on the host.
        policy = "/usr/sbin/policy-rc.d"
        made = not os.path.exists(policy)
        if made:
            with open(policy, "w") as f:
                f.write("#!/bin/sh\nexit 101\n")
            os.chmod(policy, 0o755)
        try:
            subprocess.run(["sh", "-c", f"{apt} nginx >/dev/null"], check=False)
        finally:
            if made:
                os.remove(policy)
    if missing((), ("html5lib",)):
        subprocess.run(
            [
                "sh",
                "-c",
                f"{sys.executable} -m pip install -q html5lib >/dev/null 2>&1 || "
                f"{{ {apt} python3-html5lib >/dev/null; }}",
            ],
            check=False,
        )
    return bin_dir(("reachability_exporter", "history_bench"))


def status_page_prefix(directory, args):
    """The second part: the page behind nginx at a prefix, in a loopback-only namespace too."""
    (exporter,) = binaries(directory, "reachability_exporter")
    argv = bounded("PROOF_TIMEOUT", 180, 10, module("statuspage.prefix", exporter, *args))
    return netns.isolated(argv, f"rxprefix-{os.getpid()}", env=child_env(RX_BIN_DIR=directory))


def lab_status_page(args):
    """Both parts: a month of history (statuspage/proof.sh), then behind nginx at a prefix."""
    directory = status_page_ready("status page proof")
    if directory is None:
        return 0
    # Everything (exporter, proxy, Chromium) runs in a namespace made for this run with only a
    # loopback interface, so not even the browser's own background services can leave the
    # machine; the proxy and resolver rules stay as a second line.
    argv = bounded("PROOF_TIMEOUT", 180, 10, ["bash", os.path.join(HERE, "statuspage", "proof.sh"), *args])
    history = netns.isolated(argv, f"rxproof-{os.getpid()}", env=child_env(RX_BIN_DIR=directory))
    behind_proxy = status_page_prefix(directory, [])
    return history or behind_proxy


def lab_status_page_prefix(args):
    directory = status_page_ready("status page prefix proof")
    return 0 if directory is None else status_page_prefix(directory, args)


def with_exporter(name, python_flags=()):
    def run(args):
        (exporter,) = binaries(bin_dir(("reachability_exporter",)), "reachability_exporter")
        argv = module(name, exporter, *args, python_flags=python_flags)
        return subprocess.run(argv, cwd=ROOT, env=child_env()).returncode

    return run


def lab_adversarial(args):
    if "--list" in args:  # no binary needed
        return subprocess.run(module("adversarial", "--list"), cwd=ROOT, env=child_env()).returncode
    return with_exporter("adversarial")(args)


def lab_protobuf(args):
    return subprocess.run(module("protobuf_reference", *args), env=child_env()).returncode


def lab_fresh_system(args):
    return subprocess.run(["bash", os.path.join(HERE, "freshsystem.sh"), *args], cwd=ROOT, env=child_env()).returncode


LABS = {
    "fault": (lab_fault, "the fault lab: real faults in namespaces, a table of verdicts (rxlab/faultlab)"),
    "hops": (lab_hops, "the hop lab: a chain of routers cut at each link, the last hop that answers (rxlab/hoplab)"),
    "uplinks": (
        lab_uplinks,
        "the uplink lab: a policy-routed metered backup, its bytes against nftables, budget, prefer (rxlab/uplinklab)",
    ),
    "truth": (
        lab_truth,
        "the truth lab: issue #42, never a false full; seven faults, detection times (rxlab/truthlab)",
    ),
    "captive": (
        lab_captive,
        "the captive lab: issue #43, RFC 8908 APIs from DHCPv4/v6 and RA, PREF64, hostile APIs (rxlab/captivelab)",
    ),
    "fleet": (lab_fleet, "the fleet lab: three sites remote-write to a central Prometheus, one cut (rxlab/fleetlab)"),
    "blackbox-side-by-side": (
        lab_blackbox_side_by_side,
        "the blackbox lab: /probe against Debian's blackbox_exporter, same modules and targets (rxlab/blackboxlab)",
    ),
    "prometheus": (lab_prometheus, "the Prometheus proof: dashboards, rules and deploy files, live (rxlab/promproof)"),
    "backfill": (lab_backfill, "the history backfill proof: history export into a Prometheus TSDB (rxlab/backfill.py)"),
    "status-page": (
        lab_status_page,
        "the status page proof: a month of history in headless Chromium, then behind nginx at a prefix (rxlab/statuspage)",
    ),
    "status-page-prefix": (
        lab_status_page_prefix,
        "its second part alone: the page behind nginx at /rx/, /strip/, /tools/rx/ (rxlab/statuspage/prefix.py)",
    ),
    "web-security": (
        with_exporter("websecurity", ("-W", "ignore::DeprecationWarning")),
        "the web security proof: TLS, basic auth, client certificates, slow clients (rxlab/websecurity.py)",
    ),
    "adversarial": (lab_adversarial, "the adversarial suite: each attack of the hostile review (rxlab/adversarial)"),
    "native-histogram": (
        with_exporter("nativehistogram"),
        "the native histogram proof: two Prometheus, native and classic (rxlab/nativehistogram.py)",
    ),
    "protobuf": (
        lab_protobuf,
        "the protobuf reference encoder: decode a scrape, golden fixtures (rxlab/protobuf_reference.py)",
    ),
    "fresh-system": (lab_fresh_system, "the release artifacts on a fresh Debian 12 (rxlab/freshsystem.sh)"),
}


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__ + "\n\nlabs:\n" + "\n".join(f"  {n:<22} {summary}" for n, (_, summary) in LABS.items()))
        print("\n`scripts/lab NAME --help` shows a lab's own options.")
        return 0 if argv else 64
    if argv[0] == "--list":
        for name, (_, summary) in LABS.items():
            print(f"{name:<22} {summary}")
        return 0
    if argv[0] not in LABS:
        print(f"scripts/lab: unknown lab {argv[0]!r}; scripts/lab --list names them", file=sys.stderr)
        return 2
    os.environ["REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS"] = "1"
    if "-h" in argv[1:] or "--help" in argv[1:]:
        return lab_help(argv[0])
    return LABS[argv[0]][0](argv[1:])


# What `scripts/lab NAME --help` shows: the lab's own options or header, without building or
# checking anything first.
HELP = {
    "fault": ("module", "faultlab"),
    "hops": ("module", "hoplab"),
    "uplinks": ("module", "uplinklab"),
    "truth": ("module", "truthlab"),
    "captive": ("module", "captivelab"),
    "fleet": ("module", "fleetlab"),
    "blackbox-side-by-side": ("module", "blackboxlab"),
    "adversarial": ("module", "adversarial"),
    "prometheus": ("header", "promproof/proof.sh"),
    "status-page": ("header", "statuspage/proof.sh"),
    "status-page-prefix": ("doc", "statuspage.prefix"),
    "fresh-system": ("header", "freshsystem.sh"),
    "backfill": ("doc", "backfill"),
    "web-security": ("doc", "websecurity"),
    "native-histogram": ("doc", "nativehistogram"),
    "protobuf": ("doc", "protobuf_reference"),
}


def lab_help(name):
    kind, what = HELP[name]
    if kind == "module":
        return subprocess.run(module(what, "--help"), cwd=ROOT, env=child_env()).returncode
    if kind == "doc":
        code = f"import importlib; print(importlib.import_module('rxlab.{what}').__doc__)"
        return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=child_env()).returncode
    with open(os.path.join(HERE, what)) as f:
        lines = f.read().splitlines()[1:]
    for line in lines:
        if not line.startswith("#"):
            break
        print(line[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
