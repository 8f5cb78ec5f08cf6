"""The uplink lab (issue #31): see __main__.py."""
