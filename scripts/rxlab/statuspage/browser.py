"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: no
debugging port, nothing listening), every request through a given proxy: pages loaded, links read
as the browser resolves them and clicked, each document's HTTP status, screenshots, and the
browser's own account of the requests it sent (Network.requestWillBeSent), to set beside the
proxy's log. Standard library only; used by prefix.py."""

import base64
import json
import os
import subprocess
import threading

from ..procs import stop

# The statuspage proof's flags (proof.sh): no first-run work, no background services, nothing
# resolved but 127.0.0.1.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter",
    "--no-pings",
    "--window-size=1280,1000",
]

# Attributes that make a browser fetch or navigate (as statuspage/__main__.py's URL_ATTRS).
LINKS_JS = """(() => {
  const attrs = %s, out = [];
  for (const e of document.querySelectorAll('*')) for (const a of attrs) {
    const raw = e.getAttribute(a);
    if (raw === null) continue;
    // The page's empty icon (no request at all): not a link to check.
    if (e.localName === 'link' && e.getAttribute('rel') === 'icon' && raw === 'data:,') continue;
    let resolved;
    try { resolved = new URL(raw, document.baseURI).href } catch (x) { resolved = 'invalid' }
    out.push({tag: e.localName, attr: a, raw: raw, resolved: resolved, text: e.textContent.trim().slice(0, 40)});
  }
  return {base: document.baseURI, links: out};
})()"""


class Browser:
    """One headless Chromium; stop it with close(). Every wait is bounded (`timeout`, seconds);
    `bound` is the browser's own life limit (coreutils timeout)."""

    def __init__(self, proxy, profile, log_path, procs, bound=120, timeout=15):
        """`procs`: the caller's list of started processes, which gets the browser's at once (so
        it is stopped even when this is interrupted before it returns)."""
        cmd_read, self.cmd_write = os.pipe()  # the browser reads its commands on fd 3
        self.event_read, event_write = os.pipe()  # and writes replies and events on fd 4
        argv = [
            "sh",
            "-c",
            'exec 3<&0 4>&1 </dev/null >/dev/null; exec "$@"',
            "sh",
            "timeout",
            str(bound),
            "chromium",
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--proxy-server=http://{proxy}",
            # Even loopback through the proxy; every other name resolves to nothing.
            "--proxy-bypass-list=<-loopback>",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--remote-debugging-pipe",
        ]
        with open(log_path, "a") as log:
            self.proc = subprocess.Popen(argv, stdin=cmd_read, stdout=event_write, stderr=log)
        procs.append(self.proc)
        os.close(cmd_read)
        os.close(event_write)
        self.timeout = timeout
        self.cond = threading.Condition()
        self.replies, self.events, self.next_id, self.closed = {}, [], 0, False
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)[
            "sessionId"
        ]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")

    def _read(self):
        buffer = b""
        while True:
            try:
                chunk = os.read(self.event_read, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self.cond:
                    self.closed = True
                    self.cond.notify_all()
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self.cond:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self.replies[message["id"]] = message
                    else:
                        self.events.append(message)
                self.cond.notify_all()

    def call(self, method, params=None, session=True, timeout=None):
        """A DevTools command (in the page's session unless `session` is False): its result."""
        with self.cond:
            self.next_id += 1
            ident = self.next_id
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.cmd_write, json.dumps(message).encode() + b"\0")
        with self.cond:
            if not self.cond.wait_for(lambda: ident in self.replies or self.closed, timeout or self.timeout):
                raise RuntimeError(f"chromium did not answer {method} within {timeout or self.timeout} s")
            if ident not in self.replies:
                raise RuntimeError(f"chromium ended before answering {method}")
            reply = self.replies.pop(ident)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def mark(self):
        with self.cond:
            return len(self.events)

    def _events(self, method, since):
        with self.cond:
            return [e["params"] for e in self.events[since:] if e.get("method") == method]

    def wait_event(self, method, since, timeout=None):
        with self.cond:
            found = self.cond.wait_for(
                lambda: any(e.get("method") == method for e in self.events[since:]) or self.closed,
                timeout or self.timeout,
            )
        if not found or not self._events(method, since):
            raise RuntimeError(f"no {method} within {timeout or self.timeout} s")

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def navigate(self, url):
        """Loads `url` as typed into the address bar: the document (see document())."""
        since = self.mark()
        result = self.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            return {"url": url, "status": None, "error": result["errorText"], "since": since}
        self.wait_event("Page.loadEventFired", since)
        return self.document(since)

    def click(self, expression):
        """Clicks the element `expression` evaluates to, as a user would: the document it leads to."""
        since = self.mark()
        self.evaluate(f"({expression}).click()")
        self.wait_event("Page.loadEventFired", since)
        return self.document(since)

    def document(self, since):
        """The loaded document: its URL, the HTTP status it came with, its HTML and text."""
        url = self.evaluate("location.href")
        statuses = [
            r["response"]["status"]
            for r in self._events("Network.responseReceived", since)
            if r.get("type") == "Document" and r["response"]["url"] == url
        ]
        return {
            "url": url,
            "status": statuses[-1] if statuses else None,
            "html": self.evaluate("document.documentElement.outerHTML"),
            "text": self.evaluate("document.body ? document.body.innerText : ''"),
            "since": since,
        }

    def links(self, attrs):
        """Every URL attribute in the document: tag, attr, raw value, the URL the browser resolves
        it to (against document.baseURI), and the element's text; and the base URI."""
        return self.evaluate(LINKS_JS % json.dumps(sorted(attrs)))

    def requests(self, since):
        """The URLs the browser sent requests for since `since` (redirects' next hops too)."""
        return [r["request"]["url"] for r in self._events("Network.requestWillBeSent", since)]

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return os.path.getsize(path)

    def replace_document(self, html):
        """Replaces the loaded document's HTML, keeping its URL (links resolve against it)."""
        frame = self.call("Page.getFrameTree")["frameTree"]["frame"]["id"]
        self.call("Page.setDocumentContent", {"frameId": frame, "html": html})

    def close(self):
        if self.proc.poll() is None and not self.closed:
            try:
                self.call("Browser.close", session=False, timeout=5)
            except RuntimeError:
                pass
        stop(self.proc)
        for fd in (self.cmd_write, self.event_read):
            try:
                os.close(fd)
            except OSError:
                pass
