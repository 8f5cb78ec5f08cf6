"""The fault lab's driver, by role; run through scripts/fault_lab.py (see its docstring)."""
