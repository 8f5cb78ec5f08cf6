"""The fault lab's own addresses and port: the lab "internet" (reachability-lab's HTTP, HTTPS,
DNS and ICMP) on each upstream's loopback, and the exporter's port."""

PORT = 10361
V4_NET = "198.51.100.1"
V4_DNS = "198.51.100.53"
V6_NET = "2001:db8:100::1"
V6_DNS = "2001:db8:100::53"
LAB_NAME = "www.example.com"
