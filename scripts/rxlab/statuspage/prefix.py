"""The status page and metrics behind nginx at a path prefix, in headless Chromium, nothing loaded
from outside: `scripts/lab status-page-prefix [--break=absolute|root]`, and the second part of
`scripts/lab status-page` (python3 -m rxlab.statuspage.prefix EXPORTER [--break=...] underneath;
the entry runs it in a network namespace with only loopback, bound by PROOF_TIMEOUT, default 180 s).

Debian's nginx, its configuration written to a temp dir, runs in the foreground (daemon off),
listens on 127.0.0.1 only and is stopped by its PID. Behind it, three built exporters probing a
loopback TCP listener (REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1):

  /rx/        prefix passed on: `location /rx/ { proxy_pass http://127.0.0.1:A; }`, the exporter
              with --web.route-prefix=/rx
  /strip/     prefix stripped: `location /strip/ { proxy_pass http://127.0.0.1:B/; }`, the
              exporter at the root with --web.telemetry-path=/stats
  /tools/rx/  passed on to an exporter with --web.external-url=http://127.0.0.1:NGINX/tools/rx/
              (its path the prefix)

Chromium (driven over the DevTools protocol on a pipe) sends every request through the status page
proof's logging proxy, which forwards to nginx only. For each site it loads the status page (a
screenshot in .build/artifacts/status-page-prefix-NAME.png) and checks: every URL attribute, as
the browser resolves it against the page's URL, lies under the site's prefix, and the footer's
Metrics link goes to the telemetry path; each such URL fetched through nginx answers 200 (the
telemetry path: `promtool check metrics` clean, and /…/metrics a 404 where it moved to /stats);
each link clicked in the browser lands on the URL it resolved to with a 200, and the debug page's
Back link lands on the prefix's status page; the prefix without its slash redirects to the page;
paths outside the prefix are 404 at the passed-on exporters themselves; and every request the
proxy saw and the browser reported went to nginx under that prefix. A self-test: the page with
`./metrics` made `/metrics` (Page.setDocumentContent, same URL) must be caught by the same check.

--break=absolute  nginx rewrites the /rx/ page's `./metrics` into `/metrics` (sub_filter): the
                  proof must fail, naming the link that leaves the prefix.
--break=root      /rx/ is passed on to an exporter at the root (no prefix flag): must fail.
"""

import argparse
import contextlib
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from urllib.parse import urljoin, urlsplit

from ..procs import stop_all
from ..util import ROOT, Listener, free_port, read_from, size_of, tail, wait_until
from .__main__ import URL_ATTRS, check_references
from .browser import Browser

NOISE = ("[", "Fontconfig", "libva", "/usr/bin/chromium:")  # Chromium's chatter in its log
FAVICON = "/favicon.ico"


class Site:
    def __init__(self, name, prefix, how, flags, telemetry="metrics", stripped=False, history=False):
        self.name, self.prefix, self.how, self.flags, self.history = name, prefix, how, flags, history
        self.telemetry, self.stripped = telemetry, stripped
        self.addr = self.listening = self.route = None


def sites_for(nginx_port, broken):
    rx_flags = [] if broken == "root" else ["--web.route-prefix=/rx"]
    return [
        Site("rx", "/rx/", "passed on", rx_flags, history=True),
        Site("strip", "/strip/", "stripped", ["--web.telemetry-path=/stats"], telemetry="stats", stripped=True),
        Site(
            "tools",
            "/tools/rx/",
            "passed on",
            [f"--web.external-url=http://127.0.0.1:{nginx_port}/tools/rx/"],
        ),
    ]


# ---- the processes -------------------------------------------------------------------------------


