"""The truth lab (issue #42, "never a false full"): see __main__.py."""
