"""The captive-portal lab (issue #43, RFC 8908/8910/8781): see __main__.py."""
