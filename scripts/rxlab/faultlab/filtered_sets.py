"""The filtered phase's probe sets: each one exporter's probes (DNS per transport, web direct,
proxied or from the environment, proxy credentials and proxy errors) as a configuration file, with
what the verdict and each probe must be in every scenario (filtered_phase.py runs them)."""

import json
import os
import re
import subprocess

from . import filterednet as net
from .lab import Exporter

GLOBAL = {"interval": "2s", "timeout": "1500ms", "fail_after": 2, "recover_after": 2}
TIMING_FLAGS = ["--probe.interval=2s", "--probe.timeout=1500ms", "--probe.fail-after=2", "--probe.recover-after=2"]
OK = "ok"
PROXY = f"http://{net.ROUTER_LAN}:{net.PROXY_PORT}"
AUTH_PROXY = f"{net.ROUTER_LAN}:{net.AUTH_PROXY_PORT}"
WEB_BY_IP, WEB_BY_NAME = f"{net.WEB_IP}/generate_204", f"{net.WEB_NAME}/generate_204"
DROP_UDP53 = ["udp dport 53 counter drop"]
REJECT_UDP53 = ["udp dport 53 counter reject with icmp type port-unreachable"]
DROP_WEB = ['iifname "flan" tcp dport { 80, 443 } counter drop']


# ---- configuration files ------------------------------------------------------------------


def scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return (
        text
        if re.fullmatch(r"[A-Za-z0-9_./-]+", text) and text not in ("true", "false")
        else "'" + text.replace("'", "''") + "'"
    )


def to_yaml(value, indent=0):
    """Block YAML of nested dicts and lists (the exporter's strict subset: no tabs, quoted
    scalars where a character could mean something)."""
    pad, out = " " * indent, []
    if isinstance(value, dict):
        for key, v in value.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{key}:")
                out.append(to_yaml(v, indent + 2))
            else:
                out.append(f"{pad}{key}: {scalar(v) if not isinstance(v, list) else '[]'}")
    else:
        for item in value:
            if isinstance(item, dict):
                first, *rest = to_yaml(item, indent + 2).splitlines()
                out.append(f"{pad}- {first.lstrip()}")
                out.extend(rest)
            else:
                out.append(f"{pad}- {scalar(item)}")
    return "\n".join(out)


def dns(name, target, transport, record="A", expect=None, tls=None, server=None):
    d = {"server": server or net.DNS_IP, "transport": transport, "record_type": record}
    if tls:
        d["tls"] = tls
    if expect:
        d["expect_answer"] = expect
    return {"name": name, "type": "dns", "target": target, "dns": d}


def web(name, url, ca, proxy=None, from_env=False):
    """A captive check (204 expected) of `url`; HTTPS trusts `ca` (the phase CA) only."""
    kind = url.split(":", 1)[0]
    h = {}
    if proxy:
        h["proxy_url"] = proxy
    if from_env:
        h["proxy_from_environment"] = True
    if kind == "https":
        h["tls"] = {"ca_file": ca}
    return {"name": name, "type": kind, "target": url, **({"http": h} if h else {})}


# ---- probe sets ---------------------------------------------------------------------------
class ProbeSet:
    """One exporter's probes and what they must show: `before` (the healthy lab, and again
    after the fault) and `during` (the fault): each a verdict (state, reason or None) and a
    map probe name -> OK or a failure reason. `phases`: probe name -> phase labels its
    reachability_probe_phase_duration_seconds must have (checked on the healthy lab)."""

    def __init__(
        self,
        label,
        probes=(),
        flags=(),
        env=(),
        before=("full", None),
        during=("full", None),
        ok_before=None,
        ok_during=None,
        phases=None,
    ):
        self.label, self.probes, self.flags, self.env = label, list(probes), list(flags), list(env)
        self.before, self.during = before, during
        # A flag probe's name is its flag's value (`www.lab.example@tcp://198.51.100.53`).
        names = [p["name"] for p in self.probes] + [
            f.split("=", 1)[1] for f in self.flags if f.startswith(("--probe.dns=", "--probe.http="))
        ]
        self.ok_before = {n: OK for n in names} | (ok_before or {})
        self.ok_during = self.ok_before | (ok_during or {})
        self.phases = phases or {}
        self.exporter, self.config = None, None

    def write(self, work):
        """The set's configuration file (none for a set of flags only)."""
        if self.probes:
            self.config = os.path.join(work, f"filtered-{self.label}.yml")
            with open(self.config, "w") as f:
                f.write(to_yaml({"global": GLOBAL, "probes": self.probes}) + "\n")

    def argv(self):
        return ([f"--config.file={self.config}"] if self.config else []) + self.flags


