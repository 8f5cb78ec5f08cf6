"""Standing adversarial suite (issue #27): replays each attack of the hostile review against a
built binary and asserts that it holds. Loopback only.

usage: scripts/lab adversarial [--only NAME[,NAME]] [--list] [--no-netns] [--jobs N]

Each case prints `PASS name: detail` or `FAIL name: detail` with what it measured; the last line
is `adversarial: N passed, N failed`, and the exit status is 1 if any case failed.

Traffic rule: every exporter started here probes loopback listeners of this script only
(--probe.trust-local-targets), listens on 127.0.0.1:0 and runs with
REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1. As root (when `ip` exists) the
suite also re-runs itself in a fresh network namespace holding nothing but loopback, so not
even a misbehaving binary can reach another address; --no-netns turns that off.

Cases (the issue's item in brackets):
  lifecycle [1]          POST /-/reload off by default, POST only, no cross-site, auth, rate-limited rounds
  history_corrupt [2]    a probe duration of 1e18 in the history does not crash the status page
  webconfig_truncate [3] an emptied or cut web config keeps TLS and the users; empty at start: 78
  auth_flood [4]         a wrong-password flood from one address does not lock out the scraper
  auth_flood_many [4]    a flood from 20 addresses at bcrypt cost 12 does not stall cached scrapes
  auth_reload_cache [4]  a web-config reload that keeps the users keeps the success cache
  auth_timing [9]        an unknown user costs as much as a known one with a wrong password
  pipelining [5]         unread pipelined requests are not answered into the socket buffers
                         (asserted on the exporter's send queues; the attacker's own receive
                         queue, ~128 KiB on loopback whatever the server does, is only reported)
  fd_limit [6]           a too-low descriptor limit exits cleanly; a flood cannot starve the probes
  fifo_config [7]        a FIFO as --config.file is refused, and a FIFO on reload cannot wedge shutdown
  clock_back [8]         history dated in the future still gives availability and coverage
  check_escape [10]      `check` escapes control characters from the network
  history_lock [11]      a second exporter on the same history directory is refused
  content_length [12]    conflicting or signed Content-Length is a 400
  accept_encoding [13]   an explicit gzip;q=0 wins over *
  expect_continue [14]   Expect: 100-continue gets an interim 100
  transitions [14]       a reason change within one state is not a transition
  tls12_ciphers [14]     no static-RSA or CBC suites in TLS 1.2 by default
  empty_probe_reload [14] a reload to an empty probe list is refused, no public default probes
                         (the old binary holds here too, because of the variable above)

Second review (issue #41), its finding in brackets:
  caps_mark [1]          a user running the cap_net_raw+ep binary cannot send with a firewall mark
                         (an nft counter in a namespace of the case's own; root marks: the control)
  redirect_credentials [2] Authorization and Cookie do not follow a redirect to another origin
  history_symlink [3]    a symlink as the newest history file is not written through
  history_lock_rm [4]    a removed lock file does not let a second exporter onto the directory
  auth_flood_blocks [5]  a flood from 20 addresses does not lock out an uncached scraper
                         (the old binary holds here: its bounds let the scraper in at once)
  reload_workers [6]     40 reloads waiting for a slow round leave /metrics served, and coalesce
  alias_bytes [7]        YAML aliases are bounded in bytes; a label value has a length bound
  trickle_body [8]       a trickled body does not re-parse its 15 KB head (scrape latency, CPU)
  notify_blocked [9]     an unread, full NOTIFY_SOCKET does not hold up SIGTERM
  secrets_in_errors [10] URL userinfo and a scalar basic_auth_users are in no error, log or body
  uplink_settings_typo [11] uplink_settings naming no uplink is refused (exit 78 naming it)

/probe (issue #47):
  probe_params           hostile parameters get 4xx/5xx (no raw ESC or NUL), debug shows no secret
  probe_flood            200 slow probes: --modules.max-concurrent run, the rest 503 at once; /metrics and rounds go on
  probe_fair             one client's flood holds its own places only: the scraper's probe still runs
  probe_fifo             a FIFO as --modules.file: exit 78 at once with the reason

The cases run concurrently: the floods (HEAVY) one at a time, the others beside them; the
whole suite takes 35-45 s on 2 cores.
"""

import argparse
import concurrent.futures
import os
import shutil
import sys
import threading
import time

from .. import netns
from . import cases_auth as auth
from . import cases_config as config
from . import cases_history as history
from . import cases_http as web
from . import cases_probe as probe
from . import cases_secrets as secrets
from . import cases_state as state
from . import cases_waits as waits
from . import harness
from .context import Ctx

SUITE_DEADLINE = 110.0


