"""What the blackbox side-by-side lab probes: blackbox's shipped example modules (the files under
examples/, verbatim), how a few of them are adapted to the lab (their hard-coded hosts and CA
path only), the lab's own modules (one per setting /probe honours), and the cases: for each
module, the targets it is asked about, each healthy (blackbox must say probe_success 1) or
faulted (0)."""

import os
import re

from .net import A4, A6, BASIC_PASSWORD, BASIC_USER, BEARER, CLIENT4, PROXY_PORT

HERE = os.path.dirname(os.path.abspath(__file__))

# blackbox's example files: (short name, path under examples/). D = Debian 12's 0.23.0 (byte
# for byte the package's /etc/prometheus/blackbox.yml and examples/example.yml), H = upstream at
# e39d7d4 (0.28.0 and after).
SOURCES = [
    ("D blackbox.yml", "debian-0.23.0/blackbox.yml"),
    ("D example.yml", "debian-0.23.0/example.yml"),
    ("H blackbox.yml", "upstream-e39d7d4/blackbox.yml"),
    ("H example.yml", "upstream-e39d7d4/example.yml"),
]
# What Debian's package installs, to be byte-identical with the D files here.
INSTALLED = {
    "debian-0.23.0/blackbox.yml": "/etc/prometheus/blackbox.yml",
    "debian-0.23.0/example.yml": "/usr/share/doc/prometheus-blackbox-exporter/examples/example.yml",
}


def example_path(relative):
    return os.path.join(HERE, "examples", relative)


def split_modules(text):
    """[(name, block)] of a module file whose modules are indented two spaces under `modules:`;
    each block is the module's lines (name line included) as written."""
    out, name, lines = [], None, []
    for line in text.splitlines():
        m = re.match(r"^  ([^ #][^:]*):\s*$", line)
        if m:
            if name:
                out.append((name, "\n".join(lines).rstrip() + "\n"))
            name, lines = m.group(1), [line]
        elif name:
            lines.append(line)
    if name:
        out.append((name, "\n".join(lines).rstrip() + "\n"))
    return out


def module_file(blocks):
    return "modules:\n" + "".join(blocks)


def renamed(block, name):
    """`block` with its module name changed to `name`."""
    first, rest = block.split("\n", 1)
    return f"  {name}:\n" + rest


# Adaptations of the examples to the lab: hard-coded hosts, names and the CA path; nothing else.
def adaptations(ca):
    return {
        "http_custom_ca_example": [('"/certs/my_cert.crt"', f'"{ca}"')],
        "dns_soa": [('"prometheus.io"', '"lab.test"')],
        "dns_udp_example": [("www.prometheus.io", "www.lab.test")],
        "dns_tcp_example": [("www.prometheus.io", "www.lab.test")],
        "http_with_proxy": [("127.0.0.1:3128", f"{A4['WEB']}:{PROXY_PORT}")],
        "http_with_proxy_and_headers": [("127.0.0.1:3128", f"{A4['WEB']}:{PROXY_PORT}")],
        "icmp_example": [('source_ip_address: "127.0.0.1"', f'source_ip_address: "{CLIENT4}"')],
        "rabbitmq": [('"/etc/blackbox_exporter/CA_cert.crt"', f'"{ca}"')],
        "rabbitmq_insecure": [('"/etc/blackbox_exporter/CA_cert.crt"', f'"{ca}"')],
    }


def adapt(name, block, ca):
    for old, new in adaptations(ca).get(name, []):
        block = block.replace(old, new)
    return block