def start_exporter(exporter, site, target_port, tmp, procs):
    log = os.path.join(tmp, f"exporter-{site.name}.log")
    argv = [
        exporter,
        "--web.listen-address=127.0.0.1:0",
        "--no-path.monitor",
        "--probe.trust-local-targets",
        f"--probe.tcp=127.0.0.1:{target_port}",
        "--probe.interval=1s",
        "--probe.timeout=500ms",
        *site.flags,
    ]
    if site.history:
        argv.append(f"--history.dir={os.path.join(tmp, 'history')}")
    env = dict(os.environ, REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS="1")
    with open(log, "w") as f:
        procs.append(subprocess.Popen(argv, stderr=f, stdout=subprocess.DEVNULL, env=env))
    line = wait_until(lambda: re.search(r"msg=listening address=(\S+).*", read_from(log)), 30, step=0.1)
    if not line:
        raise RuntimeError(f"the {site.name} exporter did not start:\n{tail(log)}")
    site.addr = line.group(1)
    site.listening = " ".join(w for w in line.group(0).split() if w.startswith(("route_prefix=", "telemetry_path=")))
    site.route = re.search(r"route_prefix=(\S+)", line.group(0)).group(1)


NGINX_CONF = """\
# The status page prefix proof's nginx (scripts/rxlab/statuspage/prefix.py): foreground, loopback.
daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log notice;
events {{ worker_connections 64; }}
http {{
  access_log {tmp}/nginx-access.log;
  client_body_temp_path {tmp}/nginx-body;
  proxy_temp_path {tmp}/nginx-proxy;
  fastcgi_temp_path {tmp}/nginx-fastcgi;
  uwsgi_temp_path {tmp}/nginx-uwsgi;
  scgi_temp_path {tmp}/nginx-scgi;
  proxy_max_temp_file_size 0;
  server {{
    listen 127.0.0.1:{port};
    # The prefix passed on: the exporter sees /rx/... (and /rx itself, to answer its own redirect).
    location = /rx {{ proxy_pass http://127.0.0.1:{rx}; }}
    location /rx/ {{ proxy_pass http://127.0.0.1:{rx};{rx_extra} }}
    # The prefix stripped: the exporter at its root sees /... (nginx itself redirects /strip).
    location /strip/ {{ proxy_pass http://127.0.0.1:{strip}/; }}
    # Passed on, the prefix from --web.external-url.
    location = /tools/rx {{ proxy_pass http://127.0.0.1:{tools}; }}
    location /tools/rx/ {{ proxy_pass http://127.0.0.1:{tools}; }}
    location / {{ return 404; }}
  }}
}}
"""

# --break=absolute: the page as an exporter with an absolute link would serve it.
ABSOLUTE_LINK = """ proxy_set_header Accept-Encoding ""; sub_filter 'href="./metrics"' 'href="/metrics"';"""


def start_nginx(port, sites, tmp, broken, procs):
    by = {s.name: s.addr.rsplit(":", 1)[1] for s in sites}
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(tmp=tmp, port=port, rx_extra=ABSOLUTE_LINK if broken == "absolute" else "", **by))
    base = ["nginx", "-p", tmp + "/", "-e", os.path.join(tmp, "nginx-error.log"), "-c", conf]
    test = subprocess.run([*base, "-t"], capture_output=True, text=True, timeout=20)
    if test.returncode != 0:
        raise RuntimeError(f"nginx -t: {test.stderr}")
    procs.append(subprocess.Popen(base, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    if not wait_until(lambda: get(f"http://127.0.0.1:{port}/")[0] == 404, 10, step=0.1):
        raise RuntimeError(f"nginx did not answer:\n{tail(os.path.join(tmp, 'nginx-error.log'))}")
    version = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip().split("/")[-1]
    return version, conf


def start_proxy(nginx, tmp, procs):
    """The status page proof's logging proxy (statuspage/__main__.py), forwarding to nginx only."""
    port_file, log = os.path.join(tmp, "proxy.port"), os.path.join(tmp, "proxy-requests.txt")
    with open(os.path.join(tmp, "proxy.log"), "w") as err:
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "rxlab.statuspage", "proxy", port_file, log, nginx],
                stderr=err,
                stdout=subprocess.DEVNULL,
            )
        )
    if not wait_until(lambda: os.path.getsize(port_file) > 0, 10, step=0.1):
        raise RuntimeError("the logging proxy did not start")
    with open(port_file) as f:
        return f"127.0.0.1:{f.read().strip()}", log


# ---- HTTP, from this process (not through the browser's proxy) ----------------------------------


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())


def get(url):
    """(status, headers, body) of one GET, redirects not followed; (None, {}, b"") when no answer."""
    try:
        with OPENER.open(url, timeout=5) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()
    except OSError:
        return None, {}, b""


