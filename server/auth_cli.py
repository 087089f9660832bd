"""One-time authorization: run `python server/auth_cli.py` in a terminal with a browser.

Runs Google's installed-app OAuth flow (read-only scope unless `--scopes` asks for more, offline access, consent
prompt so a refresh token is always issued), writes the token file atomically with mode 0600 with the scopes
Google actually granted, then proves it works by asking Gmail for the account's address, which it records in the
file. The MCP server itself never does this: it only refreshes the token written here. With no browser on this
machine it prints the URL instead, and waits a bounded time for Google's answer.

Several accounts: `--account work` writes `tokens/work.json` (a 0700 folder beside `.token.json`; the plain
`.token.json` is the account `default`), `--list` shows them, `--remove work` deletes one. `--encrypt` seals the
file with a key from the OS keyring or GMAIL_MCP_TOKEN_KEY (`runtime/token_crypto.py`). `--scopes
readonly,compose,modify` asks for the write tools' access as well (`scopes.py`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
import webbrowser
from pathlib import Path
from typing import Any

from server.runtime.client_file import inspect_client_file
from server.runtime.config import DEFAULT_ACCOUNT, GMAIL_READONLY_SCOPE, Settings, ensure_home, load_settings

DEFAULT_WAIT_S = 300  # how long the consent flow waits for the browser's answer
CREDENTIALS_HELP = """\
No OAuth client file at {path}.

Create one (5 minutes, once):
  1. Open https://console.cloud.google.com/ and create (or pick) a project.
  2. APIs & Services > Library: enable the "Gmail API".
  3. APIs & Services > OAuth consent screen: user type "External", fill in the app name and your email,
     and add your own Gmail address under "Test users".
  4. APIs & Services > Credentials > Create credentials > OAuth client ID > Application type "Desktop app".
  5. Download the JSON and save it as:
       {path}
     (or point GMAIL_CREDENTIALS_PATH at it), then run this command again.
"""


def describe_consent_failure(exc: BaseException, *, wait_s: int = DEFAULT_WAIT_S) -> str:
    """Guidance for what goes wrong in the browser step, instead of oauthlib's traceback."""
    text = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    if type(exc).__name__ == "WSGITimeoutError":
        return (
            f"Authorization timed out: no answer from the browser within {wait_s} s.\nRun this command again (use "
            "--wait SECONDS for more time, --no-browser to copy the URL by hand)."
        )
    if isinstance(exc, webbrowser.Error):
        return f"Authorization failed: {text}.\nRun this command again with --no-browser and open the URL yourself."
    if "redirect_uri_mismatch" in text:
        return (
            f"Authorization failed: {text}\nThe OAuth client is not a 'Desktop app' client. Create one under APIs & "
            "Services > Credentials, download its JSON as credentials.json, and run this again."
        )
    if "Scope has changed" in text or "scope" in type(exc).__name__.lower():
        return (
            f"Authorization failed: {text}\nOn Google's consent screen, tick the box that allows reading your "
            "email (View your email messages and settings), then run this command again."
        )
    if "access_denied" in text or "AccessDenied" in type(exc).__name__:
        return (
            f"Authorization failed: {text}\nAccess was denied. If Google said the app is in testing, add your "
            "address under OAuth consent screen > Test users in the Google Cloud console, then run this again."
        )
    if "Mismatching" in type(exc).__name__ or "state" in text.lower():
        return f"Authorization failed: {text}\nThe browser answered an older login attempt: run this command again."
    if _is_network_failure(exc):
        return (
            f"Authorization failed: Google could not be reached to finish the sign-in ({text}).\nCheck this "
            "computer's internet connection (behind a proxy, set HTTPS_PROXY), then run this command again."
        )
    return f"Authorization failed ({type(exc).__name__}): {text}"


