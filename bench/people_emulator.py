"""The Gmail emulator serving several people, each with their own copy of the demo mailbox, as its own process.

    .venv/bin/python -m bench.people_emulator --people 20 --latency-ms 100 --scratch DIR

For bench/remote_signin.py: person `i` is `personNN@example.com` (`person00` owns the primary mailbox). The
emulator plays Google for them too (`server/emulator/google_oauth.py`: sign-in, code exchange, ID tokens), and each
Google account reaches only its own mailbox. Writes into DIR the Web client file Cloud Console would download
(`web-client.json`; callbacks are registered later over the control plane, once the server's port is known) and an
authorized-user token per person (`token.json`, `tokens/personNN.json`) for the static-bearer comparison. Prints
the base URL on stdout once it accepts connections, like `python -m server.emulator`; runs until SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.harness import DEMO_MAILBOX, ROOT, EmulatorProcess


def person(number: int) -> str:
    return f"person{number:02d}@example.com"


def account_name(number: int) -> str:
    """The account name of a person's token in the static-bearer set-up (`default` for the primary one)."""
    return "default" if number == 0 else f"person{number:02d}"


def token_path(scratch: Path, number: int) -> Path:
    """The primary account's token beside the token folder (as `.token.json` is), the others in it."""
    return scratch / "token.json" if number == 0 else scratch / "tokens" / f"{account_name(number)}.json"


def client_file_path(scratch: Path) -> Path:
    return scratch / "web-client.json"


def serve(people: int, latency_ms: float, scratch: Path) -> None:
    from server.emulator.runner import start_emulator

    others = {person(number): DEMO_MAILBOX for number in range(1, people)}
    emulator = start_emulator(DEMO_MAILBOX, latency_ms=latency_ms, rebase_dates=True, email=person(0), mailboxes=others)
    (scratch / "tokens").mkdir(parents=True, exist_ok=True, mode=0o700)
    for number in range(people):
        emulator.write_token(token_path(scratch, number), user=None if number == 0 else person(number))
    emulator.web_client_file(client_file_path(scratch))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    sys.stdout.write(emulator.url + "\n")
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        emulator.stop()


@contextmanager
def people_emulator(people: int, latency_ms: float, scratch: Path) -> Iterator[EmulatorProcess]:
    """Starts `python -m bench.people_emulator` and waits for its URL; stops it on exit."""
    command = ["-m", "bench.people_emulator", "--people", str(people), "--latency-ms", str(latency_ms)]
    process = subprocess.Popen(
        [sys.executable, *command, "--scratch", str(scratch)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the emulator did not start (first line: {url!r})")
        yield EmulatorProcess(url, token_path(scratch, 0), process)
    finally:
        process.terminate()
        process.wait(timeout=10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.people_emulator", description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=20, help="Google accounts, one mailbox each (default 20)")
    parser.add_argument("--latency-ms", type=float, default=100, help="added to every round trip (default 100)")
    parser.add_argument("--scratch", type=Path, required=True, help="where the client file and tokens go")
    args = parser.parse_args(argv)
    serve(args.people, args.latency_ms, args.scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
