"""The fault lab (`scripts/lab fault`): the driver is __main__.py (see its docstring)."""
