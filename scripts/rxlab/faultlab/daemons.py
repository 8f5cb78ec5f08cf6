"""What the fault lab's resolvers start with (homerouter.py, filtered_texts.py, onpath_config.py,
onpathnet.py): unbound's server section and dnsmasq's command line, each in the foreground with
nothing of the host's (no chroot, user switch or pid file for unbound; no configuration,
resolv.conf or hosts file for dnsmasq) and logging to stderr."""

UNBOUND_SERVER = """server:
  do-daemonize: no
  chroot: ""
  username: ""
  pidfile: ""
  use-syslog: no
  logfile: ""
"""

DNSMASQ = ("dnsmasq", "--keep-in-foreground", "--log-facility=-", "--conf-file=/dev/null", "--no-resolv", "--no-hosts")
