"""Helpers for proof.sh, the status page proof (`scripts/lab status-page`; standard library plus
html5lib).

  python3 -m rxlab.statuspage proxy PORT_FILE LOG ALLOWED   a logging HTTP proxy on 127.0.0.1:0 that
      forwards plain GETs to ALLOWED (host:port) only, refuses everything else (CONNECT, other
      hosts) and logs every request line; the browser is pointed at it, so the log is the list of
      every request the page made.
  python3 -m rxlab.statuspage check PAGE DOM PROXY_LOG ALLOWED   checks the served HTML (strict HTML5
      parse, no off-host URL in any attribute or style), the browser's DOM (state, timeline
      segments, 30 day bars, outage rows) and the proxy log (every request went to ALLOWED).
"""

import http.client
import http.server
import re
import sys
import threading
from html.parser import HTMLParser
from urllib.parse import urlsplit


def proxy(port_file, log_path, allowed):
    log = open(log_path, "a", buffering=1)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def note(self):
            with lock:
                log.write(f"{self.command} {self.path} {self.headers.get('Referer') or '-'}\n")

        def refuse(self):
            self.note()
            self.send_error(403, "outside the exporter")

        do_CONNECT = do_POST = do_PUT = do_HEAD = refuse

        def do_GET(self):
            self.note()
            target = urlsplit(self.path)
            if target.scheme != "http" or target.netloc != allowed:
                self.send_error(403, "outside the exporter")
                return
            host, port = allowed.rsplit(":", 1)
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request("GET", target.path + ("?" + target.query if target.query else ""))
            r = conn.getresponse()
            body = r.read()
            self.send_response(r.status)
            for k, v in r.getheaders():
                if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


# Attributes that make a browser fetch or navigate.
URL_ATTRS = {
    "src",
    "href",
    "action",
    "formaction",
    "poster",
    "data",
    "srcset",
    "xlink:href",
    "background",
    "cite",
    "manifest",
    "ping",
}


def relative(value):
    """Whether a URL attribute stays on the server that served the page: a relative reference
    (`./metrics`, `../`, `/metrics`, `#gap-hatch`), with neither a scheme (`http:`, `data:`,
    `javascript:`) nor a host (`//cdn.example/`; a browser reads `\\` as `/`)."""
    value = value.strip().replace("\\", "/")
    target = urlsplit(value)
    return not target.scheme and not target.netloc and not value.startswith("//")


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.bad = []
        self.count = 0

    def handle_starttag(self, tag, attrs):
        if tag == "link":
            # The one link element allowed: an empty icon, so the browser fetches no /favicon.ico
            # (outside a route prefix, on a shared proxy another application's).
            if dict(attrs) == {"rel": "icon", "href": "data:,"}:
                self.count += 1
            else:
                self.bad.append(f"<link {dict(attrs)}>")
            return
        for name, value in attrs:
            value = value or ""
            if name in URL_ATTRS:
                self.count += 1
                if not relative(value):
                    self.bad.append(f"<{tag} {name}={value!r}>")
            if name == "style" or name == "fill":
                for url in re.findall(r"url\(([^)]*)\)", value):
                    if not url.strip("'\" ").startswith("#"):
                        self.bad.append(f"<{tag} {name}> url({url})")
            if name == "http-equiv" and value.lower() == "refresh":
                content = dict(attrs).get("content", "")
                if "url=" in content.lower():
                    self.bad.append(f"meta refresh to {content!r}")

    def handle_data(self, data):
        pass


def check(page_path, dom_path, log_path, allowed):
    page = open(page_path, encoding="utf-8").read()
    dom = open(dom_path, encoding="utf-8").read()
    failures = check_parse(page) + check_references(page) + check_dom(dom) + check_requests(page, log_path, allowed)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def check_parse(page):
    """1. Strict HTML5 parse of what the exporter serves: the failures."""
    import html5lib

    failures = []
    parser = html5lib.HTMLParser(strict=True)
    try:
        parser.parse(page)
        print("html5lib strict parse: no errors")
    except Exception as e:  # html5lib raises ParseError at the first error in strict mode
        failures.append(f"html5lib strict parse: {e} (errors: {parser.errors[:3]})")
    return failures


