"""Settings of the streamable HTTP mode (`python -m server.main --http [HOST:]PORT`), from the environment.

    GMAIL_MCP_HTTP_TOKEN             one bearer token / API key that reaches every account
    GMAIL_MCP_HTTP_TOKEN_FILE        a file of tokens, one per line: `TOKEN` (every account) or
                                     `TOKEN work,personal` (only those accounts); `#` starts a comment
    GMAIL_MCP_HTTP_ALLOWED_ORIGINS   browser origins allowed besides loopback ones (comma-separated)
    GMAIL_MCP_HTTP_ALLOWED_HOSTS     Host header values accepted on a loopback bind besides loopback names
    GMAIL_MCP_HTTP_MAX_BODY_BYTES    largest request body (default 1 MiB)
    GMAIL_MCP_HTTP_MAX_CONCURRENT    POST requests served at once; more get 503 (default 64)
    GMAIL_MCP_HTTP_METRICS           /metrics: auth (behind the token, default), open, off
    GMAIL_MCP_HTTP_STATELESS         1: no legacy sessions (several workers without sticky routing)
    GMAIL_MCP_HTTP_JSON_RESPONSES    1: answer handshake-era calls with plain JSON, not an event stream (less CPU
                                     per call; the server then cannot ask the client anything during a call)
    GMAIL_MCP_HTTP_AUTH_FAILURES     failed authentications per client per minute before 429 (default 10)
    GMAIL_MCP_HTTP_SHUTDOWN_GRACE_S  how long SIGTERM waits for calls in flight (default 25)
    GMAIL_MCP_HTTP_FORWARDED_ALLOW_IPS  proxies whose X-Forwarded-For is trusted (default 127.0.0.1)

Secrets are kept only as SHA-256 digests: compared in constant time, never logged, never sent anywhere.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

MIN_TOKEN_CHARS = 16


def new_token_command() -> str:
    """How to make a token with nothing but this installation (stock macOS and Debian have no `python`)."""
    from server.hints import server_command

    return server_command("--new-http-token")


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class HttpCredential:
    label: str  # names the credential in logs and session ownership ("token 1", "token file line 3")
    digest: bytes  # SHA-256 of the secret
    accounts: frozenset[str] | None  # the accounts it reaches; None: every configured account


@dataclass(frozen=True)
class HttpSettings:
    host: str
    port: int
    credentials: tuple[HttpCredential, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    max_body_bytes: int = 1024 * 1024
    max_concurrent: int = 64
    metrics: str = "auth"
    stateless: bool = False
    json_responses: bool = False
    auth_failures_per_minute: int = 10
    shutdown_grace_s: float = 25.0
    forwarded_allow_ips: str = "127.0.0.1"

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}/mcp"


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_bind(text: str) -> tuple[str, int]:
    """`8080` -> (127.0.0.1, 8080); `0.0.0.0:8080`; `[::1]:8080`; `localhost:0` (any free port)."""
    value = text.strip()
    host, port_text = "127.0.0.1", value
    if value.startswith("["):
        close = value.find("]")
        if close < 0 or value[close + 1 : close + 2] != ":":
            raise ValueError(f"--http {text!r}: write an IPv6 address as [::1]:PORT")
        host, port_text = value[1:close], value[close + 2 :]
    elif ":" in value:
        host, _, port_text = value.rpartition(":")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"--http {text!r}: expected [HOST:]PORT, e.g. 8080 or 0.0.0.0:8080") from None
    if not 0 <= port <= 65535 or not host:
        raise ValueError(f"--http {text!r}: expected [HOST:]PORT with a port from 0 to 65535")
    return host, port


def digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).digest()


def _credential(secret: str, label: str, accounts: frozenset[str] | None) -> HttpCredential:
    if len(secret) < MIN_TOKEN_CHARS:
        raise ValueError(
            f"the HTTP token ({label}) is shorter than {MIN_TOKEN_CHARS} characters; generate one with: "
            f"{new_token_command()}"
        )
    return HttpCredential(label, digest(secret), accounts)


def read_token_lines(text: str, source: str) -> list[HttpCredential]:
    credentials = []
    for number, line in enumerate(text.splitlines(), 1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        secret, _, rest = content.partition(" ")
        names = frozenset(name.strip().lower() for name in rest.replace(" ", ",").split(",") if name.strip())
        accounts = None if not names or names == {"*"} else names
        credentials.append(_credential(secret, f"{source} line {number}", accounts))
    return credentials


def _csv(env: dict[str, str], name: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in env.get(name, "").split(",") if item.strip())


def _flag(env: dict[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _int(env: dict[str, str], name: str, default: int, minimum: int) -> int:
    raw = env.get(name, "").strip()
    try:
        value = int(raw) if raw else default
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {raw!r}")
    return value


def load_http_settings(bind: str, env: dict[str, str] | None = None) -> HttpSettings:
    """The HTTP settings for `--http BIND`; ValueError for anything unusable, including a non-loopback bind
    without a token (anyone who can reach the port would read the mailbox)."""
    env = dict(os.environ) if env is None else env
    host, port = parse_bind(bind)
    credentials: list[HttpCredential] = []
    if "GMAIL_MCP_HTTP_TOKEN" in env:
        # Set but empty is a recipe that failed (`$(command-not-found)`), never a wish to run without a token.
        if not env["GMAIL_MCP_HTTP_TOKEN"].strip():
            raise ValueError(f"GMAIL_MCP_HTTP_TOKEN is set but empty; generate a token with: {new_token_command()}")
        credentials.append(_credential(env["GMAIL_MCP_HTTP_TOKEN"].strip(), "GMAIL_MCP_HTTP_TOKEN", None))
    token_file = env.get("GMAIL_MCP_HTTP_TOKEN_FILE", "").strip()
    if token_file:
        path = Path(token_file).expanduser()
        try:
            from_file = read_token_lines(path.read_text(encoding="utf-8"), path.name)
        except OSError as exc:
            raise ValueError(f"GMAIL_MCP_HTTP_TOKEN_FILE {path}: {exc.strerror}") from None
        if not from_file:
            raise ValueError(
                f"GMAIL_MCP_HTTP_TOKEN_FILE {path} holds no token; generate one with: {new_token_command()}"
            )
        credentials += from_file
    if not credentials and not is_loopback(host):
        raise ValueError(
            f"refusing to serve on {host}, which other machines can reach, without a token: set "
            f"GMAIL_MCP_HTTP_TOKEN (or GMAIL_MCP_HTTP_TOKEN_FILE); generate one with: {new_token_command()}"
        )
    metrics = (env.get("GMAIL_MCP_HTTP_METRICS") or "auth").strip().lower()
    if metrics not in ("auth", "open", "off"):
        raise ValueError(f"GMAIL_MCP_HTTP_METRICS must be auth, open or off, got {metrics!r}")
    grace = env.get("GMAIL_MCP_HTTP_SHUTDOWN_GRACE_S", "").strip()
    try:
        shutdown_grace_s = float(grace) if grace else 25.0
    except ValueError:
        raise ValueError(f"GMAIL_MCP_HTTP_SHUTDOWN_GRACE_S must be a number, got {grace!r}") from None
    return HttpSettings(
        host=host,
        port=port,
        credentials=tuple(credentials),
        allowed_origins=tuple(origin.lower().rstrip("/") for origin in _csv(env, "GMAIL_MCP_HTTP_ALLOWED_ORIGINS")),
        allowed_hosts=tuple(name.lower() for name in _csv(env, "GMAIL_MCP_HTTP_ALLOWED_HOSTS")),
        max_body_bytes=_int(env, "GMAIL_MCP_HTTP_MAX_BODY_BYTES", 1024 * 1024, 1024),
        max_concurrent=_int(env, "GMAIL_MCP_HTTP_MAX_CONCURRENT", 64, 1),
        metrics=metrics,
        stateless=_flag(env, "GMAIL_MCP_HTTP_STATELESS"),
        json_responses=_flag(env, "GMAIL_MCP_HTTP_JSON_RESPONSES"),
        auth_failures_per_minute=_int(env, "GMAIL_MCP_HTTP_AUTH_FAILURES", 10, 1),
        shutdown_grace_s=max(shutdown_grace_s, 0.0),
        forwarded_allow_ips=env.get("GMAIL_MCP_HTTP_FORWARDED_ALLOW_IPS", "").strip() or "127.0.0.1",
    )


def check_accounts(settings: HttpSettings, configured: list[str]) -> None:
    """ValueError when a token names an account that has no token file (a typo would silently lock it out)."""
    for credential in settings.credentials:
        unknown = sorted((credential.accounts or frozenset()) - set(configured))
        if unknown:
            raise ValueError(
                f"{credential.label} names account(s) {', '.join(unknown)} with no token; configured accounts: "
                f"{', '.join(configured)}"
            )