def _is_network_failure(exc: BaseException) -> bool:
    """A connection that failed on the way to Google's token endpoint (requests wraps the OSError)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, (OSError, TimeoutError)) or type(seen).__name__ in ("ConnectionError", "Timeout"):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def browser_available() -> bool:
    """Whether a browser that can do Google's consent opens here. A Linux machine with no display offers only
    console browsers (w3m, lynx: they would take over the terminal and cannot sign in), unless `BROWSER` names
    one on purpose (`wslview` under WSL, say)."""
    if sys.platform.startswith("linux") and not any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")
    ):
        return False
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


def free_port() -> int:
    """A port for Google's redirect, chosen up front so the instructions can name it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("localhost", 0))
        return int(probe.getsockname()[1])


def _cancel_on_sigterm() -> None:
    def handler(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, handler)


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 2


def requested_scopes(names: str | None) -> list[str]:
    """`--scopes readonly,compose,modify` -> scope URLs; read access is always included (the server needs it).

    Raises ValueError naming the valid names for an unknown one.
    """
    from server import scopes

    wanted = [name.strip().lower() for name in (names or "readonly").replace(" ", ",").split(",") if name.strip()]
    known = {**scopes.BY_NAME, **scopes.GROUP_SCOPES}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(f"unknown scope name(s) {', '.join(unknown)}; valid: {', '.join(known)}")
    found = list(dict.fromkeys(url for name in wanted for url in scopes.expand(name)))
    if not scopes.covers(found, scopes.READ):
        found.insert(0, GMAIL_READONLY_SCOPE)
    return found


def granted_scopes(credentials: Any, requested: list[str]) -> list[str]:
    """What Google granted (a person may untick boxes on the consent screen), else what was asked for."""
    granted = getattr(credentials, "granted_scopes", None)
    if isinstance(granted, str):
        granted = granted.split()
    return sorted(set(granted)) if granted else list(requested)


def authorize(
    settings: Settings, *, open_browser: bool, port: int, wait_s: int = DEFAULT_WAIT_S, scopes: list[str] | None = None
) -> Path:
    """Runs the consent flow and writes the token file (recording the granted scopes); returns its path."""
    from server.auth import write_token_file
    from server.consent_flow import ConsentFlow

    requested = scopes or [GMAIL_READONLY_SCOPE]
    # A person may grant fewer scopes than asked (granular consent): record what was granted instead of failing.
    os.environ.setdefault("OAUTHLIB_RELAX_TOKEN_SCOPE", "1")
    flow = ConsentFlow.from_client_secrets_file(str(settings.credentials_path), scopes=requested)
    ConsentFlow.describe_failure = staticmethod(lambda exc: describe_consent_failure(exc, wait_s=wait_s))
    port = port or free_port()
    minutes = f"{wait_s // 60} minutes" if wait_s % 60 == 0 else f"{wait_s} seconds"
    if open_browser:
        prompt = "A browser window opens for Google's consent. If it does not, open this URL:\n\n    {url}\n\n"
    else:
        prompt = (
            f"Open this URL in a browser to authorize {'read-only ' if requested == [GMAIL_READONLY_SCOPE] else ''}"
            "Gmail access:\n\n    {url}\n\n"
            f"Browser on another machine? Forward the port first: ssh -L {port}:localhost:{port} <this-host>\n"
        )
    prompt += f"Waiting up to {minutes} for Google's answer on http://localhost:{port}/ (Ctrl-C cancels)..."
    credentials = flow.run_local_server(
        host="localhost",
        port=port,
        open_browser=open_browser,
        timeout_seconds=wait_s,
        authorization_prompt_message=prompt,
        success_message="Gmail MCP server authorized. You can close this tab and return to the terminal.",
        access_type="offline",
        prompt="consent",
    )
    if not credentials.refresh_token:
        raise RuntimeError(
            "Google returned no refresh token; revoke the app's access at "
            "https://myaccount.google.com/permissions and run this again."
        )
    from server.app.token_folder import now_iso

    info = {**json.loads(credentials.to_json()), "authorized_at": now_iso()}  # for the Testing-mode 7-day note
    info["scopes"] = granted_scopes(credentials, requested)  # what Google granted: a refresh never asks for more
    write_token_file(settings.token_path, info, seal_with=settings.token_encryption)
    return settings.token_path


