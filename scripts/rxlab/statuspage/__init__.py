"""The status page proof (`scripts/lab status-page`): proof.sh runs it, __main__.py checks."""
