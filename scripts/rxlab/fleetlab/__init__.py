"""The fleet lab (`scripts/lab fleet`): the driver is __main__.py (see its docstring)."""
