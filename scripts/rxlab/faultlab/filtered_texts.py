"""The texts filterednet.py writes out: the configurations of the filtered phase's upstream
unbound (the static zone over UDP, TCP and DNS over TLS) and of the router's squid (an open and
a basic-auth port, CONNECT to 443 and 4443 only)."""

from .daemons import UNBOUND_SERVER

UNBOUND_CONF = (
    UNBOUND_SERVER
    + """  verbosity: 1
  log-queries: yes
  do-ip6: no
  interface: {dns}
  interface: {dns}@853
  tls-port: 853
  tls-service-key: "{work}/dns.key"
  tls-service-pem: "{work}/dns.pem"
  access-control: 0.0.0.0/0 allow
  module-config: "iterator"
  # Nothing is ever looked up outside the lab: every other name is refused.
  local-zone: "." refuse
  local-zone: "{zone}." static
  local-data: "{web}. 60 IN A {web_ip}"
  local-data: "{dns_name}. 60 IN A {dns}"
  local-data: '{web}. 60 IN TXT "{txt}"'
  local-data: "{zone}. 60 IN MX 10 {mx}."
  local-data: "{mx}. 60 IN A {web_ip}"
remote-control:
  control-enable: no
"""
)

SQUID_CONF = """http_port {lan}:{port}
http_port {lan}:{auth_port} name=authport
pid_filename {work}/squid.pid
cache_log {work}/cache.log
access_log stdio:{work}/access.log
cache deny all
cache_mem 8 MB
shutdown_lifetime 1 seconds
dns_nameservers {dns}
pinger_enable off
auth_param basic program {ncsa} {htpasswd}
auth_param basic children 3
auth_param basic realm rxlab
acl lan src {lan_net}
acl SSL_ports port 443 4443
acl Safe_ports port 80 443 4443 8080
acl CONNECT method CONNECT
acl authport myportname authport
acl authed proxy_auth REQUIRED
http_access deny !Safe_ports
http_access deny CONNECT !SSL_ports
http_access deny authport !authed
http_access allow lan
http_access deny all
"""