# The lab's own modules: each setting /probe honours (http, tcp, icmp, dns), in blackbox's
# format. {ca} is the lab CA.
LAB_MODULES = f"""modules:
  lab_http_ip4:
    prober: http
    http:
      preferred_ip_protocol: ip4
  lab_http_ip6_nofallback:
    prober: http
    http:
      preferred_ip_protocol: ip6
      ip_protocol_fallback: false
  lab_http_head:
    prober: http
    http:
      method: HEAD
  lab_http_noredirect:
    prober: http
    http:
      follow_redirects: false
      valid_status_codes: [301, 302]
  lab_http_status500:
    prober: http
    http:
      valid_status_codes: [500]
  lab_http_version10:
    prober: http
    http:
      valid_http_versions: ["HTTP/1.0"]
  lab_http_version11:
    prober: http
    http:
      valid_http_versions: ["HTTP/1.1"]
      tls_config:
        ca_file: "{{ca}}"
  lab_http_version20:
    prober: http
    http:
      valid_http_versions: ["HTTP/2.0"]
      tls_config:
        ca_file: "{{ca}}"
  lab_http_body:
    prober: http
    http:
      fail_if_body_not_matches_regexp: ["lab-page-marker"]
      fail_if_body_matches_regexp: ["(?i)could not connect"]
  lab_http_header_matches:
    prober: http
    http:
      fail_if_header_matches:
        - header: X-Lab
          regexp: "^bad$"
  lab_http_header_allow_missing:
    prober: http
    http:
      fail_if_header_matches:
        - header: X-Lab
          regexp: "^bad$"
          allow_missing: true
  lab_http_header_not_matches:
    prober: http
    http:
      fail_if_header_not_matches:
        - header: Content-Type
          regexp: "^text/html"
  lab_https_ca:
    prober: http
    http:
      fail_if_not_ssl: true
      tls_config:
        ca_file: "{{ca}}"
  lab_https_fail_if_ssl:
    prober: http
    http:
      fail_if_ssl: true
      tls_config:
        ca_file: "{{ca}}"
  lab_https_server_name:
    prober: http
    http:
      tls_config:
        ca_file: "{{ca}}"
        server_name: other.lab.test
  lab_https_insecure:
    prober: http
    http:
      tls_config:
        insecure_skip_verify: true
  lab_http_basic_auth:
    prober: http
    http:
      basic_auth:
        username: {BASIC_USER}
        password: {BASIC_PASSWORD}
  lab_http_authorization:
    prober: http
    http:
      authorization:
        credentials: {BEARER}
  lab_http_bearer_token:
    prober: http
    http:
      bearer_token: {BEARER}
  lab_http_host_header:
    prober: http
    http:
      headers:
        Host: vhost.example.com
  lab_http_proxy:
    prober: http
    http:
      proxy_url: "http://{A4["WEB"]}:{PROXY_PORT}"
  lab_http_body_limit:
    prober: http
    http:
      body_size_limit: 1KB
  lab_tcp_banner:
    prober: tcp
    tcp:
      query_response:
        - expect: "^SSH-2.0-"
  lab_tcp_tls:
    prober: tcp
    tcp:
      tls: true
      tls_config:
        ca_file: "{{ca}}"
  lab_tcp_send_expect:
    prober: tcp
    tcp:
      query_response:
        - expect: "^SSH-2.0-([^ -]+)"
          send: "SSH-2.0-lab ${{1}}"
  lab_smtp_starttls:
    prober: tcp
    timeout: 5s
    tcp:
      query_response:
        - expect: "^220 ([^ ]+) ESMTP (.+)$"
        - send: "EHLO prober\r"
        - expect: "^250-STARTTLS"
        - send: "STARTTLS\r"
        - expect: "^220"
        - starttls: true
        - send: "EHLO prober\r"
        - expect: "^250-AUTH"
        - send: "QUIT\r"
      tls_config:
        ca_file: "{{ca}}"
  lab_imap_starttls:
    prober: tcp
    timeout: 5s
    tcp:
      query_response:
        - expect: "OK.*STARTTLS"
        - send: ". STARTTLS"
        - expect: "OK"
        - starttls: true
        - send: ". capability"
        - expect: "CAPABILITY IMAP4rev1"
      tls_config:
        ca_file: "{{ca}}"
  lab_tcp_ip4:
    prober: tcp
    tcp:
      preferred_ip_protocol: ip4
  lab_icmp_ip4:
    prober: icmp
    icmp:
      preferred_ip_protocol: ip4
  lab_icmp_ip6_nofallback:
    prober: icmp
    icmp:
      ip_protocol_fallback: false
  lab_icmp_payload_df:
    prober: icmp
    icmp:
      payload_size: 1200
      dont_fragment: true
  lab_icmp_ttl0:
    prober: icmp
    icmp:
      ttl: 0
  lab_dns_a:
    prober: dns
    dns:
      query_name: www.lab.test
      query_type: A
  lab_dns_aaaa:
    prober: dns
    dns:
      query_name: www.lab.test
      query_type: AAAA
  lab_dns_nxdomain:
    prober: dns
    dns:
      query_name: nosuch.lab.test
      query_type: A
  lab_dns_nxdomain_ok:
    prober: dns
    dns:
      query_name: nosuch.lab.test
      query_type: A
      valid_rcodes: [NXDOMAIN]
  lab_dns_nodata:
    prober: dns
    dns:
      query_name: lab.test
      query_type: A
  lab_dns_refused_ok:
    prober: dns
    dns:
      query_name: www.lab.test
      query_type: A
      valid_rcodes: [REFUSED]
  lab_dns_tcp:
    prober: dns
    dns:
      query_name: www.lab.test
      query_type: A
      transport_protocol: tcp
  lab_dns_dot:
    prober: dns
    dns:
      query_name: www.lab.test
      query_type: A
      transport_protocol: tcp
      dns_over_tls: true
      tls_config:
        ca_file: "{{ca}}"
  lab_dns_validate:
    prober: dns
    dns:
      query_name: www.lab.test
      query_type: A
      validate_answer_rrs:
        fail_if_matches_regexp: [".*127.0.0.1"]
        fail_if_not_matches_regexp: ["www.lab.test.\\t300\\tIN\\tA\\t{A4["WEB"]}"]
        fail_if_none_matches_regexp: ["{A4["WEB"]}"]
      validate_authority_rrs:
        fail_if_matches_regexp: [".*127.0.0.1"]
  lab_dns_validate_none:
    prober: dns
    dns:
      query_name: www.lab.test
      query_type: A
      validate_answer_rrs:
        fail_if_none_matches_regexp: ["192.0.2.1"]
  lab_dns_all_match:
    prober: dns
    dns:
      query_name: www.lab.test
      query_type: A
      validate_answer_rrs:
        fail_if_all_match_regexp: ['198\\.18\\.2\\.10']
  lab_dns_authority_soa:
    prober: dns
    dns:
      query_name: nosuch.lab.test
      query_type: A
      valid_rcodes: [NXDOMAIN]
      validate_authority_rrs:
        fail_if_matches_regexp: ["SOA"]
  lab_dns_soa_ip4:
    prober: dns
    dns:
      query_name: lab.test
      query_type: SOA
      preferred_ip_protocol: ip4
"""


