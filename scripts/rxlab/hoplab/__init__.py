"""The hop lab (`scripts/lab hops`): the driver is __main__.py (see its docstring)."""
