"""The generator of the demo mailbox: `python -m server.demo.generator.make_mailbox` writes `server/demo/mailbox.mbox`.

A development tool: the wheel leaves this package out (pyproject.toml) and ships only the mailbox and
`server/demo/__init__.py`, which is all `--demo` reads. See server/demo/README.md.
"""
