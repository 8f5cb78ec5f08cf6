"""The Prometheus proof (`scripts/lab prometheus`): proof.sh runs it, __main__.py holds its checks."""