def follow(url, hops=5):
    """The redirect chain from `url`: [(url, status, Location)], the last one not a redirect."""
    chain = []
    for _ in range(hops):
        status, headers, _ = get(url)
        location = headers.get("Location") if status in (301, 302, 303, 307, 308) else None
        chain.append((url, status, location))
        if not location:
            break
        url = urljoin(url, location)
    return chain


def ready(page):
    """The page after the first round, with the last day of history read when there is one."""
    return b'<tr class="probe"' in page and b"Reading the last day" not in page


def promtool(body):
    p = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, timeout=20)
    return p.returncode, (p.stdout + p.stderr).decode(errors="replace").strip()


# ---- the checks, per site ------------------------------------------------------------------------


class Proof:
    def __init__(self, browser, origin, proxy_log, artifacts):
        self.browser, self.origin, self.proxy_log, self.artifacts = browser, origin, proxy_log, artifacts
        self.failures = []
        self.counts = {
            "links": 0,
            "followed": 0,
            "fetched": 0,
            "proxy": 0,
            "browser": 0,
            "favicon": 0,
            "outside": 0,
            "refused": set(),
        }

    def fail(self, site, text):
        self.failures.append(f"{site.prefix}: {text}")
        print(f"  FAIL: {text}", flush=True)

    def under(self, site, url):
        """Whether `url` (fragment aside) lies under the site's prefix on nginx."""
        return url.split("#", 1)[0].startswith(self.origin + site.prefix)

    def site(self, site):
        page_url = self.origin + site.prefix
        telemetry_url = page_url + site.telemetry
        flags = " ".join(site.flags) or "no prefix flag"
        history = ", 2 days of history" if site.history else ""
        print(f"== {site.prefix}: {site.how} to the exporter on {site.addr} ({flags}{history}; {site.listening})")
        proxy_mark, browser_mark = size_of(self.proxy_log), self.browser.mark()

        # The status page, as the browser loads it.
        doc = self.browser.navigate(page_url)
        if doc["status"] != 200 or doc["url"] != page_url or 'id="verdict"' not in doc["html"]:
            self.fail(site, f"the status page at {page_url}: {doc.get('error') or doc['status']} at {doc['url']}")
            self.requests(site, proxy_mark, browser_mark)
            return
        probes = doc["html"].count('<tr class="probe"')
        days = doc["html"].count('<g class="day"')
        shot = os.path.join(self.artifacts, f"status-page-prefix-{site.name}.png")
        size = self.browser.screenshot(shot)
        print(
            f"  page {page_url}: 200, {probes} probe row(s), {days} day bar(s); screenshot {os.path.relpath(shot, ROOT)} ({size} bytes)"
        )

        # Every URL attribute, resolved by the browser against the page's URL.
        links = self.links(site, page_url)
        metrics = [x for x in links if x["tag"] == "a" and x["text"] == "Metrics"]
        if [x["resolved"] for x in metrics] != [telemetry_url]:
            self.fail(site, f"the Metrics link goes to {[x['resolved'] for x in metrics]}, not {telemetry_url}")

        # The served HTML itself: relative references only, no script, image or stylesheet.
        _, _, body = get(page_url)
        with contextlib.redirect_stdout(io.StringIO()) as said:
            failures = check_references(body.decode(errors="replace"))
        print(f"  served HTML: {said.getvalue().strip() or 'see below'}")
        for f in failures:
            self.fail(site, f)

        # Each URL fetched through nginx; the metrics parsed.
        targets = sorted({x["resolved"].split("#", 1)[0] for x in links})
        answers = []
        for url in targets:
            status, _, body = get(url)
            self.counts["fetched"] += 1
            answers.append(f"{url[len(self.origin) :]} {status}")
            if status != 200:
                self.fail(site, f"{url} answered {status} through nginx")
            elif url == telemetry_url:
                rc, out = promtool(body)
                families = body.count(b"\n# HELP ") + body.startswith(b"# HELP ")
                if rc != 0 or not body.startswith(b"# HELP "):
                    self.fail(site, f"{url}: promtool check metrics exited {rc}: {out[:300]}")
                else:
                    answers[-1] += f" (promtool check metrics clean, {families} families)"
        print(f"  fetched through nginx: {'; '.join(answers)}")
        moved = page_url + "metrics"
        if site.telemetry != "metrics":
            status, _, _ = get(moved)
            print(f"  {moved[len(self.origin) :]} with the telemetry at /{site.telemetry}: {status}")
            if status != 404:
                self.fail(site, f"{moved} answered {status}, not 404, with --web.telemetry-path=/{site.telemetry}")

        # Each link clicked in the browser; from the debug page, Back.
        self.follow_links(site, page_url, links)

        # The prefix without its slash; outside the prefix.
        self.redirects(site, page_url)
        self.outside(site)
        self.requests(site, proxy_mark, browser_mark)

    def links(self, site, page_url, quiet=False):
        found = self.browser.links(URL_ATTRS)
        links = found["links"]
        if found["base"] != page_url:
            self.fail(site, f"the document's base URI is {found['base']}, not {page_url}")
        outside = [x for x in links if not self.under(site, x["resolved"])]
        if quiet:
            return outside
        self.counts["links"] += len(links)
        shown = "; ".join(f"{x['raw']} → {x['resolved'][len(self.origin) :]}" for x in links)
        print(f"  {len(links)} URL attributes, as the browser resolves them: {shown}")
        for x in outside:
            self.fail(
                site,
                f"<{x['tag']} {x['attr']}={x['raw']!r}> ({x['text']}) resolves to {x['resolved']}, outside {site.prefix}",
            )
        if not any("debug/probe" in x["raw"] for x in links):
            self.fail(site, "no debug probe link on the page")
        return links

    def follow_links(self, site, page_url, links):
        anchors = [x for x in links if x["tag"] == "a"]
        followed = []
        for i, x in enumerate(anchors):
            if i:
                self.browser.navigate(page_url)
            doc = self.browser.click(f"document.querySelectorAll('a[href]')[{i}]")
            self.counts["followed"] += 1
            followed.append(f"{x['text'] or x['raw']} → {doc['url'][len(self.origin) :]} {doc['status']}")
            if doc["url"] != x["resolved"] or doc["status"] != 200:
                self.fail(site, f"clicking {x['raw']!r} landed on {doc['url']} with {doc['status']}")
                continue
            if x["resolved"] == page_url + site.telemetry and not doc["text"].startswith("# HELP "):
                self.fail(site, f"the Metrics link's page does not start with # HELP: {doc['text'][:60]!r}")
            if "debug/probe" in x["raw"]:
                if '<pre id="debug">' not in doc["html"]:
                    self.fail(site, f"{doc['url']} is not the debug page")
                for y in self.links(site, doc["url"], quiet=True):
                    self.fail(site, f"on the debug page, {y['raw']!r} resolves to {y['resolved']}")
                back = self.browser.click(
                    "[...document.querySelectorAll('a[href]')].find(a => a.textContent.trim() === 'Back')"
                )
                self.counts["followed"] += 1
                followed.append(f"its Back → {back['url'][len(self.origin) :]} {back['status']}")
                if back["url"] != page_url or back["status"] != 200 or 'id="verdict"' not in back["html"]:
                    self.fail(
                        site, f"Back from the debug page landed on {back['url']} ({back['status']}), not {page_url}"
                    )
        print(f"  clicked in the browser: {'; '.join(followed)}")

    def redirects(self, site, page_url):
        bare = page_url.rstrip("/")
        chain = follow(bare)
        shown = " → ".join(
            f"{u[len(self.origin) :]} {s}" + (f" (Location: {loc})" if loc else "") for u, s, loc in chain
        )
        print(f"  without the slash: {shown}")
        if chain[-1][0] != page_url or chain[-1][1] != 200:
            self.fail(site, f"{bare} does not lead to {page_url}: {shown}")
        if not site.stripped and chain[0][2] != site.prefix.rstrip("/").rsplit("/", 1)[1] + "/":
            self.fail(site, f"{bare}: the exporter's own relative redirect expected, got {chain[0][1]} {chain[0][2]}")

    def outside(self, site):
        """Paths outside the prefix: 404 on a passed-on exporter itself (its / redirects to the
        prefix); at the stripped one's root, /metrics moved to the telemetry path."""
        answers, expected = [], {}
        direct = f"http://{site.addr}"
        if site.stripped:
            expected = {"/metrics": 404, f"/{site.telemetry}": 200}
        else:
            expected = {"/metrics": 404, "/-/healthy": 404, "/debug/probe?name=x": 404, "/other/": 404}
            expected[site.prefix + site.telemetry] = 200
            status, headers, _ = get(direct + "/")
            answers.append(f"/ {status} (Location: {headers.get('Location')})")
            if status != 302 or headers.get("Location") != "." + site.prefix:
                self.fail(
                    site, f"/ on the exporter answered {status} {headers.get('Location')}, not 302 .{site.prefix}"
                )
        for path, want in expected.items():
            status, _, _ = get(direct + path)
            answers.append(f"{path} {status}")
            if status != want:
                self.fail(site, f"{direct}{path} answered {status}, not {want}")
        print(f"  the exporter directly: {'; '.join(answers)}")

    def requests(self, site, proxy_mark, browser_mark):
        """Every request the proxy saw and the browser reported went to nginx under the prefix."""
        lines = [line.split() for line in read_from(self.proxy_log, proxy_mark).splitlines() if line.strip()]
        host = urlsplit(self.origin).netloc
        # The one request outside a prefix no page can prevent: the HTML pages declare an empty
        # icon, but a plain-text answer clicked in the browser (metrics, health) cannot;
        # the browser's own GET of /favicon.ico at the origin's root (once per browser), counted apart.
        icon = [r for r in lines if r[0] == "GET" and r[1] == self.origin + FAVICON]
        lines = [r for r in lines if r not in icon]
        to_nginx = [r for r in lines if urlsplit(r[1]).netloc == host]
        refused = {f"{r[0]} {urlsplit(r[1]).netloc or r[1]}" for r in lines if urlsplit(r[1]).netloc != host}
        from_page = [r for r in lines if r[2] != "-" and urlsplit(r[1]).netloc != host]
        reported = [u for u in self.browser.requests(browser_mark) if u not in ("about:blank", self.origin + FAVICON)]
        self.counts["favicon"] += len(icon)
        self.counts["proxy"] += len(to_nginx)
        self.counts["browser"] += len(reported)
        self.counts["refused"] |= refused
        paths = sorted({urlsplit(r[1]).path for r in to_nginx})
        print(
            f"  requests: the proxy saw {len(to_nginx)} to nginx ({', '.join(paths)}), the browser reported "
            f"{len(reported)}; refused, the browser's own: {', '.join(sorted(refused)) or 'none'}"
            + (
                f"; and the browser's own {FAVICON} (for a plain-text page; the HTML pages declare an empty icon)"
                if icon
                else ""
            )
        )
        if not to_nginx:
            self.fail(site, "the proxy saw no request to nginx: the browser did not use it, so nothing was proven")
        for r in to_nginx:
            if r[0] != "GET" or not self.under(site, r[1]):
                self.counts["outside"] += 1
                self.fail(site, f"the proxy saw {r[0]} {r[1]} (Referer {r[2]}), outside {site.prefix}")
        for r in from_page:
            self.counts["outside"] += 1
            self.fail(site, f"a request from the page to another host: {' '.join(r)}")
        for u in reported:
            if not self.under(site, u):
                self.counts["outside"] += 1
                self.fail(site, f"the browser requested {u}, outside {site.prefix}")

    def self_test(self, site):
        """The same link check must catch an absolute link: the page with ./metrics made /metrics."""
        page_url = self.origin + site.prefix
        doc = self.browser.navigate(page_url)
        patched = doc["html"].replace('href="./metrics"', 'href="/metrics"', 1)
        self.browser.replace_document(patched)
        outside = self.links(site, page_url, quiet=True)
        caught = [f"{x['raw']} → {x['resolved']}" for x in outside]
        print(
            f"== self-test: {site.prefix}'s page with ./metrics made /metrics (same URL): caught {caught or 'nothing'}"
        )
        if caught != [f"/metrics → {self.origin}/metrics"]:
            self.failures.append("self-test: the link check did not catch exactly the absolute /metrics link")