# Lab modules whose settings /probe was not said to honour: refused by ours, they are a NOTE (not
# run), not a failure. Every other lab module must load in both.
# Lab modules ours may refuse by design (a NOTE, not a failure): authority-section validators (not
# read), and a module only HTTP/2 could pass (the client speaks HTTP/1.1: refused at load).
OPTIONAL_LAB = {
    "lab_dns_validate",
    "lab_dns_validate_none",
    "lab_dns_all_match",
    "lab_dns_authority_soa",
    "lab_http_version20",
}


def lab_blocks(ca):
    return [(name, block.replace("{ca}", ca)) for name, block in split_modules(LAB_MODULES)]


# ---- the cases ------------------------------------------------------------------------------
H, F = "healthy", "faulted"
W4, W6 = A4["WEB"], f"[{A6['WEB']}]"
HTTP = f"http://{W4}"


def _http_2xx():
    return [
        (f"{HTTP}/", H, "page, IPv4"),
        (f"http://{W6}/", H, "page, IPv6"),
        ("http://www.lab.test/", H, "dual-stack name"),
        (f"{W4}/page", H, "no scheme"),
        (f"{HTTP}/redirect", H, "302 followed"),
        (f"{HTTP}/redirect2", H, "301 then 302 followed"),
        (f"{HTTP}/file.html", H, "static file, Last-Modified"),
        (f"{HTTP}/status500", F, "500"),
        (f"{HTTP}/nothere", F, "404"),
        (f"{HTTP}/auth", F, "401"),
        (f"{HTTP}/loop", F, "redirect loop"),
        (f"{HTTP}/to-https", F, "redirect to HTTPS, lab CA not trusted"),
        ("https://www.lab.test/", F, "lab CA not trusted"),
        (f"http://{W4}:81/", F, "port closed"),
        (f"http://{A4['DROP']}/", F, "dropped (timeout)"),
        ("http://nosuch.lab.test/", F, "NXDOMAIN"),
    ]


