"""Test kit: emulator fixtures and helpers, an in-memory Gmail, payload builders, reliability harness."""
