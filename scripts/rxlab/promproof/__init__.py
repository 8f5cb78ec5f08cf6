"""The Prometheus proof's checks, by role; run through scripts/prometheus-proof.py."""
