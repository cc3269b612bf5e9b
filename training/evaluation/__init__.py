"""Evaluation: how agents are compared.

- ``tournament``: duplicate-deal tournaments with 95% intervals (table, JSON, plot).
- ``generalist``: the generalist table, one policy against the heuristic on every table.
- ``game_log``: the JSON-lines log of the games a tournament played (replayed in the browser).
"""
