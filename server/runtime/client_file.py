"""Checks the OAuth client file (`credentials.json`) before Google's libraries read it.

The libraries answer a bad file with their own errors (`JSONDecodeError ... line 2 column 1`, "Client secrets
must be for a web or installed app", `IsADirectoryError`); a person needs the file's path and what to do.
Used by `auth_cli.py` (before the consent flow) and by `--check`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from server.hints import NEW_CLIENT_FILE


@dataclass(frozen=True)
class ClientFileState:
    state: str  # "ok", "warn" (usable, with a caveat), "fail" (unusable), "missing"
    message: str


def inspect_client_file(path: Path) -> ClientFileState:
    if not path.exists():
        return ClientFileState("missing", f"No OAuth client file at {path}.")
    if path.is_dir():
        return ClientFileState("fail", f"{path} is a folder, not the OAuth client file. {NEW_CLIENT_FILE}.")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        return ClientFileState("fail", f"Cannot read the OAuth client file {path} ({reason}). {NEW_CLIENT_FILE}.")
    try:
        data = json.loads(text)
    except ValueError:
        return ClientFileState("fail", f"{path} is not valid JSON (truncated or edited by hand?). {NEW_CLIENT_FILE}.")
    if not isinstance(data, dict) or not ({"installed", "web"} & set(data)):
        return ClientFileState(
            "fail",
            f"{path} is JSON but not an OAuth client file (it has no 'installed' section: a service-account key or "
            f"another file?). {NEW_CLIENT_FILE}.",
        )
    kind = "installed" if "installed" in data else "web"
    client = data[kind]
    if not isinstance(client, dict) or not client.get("client_id") or not client.get("client_secret"):
        return ClientFileState("fail", f"{path} lacks a client_id or client_secret. {NEW_CLIENT_FILE}.")
    if kind == "web":
        return ClientFileState(
            "warn",
            f"{path} is a 'Web application' client: Google will refuse its redirect to this computer "
            f"(redirect_uri_mismatch) unless http://localhost is registered for it. {NEW_CLIENT_FILE}.",
        )
    return ClientFileState("ok", f"OAuth client file {path} (Desktop app)")