def _tcp_connect():
    s4, s6 = A4["SSH"], A6["SSH"]
    return [
        (f"{s4}:22", H, "IPv4"),
        (f"[{s6}]:22", H, "IPv6"),
        ("ssh.lab.test:22", H, "dual-stack name"),
        ("www.lab.test:80", H, "web port by name"),
        (f"{W4}:81", F, "port closed"),
        (f"{A4['DROP']}:22", F, "dropped (timeout)"),
        (s4, F, "no port"),
        ("nosuch.lab.test:22", F, "NXDOMAIN"),
    ]


def _icmp():
    return [
        (W4, H, "IPv4"),
        (A6["WEB"], H, "IPv6"),
        ("www.lab.test", H, "dual-stack name"),
        (A4["NOICMP"], F, "echo dropped, IPv4"),
        (A6["NOICMP"], F, "echo dropped, IPv6"),
        (A4["DROP"], F, "all dropped"),
        ("nosuch.lab.test", F, "NXDOMAIN"),
    ]


def _dns_servers():
    return [
        (A4["DNS"], H, "unbound, UDP, IPv4"),
        (A6["DNS"], H, "unbound, IPv6 (bare)"),
        ("ns.lab.test", H, "server by name"),
        (A4["REFUSING"], F, "REFUSED"),
        (A4["DROP"], F, "dropped (timeout)"),
        (W4, F, "port 53 closed"),
    ]


def _banner():
    s4 = A4["SSH"]
    return [
        (f"{s4}:22", H, "SSH banner"),
        (f"[{A6['SSH']}]:22", H, "SSH banner, IPv6"),
        (f"{s4}:2222", F, "wrong banner, then EOF"),
        (f"{s4}:2223", F, "silent (timeout)"),
        (f"{W4}:81", F, "port closed"),
    ]


def _irc():
    s4 = A4["SSH"]
    return [
        (f"{s4}:6667", H, "IRC: PING answered"),
        (f"[{A6['SSH']}]:6667", H, "IRC, IPv6"),
        (f"{s4}:2222", F, "not IRC"),
        (f"{W4}:81", F, "port closed"),
    ]


