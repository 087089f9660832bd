"""The Gmail contract suite: facts of real Gmail checked against the emulator and a real inbox (docs/contract-tests.md)."""