CASES = {
    "lifecycle": state.case_lifecycle,
    "history_corrupt": history.case_history_corrupt,
    "webconfig_truncate": state.case_webconfig_truncate,
    "auth_flood": auth.case_auth_flood,
    "auth_flood_many": auth.case_auth_flood_many,
    "auth_reload_cache": auth.case_auth_reload_cache,
    "auth_timing": auth.case_auth_timing,
    "pipelining": web.case_pipelining,
    "fd_limit": web.case_fd_limit,
    "fifo_config": state.case_fifo_config,
    "clock_back": history.case_clock_back,
    "check_escape": state.case_check_escape,
    "history_lock": history.case_history_lock,
    "content_length": web.case_content_length,
    "accept_encoding": web.case_accept_encoding,
    "expect_continue": web.case_expect_continue,
    "transitions": state.case_transitions,
    "tls12_ciphers": web.case_tls12_ciphers,
    "empty_probe_reload": state.case_empty_probe_reload,
    # Second review (issue #41)
    "caps_mark": config.case_caps_mark,
    "redirect_credentials": secrets.case_redirect_credentials,
    "history_symlink": history.case_history_symlink,
    "history_lock_rm": history.case_history_lock_rm,
    "auth_flood_blocks": auth.case_auth_flood_blocks,
    "reload_workers": waits.case_reload_workers,
    "alias_bytes": config.case_alias_bytes,
    "trickle_body": waits.case_trickle_body,
    "notify_blocked": waits.case_notify_blocked,
    "secrets_in_errors": secrets.case_secrets_in_errors,
    "uplink_settings_typo": config.case_uplink_settings_typo,
    # /probe (issue #47)
    "probe_params": probe.case_probe_params,
    "probe_flood": probe.case_probe_flood,
    "probe_fair": probe.case_probe_fair,
    "probe_fifo": probe.case_probe_fifo,
}

# Cases that load the machine (floods, bcrypt storms): run one at a time.
HEAVY = {
    "fd_limit",
    "pipelining",
    "auth_flood",
    "auth_flood_many",
    "auth_flood_blocks",
    "trickle_body",
    "probe_flood",
    "probe_fair",
}


# Runner

_print_lock = threading.Lock()


def say(line):
    with _print_lock:
        print(line, flush=True)


_live = set()


def run_case(binary, name):
    c = Ctx(binary, name)
    _live.add(c)
    t = time.monotonic()
    try:
        CASES[name](c)
        error = None
    except Exception as err:  # a case that breaks is a failure, with its reason
        error = f"{type(err).__name__}: {err}"
    finally:
        c.close()
        _live.discard(c)
    ok = error is None and not c.failed and c.checks
    detail = c.detail() + (f"; error {error}" if error else "")
    say(f"{'PASS' if ok else 'FAIL'} {name}: {detail} ({time.monotonic() - t:.1f} s)")
    return bool(ok)


def in_netns():
    """Re-runs this suite in a network namespace of its own with only loopback, when possible
    (root and `ip`); None when it cannot, or runs there already."""
    if os.environ.get(netns.ISOLATED_ENV) or os.geteuid() != 0 or not shutil.which("ip"):
        return None
    return netns.isolated([sys.executable, "-m", "rxlab.adversarial"] + sys.argv[1:], f"rxadv-{os.getpid()}")


def main():
    ap = argparse.ArgumentParser(prog="scripts/lab adversarial", description=__doc__.split("\n")[0])
    ap.add_argument("binary", nargs="?")
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--no-netns", action="store_true", help="do not re-run in a loopback-only network namespace")
    ap.add_argument("--jobs", type=int, default=6, help="cases run at once (default 6: 1 flood + 5 others)")
    args = ap.parse_args()
    if args.list:
        for name in CASES:
            print(name)
        return 0
    if not args.binary:
        ap.error("the exporter binary is required")
    names = list(CASES)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in CASES]
        if unknown:
            ap.error(f"unknown case(s): {', '.join(unknown)}; --list shows them")
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        ap.error(f"{binary} is not an executable")
    if not args.no_netns:
        rc = in_netns()
        if rc is not None:
            return rc

    soft, hard = harness_nofile()
    if os.environ.get(netns.ISOLATED_ENV):
        say("# in a network namespace of its own (loopback only)")
    start = time.monotonic()
    passed = failed = 0
    # The floods run one after another in a lane of their own, the rest beside them.
    heavy = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    light = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs - 1))
    futures = {(heavy if n in HEAVY else light).submit(run_case, binary, n): n for n in names}
    try:
        for f in concurrent.futures.as_completed(futures, timeout=SUITE_DEADLINE):
            if f.result():
                passed += 1
            else:
                failed += 1
    except concurrent.futures.TimeoutError:
        for f, n in futures.items():
            if not f.done():
                failed += 1
                say(f"FAIL {n}: not finished within the suite's {SUITE_DEADLINE:.0f} s")
        harness.kill_all()
        for c in list(_live):
            shutil.rmtree(c.tmp, ignore_errors=True)
        say(f"adversarial: {passed} passed, {failed} failed")
        os._exit(1)
    heavy.shutdown()
    light.shutdown()
    harness.kill_all()
    with _print_lock:
        print(f"# {len(names)} cases in {time.monotonic() - start:.1f} s (open files {soft}/{hard})", flush=True)
        print(f"adversarial: {passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


def harness_nofile():
    """The floods need a few thousand descriptors in this process."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 8192 if hard == resource.RLIM_INFINITY else min(8192, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


if __name__ == "__main__":
    sys.exit(main())
