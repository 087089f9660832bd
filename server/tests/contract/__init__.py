"""The Gmail contract suite: facts of real Gmail, checked against the emulator and a real inbox.

See docs/contract-tests.md.
"""
