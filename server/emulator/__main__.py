"""`python -m server.emulator --mailbox PATH`: serve a mailbox until Ctrl-C or SIGTERM.

Prints exactly one line to stdout, the base URL, once the server accepts connections, so a parent process can
read one line and go; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from .history import DEFAULT_RETAINED_RECORDS
from .payloads import BODY_CHARSETS
from .runner import start_emulator


class _JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {"level": record.levelname.lower(), "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m server.emulator", description="Local Gmail API emulator.")
    parser.add_argument("--mailbox", required=True, help="directory of .eml/.mbox files, or one .mbox file")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    parser.add_argument("--latency-ms", type=float, default=0, help="added to every outer round trip")
    parser.add_argument("--body-charset", choices=BODY_CHARSETS, default="utf8", help="text body bytes served")
    parser.add_argument("--write-token", metavar="FILE", help="write an authorized-user token file (0600)")
    parser.add_argument(
        "--scopes",
        metavar="NAMES",
        help="with --write-token: the token's scopes (readonly,compose,send,modify,labels,full; settings: "
        "gmail.settings.basic; contacts: the two People API read scopes; directory); calls outside them "
        "answer 403 insufficientPermissions (default: an unrestricted test token recorded as readonly)",
    )
    parser.add_argument(
        "--alias",
        action="append",
        default=[],
        metavar="ADDRESS[:SIGNATURE]",
        help="a send-as identity of the owner, with its HTML signature (repeatable; the owner's address sets the "
        "primary's signature)",
    )
    parser.add_argument("--rebase-dates", action="store_true", help="shift dates so the newest is 1 hour old")
    parser.add_argument("--token-ttl", type=float, default=3600, metavar="SECONDS", help="access token lifetime")
    parser.add_argument("--email", help="the mailbox owner's address (default: guessed from the mail)")
    parser.add_argument(
        "--history-limit", type=int, default=DEFAULT_RETAINED_RECORDS, metavar="N", help="history records retained"
    )
    parser.add_argument("--log-level", default="INFO", help="stderr log level (DEBUG logs every request)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonLines())
    logger = logging.getLogger("server.emulator")
    logger.addHandler(handler)
    logger.setLevel(args.log_level.upper())
    logger.propagate = False

    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        emulator = start_emulator(
            args.mailbox,
            port=args.port,
            latency_ms=args.latency_ms,
            body_charset=args.body_charset,
            rebase_dates=args.rebase_dates,
            token_ttl_s=args.token_ttl,
            email=args.email,
            history_limit=args.history_limit,
        )
    except (OSError, ValueError) as exc:
        logger.error("cannot start: %s", exc)
        return 2
    for alias in args.alias:
        address, _, signature = alias.partition(":")
        emulator.add_send_as(address, signature=signature)
    if args.write_token:
        try:
            path = emulator.write_token(args.write_token, scopes=args.scopes.split(",") if args.scopes else None)
        except ValueError as exc:
            logger.error("cannot write the token: %s", exc)
            emulator.stop()
            return 2
        logger.info("token file written to %s", path)
    logger.info("serving %d messages at %s", len(emulator.store.messages), emulator.url)
    sys.stdout.write(emulator.url + "\n")
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        emulator.stop()
        logger.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
