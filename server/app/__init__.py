"""Composition: the account registry, the toolset choice, `--check` (doctor) and `--demo`, above the toolsets.

What assembles the server from its parts lives here, beside `main.py`, so the layers below it (runtime, gmail,
the client, the tools) never import upward (`tests/test_layout.py`).
"""
