"""Benchmarks: plain scripts that print tables. Nothing here runs under pytest, and no test asserts a timing."""