def verify(settings: Settings) -> str:
    """Proves the token works end to end: the account's address from users.getProfile, recorded in the file so
    results can say whose mail they hold."""
    from server.auth import TokenStore
    from server.gmail_client import GmailClient

    tokens = TokenStore(settings)
    address = str(GmailClient(settings, tokens).get_profile().get("emailAddress"))
    with contextlib.suppress(OSError):  # a read-only token file still works; results then ask Gmail once
        tokens.record_account(address)
    return address


def list_accounts(settings: Settings) -> int:
    from server.app.token_folder import describe_accounts

    entries = describe_accounts(settings)
    print(f"Accounts (token folder {settings.accounts_dir}):")
    for entry in entries:
        state = entry.problem or (entry.email or "address not recorded yet")
        extras = [f"encrypted: {entry.encrypted}"] if entry.encrypted else []
        if entry.authorized_at:
            extras.append(f"authorized {entry.authorized_at[:10]}")
        suffix = f" ({', '.join(extras)})" if extras else ""
        print(f"  {entry.name:<16} {state}{suffix}\n  {'':<16} {entry.path}")
    return 0


def remove_account_file(settings: Settings, name: str) -> int:
    from server.app.token_folder import describe_accounts, remove_account

    try:
        path = remove_account(settings, name)
    except ValueError as exc:
        return _fail(str(exc))
    except FileNotFoundError:
        names = ", ".join(entry.name for entry in describe_accounts(settings))
        return _fail(f"No account named {name!r} has a token here. Accounts: {names}.")
    print(
        f"Removed account {name!r} ({path}). A running server stops serving it at its next restart. To revoke "
        "Google's grant as well: https://myaccount.google.com/permissions"
    )
    return 0


def _access_words(path: Path) -> str:
    """`read-only`, or what else the token allows (write tools still need GMAIL_MCP_WRITE_TOOLS)."""
    from server import scopes
    from server.auth import read_token_info

    try:
        granted = scopes.parse_granted(read_token_info(path).get("scopes")) or frozenset()
    except Exception:
        return "read-only"
    names = {url: name for name, url in scopes.BY_NAME.items()}
    extra = sorted(names.get(scope, scope) for scope in granted if scope != scopes.READONLY)
    return "read-only" if not extra else "read; also granted: " + ", ".join(extra)


def _report_grant(path: Path, wanted: list[str]) -> None:
    from server import scopes
    from server.auth import read_token_info

    granted = scopes.parse_granted(read_token_info(path).get("scopes")) or frozenset()
    names = {url: name for name, url in scopes.BY_NAME.items()}
    print("Granted: " + ", ".join(sorted(names.get(scope, scope) for scope in granted)))
    refused = [names.get(scope, scope) for scope in wanted if scope not in granted]
    if refused:
        print(f"Not granted (unticked on Google's screen?): {', '.join(refused)}; the tools needing it stay hidden.")