class FilteredExporter(Exporter):
    """An exporter with extra environment (a trust store, proxy variables)."""

    def __init__(self, lab, ns, name, flags, port, extra_env):
        super().__init__(lab, ns, name, flags, port)
        self.extra_env = extra_env

    def env(self):
        argv = super().env()
        return argv[:-1] + self.extra_env + argv[-1:]

    def check_json(self, flags):
        """`check --output=json` with `flags`: (exit status, parsed output or None, raw text)."""
        p = subprocess.run(
            self.env() + ["check"] + flags + ["--output=json"], capture_output=True, text=True, timeout=30
        )
        try:
            return p.returncode, json.loads(p.stdout), p.stdout
        except ValueError:
            return p.returncode, None, (p.stdout + p.stderr).strip()[-300:]


def probe_sets(ca, udp_refused=False):
    """The scenarios' probe sets, by label. `udp_refused`: the UDP fault is an ICMP reject (a
    UDP probe without TCP fallback then fails `refused`, not `timeout`)."""
    tls = {"ca_file": ca, "server_name": net.DNS_NAME}
    www_a = {"addresses": [net.WEB_IP]}
    www_re = {"regex": r"^198\.51\.100\.80$"}
    dns_udp = dns("dns-udp", net.WEB_NAME, "udp", expect=www_a)
    https_ip = web("https-direct", f"https://{WEB_BY_IP}", ca)
    http_ip = web("http-direct", f"http://{WEB_BY_IP}", ca)
    user = f"{net.PROXY_USER}:{net.PROXY_PASSWORD}"
    no_fallback = dns("dns-udp-nofallback", net.WEB_NAME, "udp", expect=www_a)
    no_fallback["dns"]["tcp_fallback"] = False
    sets = [
        ProbeSet(
            "dns",
            [
                dns_udp,
                no_fallback,
                dns("dns-tcp", net.WEB_NAME, "tcp", expect=www_re),
                dns("dns-tcp-txt", net.WEB_NAME, "tcp", "TXT", expect={"regex": "rxlab filtered"}),
                dns("dns-tls", net.WEB_NAME, "tls", expect=www_a, tls=tls),
                dns(
                    "dns-tls-mx",
                    net.ZONE,
                    "tls",
                    "MX",
                    expect={"regex": r"mail\.lab\.example"},
                    tls=tls,
                    server=f"{net.DNS_IP}:853",
                ),
                # The phase CA is not in the exporter's trust store: without ca_file, DoT must not verify.
                dns("dns-tls-untrusted", net.WEB_NAME, "tls", tls={"server_name": net.DNS_NAME}),
                https_ip,
            ],
            ok_before={"dns-tls-untrusted": "tls"},
            ok_during={"dns-udp": "dns_udp_blocked", "dns-udp-nofallback": "refused" if udp_refused else "timeout"},
            phases={"dns-udp": {"query"}, "dns-tcp": {"connect", "query"}, "dns-tls": {"connect", "tls", "query"}},
        ),
        ProbeSet("udp-only", [dns_udp, https_ip], during=("limited", "dns"), ok_during={"dns-udp": "dns_udp_blocked"}),
        # The flag forms; the phase CA is the trust store here, so DoT verifies by the IP SAN.
        ProbeSet(
            "flags",
            flags=[f"--probe.dns={net.WEB_NAME}@{scheme}://{net.DNS_IP}" for scheme in ("udp", "tcp", "tls")]
            + [f"--probe.http=https://{WEB_BY_IP}"]
            + TIMING_FLAGS,
            env=[f"SSL_CERT_FILE={ca}"],
            ok_during={f"{net.WEB_NAME}@udp://{net.DNS_IP}": "dns_udp_blocked"},
        ),
        ProbeSet(
            "web",
            [
                http_ip,
                https_ip,
                web("http-proxy", f"http://{WEB_BY_NAME}", ca, proxy=PROXY),
                web("https-proxy", f"https://{WEB_BY_NAME}", ca, proxy=PROXY),
                web("https-env", f"https://{WEB_BY_NAME}", ca, from_env=True),
                web("https-env-noproxy", f"https://{WEB_BY_IP}", ca, from_env=True),
            ],
            env=[f"HTTP_PROXY={PROXY}", f"HTTPS_PROXY={PROXY}", f"NO_PROXY={net.WEB_IP}"],
            ok_during={"http-direct": "timeout", "https-direct": "timeout", "https-env-noproxy": "timeout"},
            phases={"https-proxy": {"proxy"}, "https-env": {"proxy"}},
        ),
        # The flag forms: every --probe.http through --probe.http.proxy-url (the phase CA as the trust store).
        ProbeSet(
            "web-flags",
            flags=[
                f"--probe.http=https://{WEB_BY_NAME}",
                f"--probe.http=http://{WEB_BY_NAME}",
                f"--probe.http.proxy-url={PROXY}",
            ]
            + TIMING_FLAGS,
            env=[f"SSL_CERT_FILE={ca}"],
            phases={f"https://{WEB_BY_NAME}": {"proxy"}},
        ),
        ProbeSet(
            "direct-only",
            [http_ip, https_ip],
            during=("limited", "timeout"),
            ok_during={"http-direct": "timeout", "https-direct": "timeout"},
        ),
        ProbeSet(
            "auth",
            [
                web("https-auth", f"https://{WEB_BY_NAME}", ca, proxy=f"http://{user}@{AUTH_PROXY}"),
                web("http-auth", f"http://{WEB_BY_NAME}", ca, proxy=f"http://{user}@{AUTH_PROXY}"),
                web(
                    "https-auth-wrong",
                    f"https://{WEB_BY_NAME}",
                    ca,
                    proxy=f"http://{net.OTHER_USER}:wrong@{AUTH_PROXY}",
                ),
                web("http-auth-none", f"http://{WEB_BY_NAME}", ca, proxy=f"http://{AUTH_PROXY}"),
                https_ip,
            ],
            ok_before={"https-auth-wrong": "proxy_auth", "http-auth-none": "proxy_auth"},
            ok_during={"https-direct": "timeout"},
            phases={"https-auth": {"proxy"}},
        ),
        ProbeSet(
            "auth-wrong",
            [
                web(
                    "https-auth-wrong",
                    f"https://{WEB_BY_NAME}",
                    ca,
                    proxy=f"http://{net.OTHER_USER}:wrong@{AUTH_PROXY}",
                ),
                web("http-auth-wrong", f"http://{WEB_BY_NAME}", ca, proxy=f"http://{net.OTHER_USER}:bad@{AUTH_PROXY}"),
            ],
            before=("limited", "proxy_auth"),
            during=("limited", "proxy_auth"),
            ok_before={"https-auth-wrong": "proxy_auth", "http-auth-wrong": "proxy_auth"},
        ),
        # Plain HTTP through a proxy is local evidence, so its reason does not count toward the
        # verdict's: of the two HTTPS proxy_status and one proxy_refused, proxy_status wins.
        ProbeSet(
            "proxy-errors",
            [
                web("proxy-refused", f"https://{WEB_BY_NAME}", ca, proxy=f"http://{net.ROUTER_LAN}:{net.CLOSED_PORT}"),
                web(
                    "connect-denied", f"https://{net.WEB_NAME}:8443/generate_204", ca, proxy=PROXY
                ),  # squid: 403, port not allowed
                web(
                    "connect-503", f"https://{net.WEB_NAME}:4443/generate_204", ca, proxy=PROXY
                ),  # squid: 503, nothing on :4443
                web("proxy-503", f"http://{net.WEB_NAME}:8080/generate_204", ca, proxy=PROXY),
            ],  # squid: 503, nothing on :8080
            before=("limited", "proxy_status"),
            during=("limited", "proxy_status"),
            ok_before={
                "proxy-refused": "proxy_refused",
                "connect-denied": "proxy_status",
                "connect-503": "proxy_status",
                "proxy-503": "proxy_status",
            },
        ),
    ]
    return {s.label: s for s in sets}