def check_references(page):
    """2. Nothing outside the exporter, by construction: the failures."""
    failures = []
    links = Links()
    links.feed(page)
    for css in re.findall(r"<style>(.*?)</style>", page, re.S):
        for url in re.findall(r"url\(([^)]*)\)", css):
            links.bad.append(f"css url({url})")
        if "@import" in css:
            links.bad.append("css @import")
    if re.search(r"<script|<iframe|<img|<object|<embed", page, re.I):
        links.bad.append("a script, frame, image or embed element")
    if links.bad:
        failures.append("off-host references: " + "; ".join(links.bad[:5]))
    else:
        print(
            f"references: {links.count} link/src attributes, all relative to the exporter; no script, image or stylesheet element"
        )
    return failures


def check_dom(dom):
    """3. The browser's DOM shows what the history holds: the failures."""
    failures = []
    state = re.search(r'<div class="verdict" id="verdict" data-state="([a-z]+)"', dom)
    overall = re.search(r'id="timeline".*?</svg>', dom, re.S)
    segments = re.findall(r'<rect class="seg" data-state="([a-z]+)"', overall.group(0) if overall else "")
    bands = re.findall(r'<span class="bandlabel">([^<]*)</span>', dom)
    scope_outages = re.findall(r'<tr class="scope-outage" data-state="([a-z]+)"><td>([^<]*)</td>', dom)
    days = re.findall(r'<g class="day" data-day="(\d{4}-\d\d-\d\d)"', dom)
    outages = re.findall(r'<tr class="outage" data-state="([a-z]+)"', dom)
    rtt = re.findall(r'<svg class="chart rtt"', dom)
    print(
        f"DOM: verdict {state.group(1) if state else None}; timeline segments {len(segments)} "
        f"({', '.join(f'{s} {segments.count(s)}' for s in sorted(set(segments)))}); day bars {len(days)}; outage rows {len(outages)}; RTT charts {len(rtt)}; scope bands {', '.join(bands) or 'none'}; family/uplink outage rows {len(scope_outages)}"
    )
    if not state or state.group(1) != "full" or ">Full</div>" not in dom:
        failures.append("the verdict is not shown as Full")
    if segments.count("limited") < 4 or "full" not in segments or "gap" not in segments:
        failures.append("the timeline lacks the expected full, limited and gap segments")
    if "IPv4" not in bands:
        failures.append("no IPv4 band under the overall timeline")
    if not any(scope == "IPv4" and state == "limited" for state, scope in scope_outages):
        failures.append("the IPv4 outages of the last day are not listed")
    if len(days) != 30 or len(set(days)) != 30:
        failures.append(f"expected 30 distinct day bars, got {len(days)}")
    if len(outages) < 10 or "<td>timeout</td><td>recovered</td>" not in dom:
        failures.append("the outage log lacks the generated outages")
    if len(rtt) < 3:
        failures.append("expected RTT charts for the two generated probes and the live one")
    return failures


def check_requests(page, log_path, allowed):
    """4. Every request the page caused went to the exporter: the failures. Requests with the
    page as Referer are the page's (subresources, navigations); the browser's own background
    requests (component updates, network time) carry none: they are listed, and the proxy
    refused them."""
    failures = []
    if re.search(r'<meta[^>]+name="referrer"', page, re.I) or "referrerpolicy" in page.lower():
        failures.append("the page sets a referrer policy, which would hide its requests from this check")
    requests = [line.split() for line in open(log_path) if line.strip()]
    ours = [r for r in requests if urlsplit(r[1]).netloc == allowed and r[0] == "GET"]
    from_page = [r for r in requests if r[2] != "-"]
    outside = [r for r in from_page if urlsplit(r[1]).netloc != allowed or r[0] != "GET"]
    browser = sorted(
        {
            f"{r[0]} {urlsplit(r[1]).netloc or r[1]}"
            for r in requests
            if r[2] == "-" and urlsplit(r[1]).netloc != allowed
        }
    )
    print(
        f"requests through the logging proxy: {len(ours)} to the exporter ({', '.join(sorted({urlsplit(r[1]).path for r in ours}))}), "
        f"{len(outside)} elsewhere from the page; the browser's own background requests, refused: {', '.join(browser) or 'none'}"
    )
    if not ours:
        failures.append("the proxy saw no request to the exporter: the browser did not use it, so nothing was proven")
    if outside:
        failures.append("requests from the page outside the exporter: " + ", ".join(" ".join(r) for r in outside[:5]))
    return failures


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "proxy":
        proxy(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "check":
        sys.exit(check(*sys.argv[2:]))
    else:
        sys.exit(__doc__)