def main(argv: list[str] | None = None) -> int:
    from server.hints import installed_command

    parser = argparse.ArgumentParser(
        prog=installed_command() or (Path(sys.argv[0]).name if sys.argv[0] else "auth_cli.py"),
        description="One-time authorization: Google's consent in a browser, then a token file the server uses.",
    )
    parser.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    parser.add_argument("--port", type=int, default=0, help="local port for Google's redirect (default: any free)")
    parser.add_argument(
        "--wait", type=int, default=DEFAULT_WAIT_S, metavar="SECONDS", help="how long to wait for Google's answer"
    )
    parser.add_argument(
        "--credentials", help="OAuth client JSON (default: $GMAIL_CREDENTIALS_PATH or credentials.json)"
    )
    parser.add_argument("--token", help="where to write the token (default: $GMAIL_TOKEN_PATH or .token.json)")
    parser.add_argument("--verify-only", action="store_true", help="only check an existing token")
    parser.add_argument(
        "--account", metavar="NAME", help="which account (default: 'default', the .token.json); e.g. --account work"
    )
    parser.add_argument("--list", action="store_true", help="list the configured accounts and exit")
    parser.add_argument("--remove", metavar="NAME", help="delete an account's token file and exit")
    parser.add_argument(
        "--encrypt",
        nargs="?",
        const="auto",
        metavar="KEY_SOURCE",
        help="encrypt the token file: keyring, env (GMAIL_MCP_TOKEN_KEY), auto (keyring if usable, else env), off",
    )
    parser.add_argument(
        "--scopes",
        metavar="NAMES",
        help="what to ask Google for, comma separated: readonly (default), compose (drafts and sending), modify "
        "(labels, archive, trash; also drafts), send, labels, settings (filters), contacts (saved and other "
        "contacts), directory (Workspace directory); read access is always included",
    )
    args = parser.parse_args(argv)
    try:
        wanted = requested_scopes(args.scopes)
    except ValueError as exc:
        return _fail(f"--scopes: {exc}")

    ensure_home()
    try:
        settings = load_settings()
    except ValueError as exc:  # a bad GMAIL_* variable or .env line: say which, not a traceback
        return _fail(f"Invalid setting: {exc}")
    try:
        name = DEFAULT_ACCOUNT if args.account is None else _account_name(args.account)
        if args.encrypt:
            settings = settings.with_overrides(token_encryption=_encryption(args.encrypt))
    except ValueError as exc:  # a bad --account name or --encrypt source: the message says what is accepted
        return _fail(str(exc))
    if args.credentials:
        settings = settings.with_overrides(credentials_path=Path(args.credentials).expanduser().resolve())
    if args.list:
        return list_accounts(settings)
    if args.remove:
        return remove_account_file(settings, args.remove)
    if args.token:
        settings = settings.with_overrides(token_path=Path(args.token).expanduser().resolve())
    elif name != DEFAULT_ACCOUNT:
        from server.app.token_folder import private_folder, token_path

        private_folder(settings.accounts_dir)
        settings = settings.with_overrides(token_path=token_path(settings, name))

    from server.errors import GmailError

    if not args.verify_only:
        client_file = inspect_client_file(settings.credentials_path)
        if client_file.state == "missing":
            return _fail(CREDENTIALS_HELP.format(path=settings.credentials_path))
        if client_file.state == "fail":
            return _fail(client_file.message)
        if client_file.state == "warn":
            print(f"Warning: {client_file.message}", file=sys.stderr)
        open_browser = not args.no_browser
        if open_browser and not browser_available():
            print("No browser can be opened on this machine: printing the URL instead.", file=sys.stderr)
            open_browser = False
        _cancel_on_sigterm()
        try:
            path = authorize(settings, open_browser=open_browser, port=args.port, wait_s=args.wait, scopes=wanted)
        except KeyboardInterrupt:
            return _fail("Authorization cancelled.")
        except Exception as exc:  # oauthlib raises plain Warning/Exception subclasses: no tracebacks here
            return _fail(describe_consent_failure(exc, wait_s=args.wait))
        print(f"Token written to {path} (mode 600).")
        _report_grant(path, wanted)
    try:
        address = verify(settings)
    except GmailError as error:
        return _fail(f"The token does not work yet: {error.message}\nFix: {error.hint}")
    whose = "" if name == DEFAULT_ACCOUNT else f" account {name!r}"
    print(f"Authorized{whose}: the server can now read {address} ({_access_words(settings.token_path)}).")
    return 0


def _account_name(text: str) -> str:
    from server.app.token_folder import check_name

    return check_name(text)


def _encryption(text: str) -> str:
    from server.runtime.token_crypto import parse_scheme

    return parse_scheme(text)


def console_main() -> None:
    """The `gmail-mcp-auth` command."""
    sys.exit(main())


if __name__ == "__main__":
    console_main()