def stopped(*_):
    """A bound's SIGTERM: exit through main's cleanup, which stops what it started. coreutils
    timeout sends it twice (to this process, then to its group): the second must not cut the
    cleanup short."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(124)


def main(argv):
    parser = argparse.ArgumentParser(prog="scripts/lab status-page-prefix", description=__doc__.split("\n\n")[0])
    parser.add_argument("exporter")
    parser.add_argument(
        "--break", dest="broken", choices=("absolute", "root"), help="a broken setup the proof must fail on"
    )
    args = parser.parse_args(argv)
    for tool in ("nginx", "chromium", "promtool"):
        if not shutil.which(tool):
            print(f"status page prefix proof: no {tool}", flush=True)
            return 1
    started = time.monotonic()
    print("== the status page behind nginx at a path prefix (rxlab/statuspage/prefix.py)", flush=True)
    signal.signal(signal.SIGTERM, stopped)
    tmp = tempfile.mkdtemp(prefix="rx-prefix-proof.")
    artifacts = os.path.join(ROOT, ".build", "artifacts")
    os.makedirs(artifacts, exist_ok=True)
    procs, browser, listener, ok = [], None, Listener(), False
    listener.start()
    try:
        nginx_port = free_port()
        sites = sites_for(nginx_port, args.broken)
        # Two days of history behind /rx/, so its page has the timeline, RTT charts and day bars too.
        bench = os.path.join(os.path.dirname(args.exporter), "history_bench")
        history = os.path.join(tmp, "history")
        subprocess.run(
            [bench, "generate", history, "--days", "2", "--interval", "60", "--probes", "2", "--until-now"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        for site in sites:
            start_exporter(args.exporter, site, listener.port, tmp, procs)
        version, conf = start_nginx(nginx_port, sites, tmp, args.broken, procs)
        origin = f"http://127.0.0.1:{nginx_port}"
        print(f"== nginx {version} on 127.0.0.1:{nginx_port} (foreground, PID {procs[-1].pid}); its configuration:")
        print("".join(f"   {line}" for line in open(conf) if "location" in line and "404" not in line), end="")
        for site in sites:  # the first round done: the page has its probe row and debug link
            own = f"http://{site.addr}{site.route.rstrip('/')}/"
            if not wait_until(lambda u=own: ready(get(u)[2]), 30, step=0.2):
                print(f"note: {own} showed no probe row within 30 s", flush=True)
        proxy, proxy_log = start_proxy(f"127.0.0.1:{nginx_port}", tmp, procs)
        browser = Browser(proxy, os.path.join(tmp, "chromium"), os.path.join(tmp, "chromium.log"), procs)
        proof = Proof(browser, origin, proxy_log, artifacts)
        for site in sites:
            proof.site(site)
        if not args.broken:
            proof.self_test(sites[0])
        c = proof.counts
        print(
            f"== {len(sites)} prefixes: {c['links']} URL attributes checked, {c['followed']} links clicked in the browser, "
            f"{c['fetched']} URLs fetched through nginx; requests: {c['proxy']} through the logging proxy and "
            f"{c['browser']} reported by the browser, {c['outside']} outside their prefix but for the browser's "
            f"own {FAVICON} ({c['favicon']}, {get(origin + FAVICON)[0]} from nginx), to other hosts refused: "
            f"{', '.join(sorted(c['refused'])) or 'none'}; {time.monotonic() - started:.1f} s"
        )
        for f in proof.failures:
            print("FAIL:", f)
        ok = not proof.failures
        print("status page prefix proof: " + ("passed" if ok else f"FAILED: {len(proof.failures)} failure(s)"))
        return 0 if ok else 1
    finally:
        if browser:
            browser.close()
        stop_all(procs)
        listener.stop()
        if not ok:
            for name in sorted(os.listdir(tmp)):
                if name.endswith(".log"):
                    print(f"--- {name} (last lines)\n{tail(os.path.join(tmp, name), 8, skip=NOISE)}", end="")
        # Chromium's helpers may still be writing its profile for a moment after it ended.
        wait_until(lambda: shutil.rmtree(tmp, ignore_errors=True) or not os.path.exists(tmp), 5, step=0.2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
