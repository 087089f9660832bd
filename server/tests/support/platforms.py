"""Skip marks for what only POSIX systems have, each with its reason written once.

Everything else in the suite runs on Windows too; these mark the few checks that have no meaning there.
"""

from __future__ import annotations

import sys

import pytest

WINDOWS = sys.platform == "win32"

posix_signals = pytest.mark.skipif(
    WINDOWS,
    reason="POSIX signals: on Windows Popen.send_signal(SIGINT) raises and SIGTERM is TerminateProcess "
    "(exit status 1, no handler runs), so a graceful signal stop cannot be tested there",
)
posix_permissions = pytest.mark.skipif(
    WINDOWS,
    reason="POSIX file modes: Windows has no group/other permission bits (chmod only sets the read-only flag)",
)
