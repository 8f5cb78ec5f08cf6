"""The blackbox side-by-side lab (`scripts/lab blackbox-side-by-side`): the driver is __main__.py
(see its docstring)."""
