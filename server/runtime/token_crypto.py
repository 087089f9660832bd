"""Token files encrypted at rest (optional): Fernet, with the key in the OS keyring or in an environment variable.

The plain token file with mode 0600 stays the default: on a personal laptop it is as safe as the login that
guards it. Encryption helps where files travel or are shared (backups, a synced folder, a container volume):
`GMAIL_MCP_TOKEN_ENCRYPTION` (or `auth_cli.py --encrypt`) turns it on:

- `keyring`: a random key kept in the OS keyring (macOS Keychain, Windows Credential Manager, the Secret
  Service on Linux desktops), through the optional `keyring` package (`pip install keyring`);
- `env`: the key from `GMAIL_MCP_TOKEN_KEY` (a Fernet key; containers get it as a secret);
- `auto`: the keyring when one is usable, else `GMAIL_MCP_TOKEN_KEY`.

A sealed file is JSON naming where its key lives, so it is recognised by its content and read back without any
setting, wherever the key is available:

    {"gmail_mcp_sealed": 1, "key_source": "keyring" | "env", "fernet": "<ciphertext>"}
"""

from __future__ import annotations

import json
import os
from typing import Any, TypeGuard

from server.errors import AuthError

SEALED_MARK = "gmail_mcp_sealed"
ENV_KEY = "GMAIL_MCP_TOKEN_KEY"
KEYRING_SERVICE = "gmail-mcp"
KEYRING_ENTRY = "token-encryption-key"
SCHEMES = ("off", "auto", "keyring", "env")
NEW_KEY_COMMAND = 'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'


class KeyUnavailable(Exception):
    """The key a sealed file (or the configured scheme) needs cannot be had; the message says why and how."""


def is_sealed(data: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(data, dict) and data.get(SEALED_MARK) == 1


def parse_scheme(text: str | None) -> str:
    value = (text or "off").strip().lower() or "off"
    if value in ("none", "no", "false", "0"):
        value = "off"
    if value not in SCHEMES:
        raise ValueError(f"GMAIL_MCP_TOKEN_ENCRYPTION must be one of {', '.join(SCHEMES)}, got {text!r}")
    return value


def _fernet(key: bytes) -> Any:
    from cryptography.fernet import Fernet

    try:
        return Fernet(key)
    except (ValueError, TypeError):
        raise KeyUnavailable(
            f"{ENV_KEY} is not a Fernet key (32 bytes, url-safe base64). Generate one with: {NEW_KEY_COMMAND}"
        ) from None


def _env_key() -> bytes:
    key = os.environ.get(ENV_KEY, "").strip()
    if not key:
        raise KeyUnavailable(f"{ENV_KEY} is not set. Generate a key with: {NEW_KEY_COMMAND}")
    return key.encode("ascii", "replace")


def _keyring() -> Any:
    """The keyring module with a usable backend, or KeyUnavailable (not installed, or no OS keyring here)."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        raise KeyUnavailable("the optional `keyring` package is not installed (pip install keyring)") from None
    if isinstance(keyring.get_keyring(), fail.Keyring):
        raise KeyUnavailable(f"no OS keyring is available on this machine; use {ENV_KEY} instead") from None
    return keyring


def _keyring_key(*, create: bool) -> bytes:
    keyring = _keyring()
    try:
        stored: str | None = keyring.get_password(KEYRING_SERVICE, KEYRING_ENTRY)
        if stored:
            return stored.encode("ascii", "replace")
        if not create:
            raise KeyUnavailable(f"the OS keyring holds no '{KEYRING_SERVICE}' key (was it deleted?)")
        from cryptography.fernet import Fernet

        key = Fernet.generate_key()
        keyring.set_password(KEYRING_SERVICE, KEYRING_ENTRY, key.decode("ascii"))
        return key
    except KeyUnavailable:
        raise
    except Exception as exc:  # keyring backends raise their own error types (locked keychain, D-Bus errors)
        raise KeyUnavailable(f"the OS keyring refused access ({type(exc).__name__})") from None


def keyring_usable() -> bool:
    try:
        _keyring()
    except KeyUnavailable:
        return False
    return True


def resolve_scheme(scheme: str) -> str:
    """`auto` -> `keyring` when usable, else `env` when GMAIL_MCP_TOKEN_KEY is set; raises KeyUnavailable."""
    if scheme != "auto":
        return scheme
    if keyring_usable():
        return "keyring"
    if os.environ.get(ENV_KEY, "").strip():
        return "env"
    raise KeyUnavailable(f"neither an OS keyring (the `keyring` package) nor {ENV_KEY} is available")


def _key(source: str, *, create: bool) -> bytes:
    if source == "keyring":
        return _keyring_key(create=create)
    if source == "env":
        return _env_key()
    raise KeyUnavailable(f"unknown key source {source!r}")


def key_for(scheme: str) -> tuple[str, bytes]:
    """The key source `scheme` (keyring, env or auto) resolves to, and its Fernet key (made in the keyring on first
    use); raises KeyUnavailable. The remote mode's state store seals Google grants with it."""
    source = resolve_scheme(scheme)
    return source, _key(source, create=True)


def seal(info: dict[str, Any], scheme: str) -> dict[str, Any]:
    """The sealed form of a token's JSON under `scheme` (keyring, env or auto); raises KeyUnavailable."""
    source = resolve_scheme(scheme)
    cipher = _fernet(_key(source, create=True))
    token = cipher.encrypt(json.dumps(info).encode("utf-8")).decode("ascii")
    return {SEALED_MARK: 1, "key_source": source, "fernet": token}


def unseal(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The token JSON inside a sealed file; every failure is an AuthError saying what is missing."""
    from cryptography.fernet import InvalidToken

    source = str(data.get("key_source"))
    try:
        cipher = _fernet(_key(source, create=False))
        plain = cipher.decrypt(str(data.get("fernet", "")).encode("ascii", "replace"))
    except KeyUnavailable as exc:
        raise AuthError(
            f"The token file {where} is encrypted with a key from {_describe(source)}, and the key is not "
            f"available: {exc}",
            hint=f"Make the key available to the server ({_describe(source)}), or delete the file and authorize again.",
        ) from None
    except InvalidToken:
        raise AuthError(
            f"The token file {where} cannot be decrypted with the key from {_describe(source)} (another key, or "
            "the file was altered).",
            hint="Provide the key it was written with, or delete the file and authorize again.",
        ) from None
    try:
        info = json.loads(plain)
    except ValueError:
        info = None
    if not isinstance(info, dict):
        raise AuthError(f"The token file {where} decrypts to something that is not a token.")
    return info


def sealed_with(data: object) -> str | None:
    """The key source of a sealed file's JSON, None for a plain one."""
    return str(data.get("key_source")) if is_sealed(data) else None


def _describe(source: str) -> str:
    return "the OS keyring" if source == "keyring" else f"the {ENV_KEY} environment variable"
