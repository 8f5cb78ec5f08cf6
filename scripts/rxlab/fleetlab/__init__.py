"""The fleet lab's driver, by role; run through scripts/fleet_lab.py (see its docstring)."""