CASES = {
    # blackbox's examples (by their names in the example files)
    "http_2xx": _http_2xx(),
    "http_post_2xx": [(f"{HTTP}/post", H, "POST"), (f"http://{W4}:81/post", F, "port closed")],
    "tcp_connect": _tcp_connect(),
    "tcp_connect_example": _tcp_connect(),
    "ssh_banner": [
        (f"{A4['SSH']}:22", H, "SSH banner"),
        (f"{A4['SSH']}:2222", F, "wrong banner"),
        (f"{A4['SSH']}:2223", F, "silent (timeout)"),
    ],
    "irc_banner": _irc(),
    "irc_banner_example": _irc(),
    "tls_connect": [("www.lab.test:443", F, "lab CA not trusted"), (f"{W4}:81", F, "port closed")],
    "smtp_starttls": [("ssh.lab.test:25", F, "lab CA not trusted at STARTTLS"), (f"{A4['SSH']}:2222", F, "no EHLO")],
    "imap_starttls": [("ssh.lab.test:143", F, "lab CA not trusted at STARTTLS")],
    "rabbitmq": [
        (f"{A4['SSH']}:5671", H, "AMQP over TLS, IP SAN"),
        ("ssh.lab.test:5671", H, "AMQP over TLS, by name"),
        (f"{A4['SSH']}:2223", F, "silent (TLS handshake times out)"),
    ],
    "rabbitmq_insecure": [
        (f"{A4['SSH']}:5671", H, "AMQP over TLS"),
        ("expired.lab.test:443", F, "a web server answers, no AMQP"),
    ],
    "http_basic_auth_example": [
        (f"{HTTP}/", H, "POST with the example's credentials"),
        (f"{HTTP}/denied", F, "403"),
        (f"http://{W4}:81/", F, "port closed"),
    ],
    "ssh_banner_extract": [(f"{A4['SSH']}:22", H, "SSH banner"), (f"{A4['SSH']}:2222", F, "wrong banner")],
    "icmp": _icmp(),
    "icmp_ttl5": [(W4, H, "2 hops away, TTL 5"), (A4["NOICMP"], F, "echo dropped")],
    "icmp_example": [(W4, H, "IPv4 from the client's address"), (A4["NOICMP"], F, "echo dropped")],
    "http_2xx_example": [
        (f"{HTTP}/", H, "vhost page: body, CORS, no cookie"),
        ("http://www.lab.test/", H, "by name, IPv4 only"),
        (f"{HTTP}/dberror", F, "body matches the database error"),
        (f"{HTTP}/nodownload", F, "body lacks the download text"),
        (f"{HTTP}/cookie", F, "Set-Cookie present"),
        (f"{HTTP}/nocors", F, "Access-Control-Allow-Origin missing"),
        (f"http://{W6}/", F, "IPv6 literal, ip4 without fallback"),
        ("http://v6only.lab.test/", F, "IPv6-only name, ip4 without fallback"),
    ],
    "http_custom_ca_example": [
        ("https://www.lab.test/", H, "lab CA"),
        (f"https://{W4}/", H, "IPv4 literal (IP SAN)"),
        (f"https://{W6}/", H, "IPv6 literal (IP SAN)"),
        (f"{HTTP}/to-https", H, "HTTP redirected to HTTPS"),
        ("https://h2.lab.test/", H, "HTTP/2 server"),
        ("https://chain.lab.test/", H, "an intermediate that expires first"),
        ("https://wrong.lab.test/", F, "certificate for another name"),
        ("https://expired.lab.test/", F, "expired certificate"),
        (f"https://{W4}:80/", F, "TLS to a plain HTTP port"),
    ],
    "http_with_proxy": [(f"{HTTP}/", H, "through the lab proxy"), (f"{HTTP}/status500", F, "500 through the proxy")],
    "dns_soa": _dns_servers(),
    "dns_udp_example": [(A4["DNS"], F, "its validators contradict each other")],
    "dns_tcp_example": [(A4["DNS"], H, "ANY over TCP"), (W4, F, "port 53 closed")],
    # the lab's modules
    "lab_http_ip4": [("http://www.lab.test/", H, "IPv4 chosen"), ("http://v6only.lab.test/", H, "falls back to IPv6")],
    "lab_http_ip6_nofallback": [
        ("http://www.lab.test/", H, "IPv6 chosen"),
        ("http://v4only.lab.test/", F, "IPv4-only name, no fallback"),
        (f"{HTTP}/", F, "IPv4 literal, no fallback"),
    ],
    "lab_http_head": [(f"{HTTP}/", H, "HEAD"), (f"{HTTP}/status500", F, "HEAD, 500")],
    "lab_http_noredirect": [
        (f"{HTTP}/redirect", H, "302 not followed"),
        (f"{HTTP}/redirect2", H, "301 not followed"),
        (f"{HTTP}/", F, "200 not in valid_status_codes"),
    ],
    "lab_http_status500": [(f"{HTTP}/status500", H, "500 wanted"), (f"{HTTP}/", F, "200 not wanted")],
    "lab_http_version10": [(f"{HTTP}/", F, "HTTP/1.1 answer")],
    # Not against h2.lab.test: that server speaks HTTP/1.1 too, so ours (HTTP/1.1 only) truly gets a
    # valid HTTP/1.1 answer where blackbox, negotiating h2 by ALPN, gets HTTP/2 (docs/probe-endpoint.md).
    "lab_http_version11": [(f"{HTTP}/", H, "HTTP/1.1 answer")],
    "lab_http_version20": [("https://h2.lab.test/", H, "HTTP/2 server"), ("https://www.lab.test/", F, "HTTP/1.1 only")],
    "lab_http_body": [
        (f"{HTTP}/page", H, "marker present"),
        (f"{HTTP}/wrongbody", F, "marker missing"),
        (f"{HTTP}/dberror", F, "error text present"),
        (f"{HTTP}/status500", F, "500 before any body check"),
    ],
    "lab_http_header_matches": [
        (f"{HTTP}/xlab-good", H, "X-Lab: good"),
        (f"{HTTP}/xlab-bad", F, "X-Lab: bad"),
        (f"{HTTP}/", F, "X-Lab missing, allow_missing false"),
    ],
    "lab_http_header_allow_missing": [
        (f"{HTTP}/", H, "X-Lab missing, allowed"),
        (f"{HTTP}/xlab-bad", F, "X-Lab: bad"),
    ],
    "lab_http_header_not_matches": [(f"{HTTP}/", H, "text/html"), (f"{HTTP}/plain", F, "text/plain")],
    "lab_https_ca": [
        ("https://www.lab.test/", H, "lab CA"),
        (f"https://{W6}/", H, "IPv6 literal"),
        (f"{HTTP}/to-https", H, "ends over TLS"),
        (f"{HTTP}/", F, "fail_if_not_ssl"),
        ("https://wrong.lab.test/", F, "wrong name"),
        ("https://expired.lab.test/", F, "expired"),
    ],
    "lab_https_fail_if_ssl": [(f"{HTTP}/", H, "plain HTTP"), ("https://www.lab.test/", F, "fail_if_ssl")],
    "lab_https_server_name": [
        ("https://wrong.lab.test/", H, "server_name matches the certificate"),
        (f"https://{A4['WRONG']}/", H, "IPv4 literal, server_name"),
        ("https://www.lab.test/", F, "server_name is not the certificate's"),
    ],
    "lab_https_insecure": [
        ("https://expired.lab.test/", H, "expired, not verified"),
        ("https://wrong.lab.test/", H, "wrong name, not verified"),
        ("https://www.lab.test/", H, "unknown CA, not verified"),
    ],
    "lab_http_basic_auth": [(f"{HTTP}/auth", H, "right credentials"), (f"{HTTP}/bearer", F, "basic to a bearer page")],
    "lab_http_authorization": [(f"{HTTP}/bearer", H, "bearer"), (f"{HTTP}/auth", F, "bearer to a basic page")],
    "lab_http_bearer_token": [(f"{HTTP}/bearer", H, "bearer_token")],
    "lab_http_host_header": [
        (f"{HTTP}/", H, "vhost page"),
        (f"{HTTP}/nodownload", H, "vhost, 200"),
        (f"{HTTP}/page", F, "not on the vhost (404)"),
    ],
    "lab_http_proxy": [(f"{HTTP}/", H, "through the proxy"), (f"{HTTP}/status500", F, "500 through the proxy")],
    "lab_http_body_limit": [
        (f"{HTTP}/small", H, "3 bytes under 1KB"),
        (f"{HTTP}/page", H, "page under 1KB"),
        (f"{HTTP}/big.html", F, "page over 1KB"),
    ],
    "lab_tcp_banner": _banner(),
    "lab_tcp_ip4": [("ssh.lab.test:22", H, "IPv4 chosen")],
    "lab_tcp_tls": [
        ("www.lab.test:443", H, "TLS, lab CA"),
        (f"{W4}:443", H, "TLS, IP SAN"),
        ("chain.lab.test:443", H, "an intermediate that expires first"),
        ("wrong.lab.test:443", F, "wrong name"),
        ("expired.lab.test:443", F, "expired"),
        (f"{W4}:80", F, "TLS to a plain port"),
    ],
    "lab_tcp_send_expect": [(f"{A4['SSH']}:22", H, "expect, ${1} into send"), (f"{A4['SSH']}:2222", F, "wrong banner")],
    "lab_smtp_starttls": [
        ("ssh.lab.test:25", H, "SMTP STARTTLS"),
        (f"[{A6['SSH']}]:25", H, "SMTP STARTTLS, IPv6 (IP SAN)"),
        (f"{A4['SSH']}:2222", F, "no EHLO answer"),
        (f"{A4['SSH']}:143", F, "an IMAP server"),
    ],
    "lab_imap_starttls": [("ssh.lab.test:143", H, "IMAP STARTTLS"), (f"{A4['SSH']}:25", F, "an SMTP server")],
    "lab_icmp_ip4": [("www.lab.test", H, "IPv4 chosen"), ("v6only.lab.test", H, "falls back to IPv6")],
    "lab_icmp_ip6_nofallback": [("www.lab.test", H, "IPv6 chosen"), ("v4only.lab.test", F, "IPv4-only, no fallback")],
    "lab_icmp_payload_df": [(W4, H, "1200 bytes, DF"), (A6["WEB"], H, "1200 bytes, IPv6")],
    "lab_icmp_ttl0": [(W4, H, "system TTL")],
    "lab_dns_a": [
        (A4["DNS"], H, "A over UDP"),
        (f"{A4['DNS']}:53", H, "with the port"),
        (A6["DNS"], H, "IPv6 server"),
        (A4["REFUSING"], F, "REFUSED"),
        (A4["DROP"], F, "dropped (timeout)"),
        (W4, F, "port 53 closed"),
    ],
    "lab_dns_aaaa": [(A4["DNS"], H, "AAAA")],
    "lab_dns_nxdomain": [(A4["DNS"], F, "NXDOMAIN not valid")],
    "lab_dns_nxdomain_ok": [(A4["DNS"], H, "NXDOMAIN valid"), (A4["REFUSING"], F, "REFUSED")],
    "lab_dns_nodata": [(A4["DNS"], H, "NOERROR, no answer")],
    "lab_dns_refused_ok": [(A4["REFUSING"], H, "REFUSED valid"), (A4["DNS"], F, "NOERROR not valid")],
    "lab_dns_tcp": [
        (A4["DNS"], H, "A over TCP"),
        (A6["DNS"], H, "over TCP, IPv6"),
        (W4, F, "TCP 53 closed"),
    ],
    "lab_dns_dot": [
        (f"{A4['DNS']}:853", H, "DNS over TLS"),
        (A4["DNS"], H, "default port 853"),
        (f"{W4}:443", F, "a web server, not DNS"),
    ],
    "lab_dns_soa_ip4": [("ns.lab.test", H, "SOA, server by name")],
    "lab_dns_validate": [(A4["DNS"], H, "the answer as expected"), (A6["DNS"], H, "IPv6 server")],
    "lab_dns_validate_none": [(A4["DNS"], F, "no record matches")],
    "lab_dns_all_match": [(A4["DNS"], H, "every record matches: passes, as blackbox reads it")],
    "lab_dns_authority_soa": [(A4["DNS"], F, "the NXDOMAIN's authority holds the SOA")],
}
