"""K replicas of `python -m server.main --http` as processes behind a real HAProxy on loopback.

`replica_set(emulator, scratch, count=3)` starts the replicas against one emulator (each on a fixed free port, so
a replica restarted later comes back where HAProxy expects it), then HAProxy in front with a generated
configuration (`haproxy_config`): round robin, health checks on `/healthz`, and for handshake-era clients either
routing on `Mcp-Session-Id` (a stick table learnt from the response header; `sticky=True`, the default) or the
server's stateless mode (`sticky=False`: every replica runs with GMAIL_MCP_HTTP_STATELESS=1 and no stick table).
HAProxy runs in the foreground as the current user, writes only its server-state warnings to stderr (request logs
too with GMAIL_MCP_TEST_HAPROXY_LOG=1), and answers on its admin socket (server states, drain, for the tests).
Everything is stopped on exit: replicas with SIGTERM (then SIGKILL), HAProxy with SIGTERM.

`extra_env` is added to every replica's environment and `replica_env(index)` to one replica's: the OAuth sign-in
across replicas (GMAIL_MCP_STORE, GMAIL_MCP_PUBLIC_URL, ...) only needs those. Used by test_replicas*.py and
bench/replicas.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.tests.support.emulator import emulator_env
from server.tests.support.http_server import TEST_SERVER_ENV, HttpServer, http_server, wait_for_exit

START_TIMEOUT_S = 60.0
BACKEND = "replicas"
HEALTH_INTERVAL_MS = 250  # health checks on loopback: frequent, so a killed replica is taken out soon


def haproxy_binary() -> str | None:
    configured = os.environ.get("GMAIL_MCP_TEST_HAPROXY", "").strip()
    return configured or shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy",) if Path(p).exists()), None)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def haproxy_config(front_port: int, replica_ports: list[int], admin_socket: Path, *, sticky: bool) -> str:
    """The load balancer of docs/replicas.md ("Load balancer"), on loopback.

    - round robin, one new connection to a replica per request (`http-server-close`), so a request is never
      written on a kept-alive connection the replica is closing;
    - `retry-on conn-failure 503` with `redispatch`: a request that reached no replica (connection refused by a
      killed or stopping one), or that a stopping replica refused with 503 before doing anything, goes to
      another (`http-buffer-request` keeps the whole request for that). Nothing is retried once a replica
      may have started it (no `empty-response`, no 502 retry), so a send is never repeated by the load balancer;
    - `sticky`: handshake-era sessions stay on the replica that created them (`Mcp-Session-Id` learnt from the
      response, matched on later requests); 2026-07-28 requests carry no session id and are balanced freely.
    """
    servers = "\n".join(
        f"    server r{index} 127.0.0.1:{port} check inter {HEALTH_INTERVAL_MS} fall 3 rise 1"
        for index, port in enumerate(replica_ports)
    )
    stick = (
        "    stick-table type string len 128 size 100k expire 30m\n"
        "    stick match req.hdr(mcp-session-id)\n"
        "    stick store-response res.hdr(mcp-session-id)\n"
        if sticky
        else ""
    )
    logging = (
        "    log stderr format raw local0\n    option httplog\n" if os.environ.get("GMAIL_MCP_TEST_HAPROXY_LOG") else ""
    )
    return f"""global
    maxconn 2000
    stats socket {admin_socket} mode 600 level admin
    tune.bufsize 65536

defaults
    mode http
{logging}    timeout connect 5s
    timeout client 300s
    timeout server 300s
    timeout check 10s
    timeout http-request 30s
    option http-server-close
    option http-buffer-request
    option redispatch 1
    retries 3
    retry-on conn-failure 503

frontend mcp
    bind 127.0.0.1:{front_port}
    default_backend {BACKEND}

backend {BACKEND}
    balance roundrobin
    option httpchk
    http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host 127.0.0.1
    http-check expect status 200
{stick}{servers}
"""


@dataclass
class HaProxy:
    port: int
    process: subprocess.Popen[bytes]
    admin_socket: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def command(self, text: str) -> str:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as admin:
            admin.connect(str(self.admin_socket))
            admin.sendall(text.encode() + b"\n")
            chunks = []
            while chunk := admin.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def stats(self) -> dict[str, dict[str, str]]:
        """{server name: its row of `show stat`} for the replicas' backend."""
        lines = self.command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        rows = {}
        for line in lines[1:]:
            row = dict(zip(header, line.split(","), strict=False))
            if row.get("pxname") == BACKEND and row.get("svname", "").startswith("r"):
                rows[row["svname"]] = row
        return rows

    def server_states(self) -> dict[str, str]:
        """{server name: "UP" | "DOWN" | "DRAIN" | ...}."""
        return {name: row["status"].split(" ")[0] for name, row in self.stats().items()}

    def open_requests(self, name: str) -> int:
        """Requests HAProxy has sent to server `name` that have not ended yet (`scur`; health checks aside)."""
        return int(self.stats()[name]["scur"] or 0)

    def wait_for(self, name: str, status: str, timeout_s: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.server_states().get(name) == status:
                return
            time.sleep(0.05)
        raise RuntimeError(f"HAProxy never saw {name} {status}: {self.server_states()}")


@contextmanager
def haproxy(config: str, folder: Path, front_port: int, admin_socket: Path) -> Iterator[HaProxy]:
    binary = haproxy_binary()
    if binary is None:
        raise RuntimeError("no haproxy binary (install Debian's haproxy or set GMAIL_MCP_TEST_HAPROXY)")
    path = folder / "haproxy.cfg"
    path.write_text(config)
    check = subprocess.run([binary, "-c", "-f", str(path)], capture_output=True, text=True)
    if check.returncode != 0:
        raise RuntimeError(f"haproxy rejected its configuration:\n{check.stdout}{check.stderr}")
    process = subprocess.Popen([binary, "-db", "-f", str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not admin_socket.exists() or not _accepts(front_port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"haproxy did not start (exit status {process.poll()})")
            time.sleep(0.05)
        yield HaProxy(front_port, process, admin_socket)
    finally:
        process.terminate()
        if wait_for_exit(process, 10) is None:
            process.kill()
            process.wait()


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@dataclass
class Replica:
    index: int
    port: int
    env: dict[str, str]
    args: tuple[str, ...] = ()
    server: HttpServer | None = None
    stack: ExitStack = field(default_factory=ExitStack)

    @property
    def name(self) -> str:
        return f"r{self.index}"

    def start(self) -> None:
        self.server = self.stack.enter_context(http_server(self.env, f"127.0.0.1:{self.port}", self.args))

    def tool_ends(self) -> int:
        return 0 if self.server is None else self.server.log_text().count('"tool end"')

    def tool_starts(self) -> int:
        return 0 if self.server is None else self.server.log_text().count('"tool start"')

    def kill(self) -> None:
        """SIGKILL: the replica dies at once, calls in flight included."""
        assert self.server is not None
        self.server.process.send_signal(signal.SIGKILL)
        self.server.process.wait()

    def terminate(self) -> int | None:
        """SIGTERM (graceful: calls in flight finish); returns the exit status."""
        assert self.server is not None
        self.server.process.terminate()
        return wait_for_exit(self.server.process, START_TIMEOUT_S)

    def stop(self) -> None:
        self.stack.close()
        self.stack = ExitStack()


@dataclass
class ReplicaSet:
    replicas: list[Replica]
    proxy: HaProxy
    sticky: bool

    @property
    def url(self) -> str:
        return self.proxy.url

    def restart(self, index: int) -> None:
        """Starts replica `index` again on its port (after kill/terminate) and waits until HAProxy sees it UP."""
        replica = self.replicas[index]
        replica.stop()
        replica.start()
        self.proxy.command(f"set server {BACKEND}/{replica.name} state ready")
        self.proxy.wait_for(replica.name, "UP")

    def drain(self, index: int) -> None:
        """Takes replica `index` out of rotation at HAProxy (no new requests; those in flight go on), as a
        Kubernetes endpoint removal or a preStop hook does before SIGTERM."""
        self.proxy.command(f"set server {BACKEND}/{self.replicas[index].name} state drain")

    def tool_ends(self) -> list[int]:
        return [replica.tool_ends() for replica in self.replicas]


def _token(emulator: Any, path: Path, scopes: list[str] | None) -> Path:
    """A token file for one replica: written by an in-process emulator, else a copy of an emulator process's."""
    if hasattr(emulator, "write_token"):
        return Path(emulator.write_token(path, **({"scopes": scopes} if scopes else {})))
    shutil.copyfile(emulator.token_path, path)
    path.chmod(0o600)
    return path


@contextmanager
def replica_set(
    emulator: Any,
    scratch: Path,
    *,
    count: int = 3,
    sticky: bool = True,
    scopes: list[str] | None = None,
    extra_env: dict[str, str] | None = None,
    replica_env: Callable[[int], dict[str, str]] | None = None,
    args: tuple[str, ...] = (),
    front_port: int | None = None,
) -> Iterator[ReplicaSet]:
    """`count` replicas (each with its own home folder and token file, granted `scopes`, default the emulator's;
    `args` added to each command line, e.g. `("--auth", "oauth")`) behind HAProxy on `front_port` (default any
    free one; `--auth oauth` replicas need it before they start: it is their GMAIL_MCP_PUBLIC_URL); see the
    module docstring."""
    scratch.mkdir(parents=True, exist_ok=True)
    replicas = []
    for index in range(count):
        home = scratch / f"replica-{index}"
        (home / "tokens").mkdir(parents=True, mode=0o700, exist_ok=True)
        env = emulator_env(emulator, _token(emulator, home / "token.json", scopes), **TEST_SERVER_ENV)
        env |= {"GMAIL_MCP_HOME": str(home), "GMAIL_MCP_HTTP_STATELESS": "0" if sticky else "1"}
        env |= (extra_env or {}) | (replica_env(index) if replica_env else {})
        replicas.append(Replica(index, free_port(), env, args))
    with ExitStack() as stack:
        for replica in replicas:
            stack.callback(replica.stop)
        with ThreadPoolExecutor(count) as starting:  # in parallel: each start waits for its URL line
            list(starting.map(Replica.start, replicas))
        # The admin socket in a short folder of its own: a Unix socket path holds at most 107 bytes, HAProxy binds
        # `<path>.<pid>.tmp` first, and a test's scratch folder alone can be 90 (HAProxy refused its configuration).
        sockets = Path(tempfile.mkdtemp(prefix="gmcp-hap-"))
        stack.callback(shutil.rmtree, sockets, ignore_errors=True)
        front, admin = front_port or free_port(), sockets / "admin.sock"
        config = haproxy_config(front, [replica.port for replica in replicas], admin, sticky=sticky)
        proxy = stack.enter_context(haproxy(config, scratch, front, admin))
        for replica in replicas:
            proxy.wait_for(replica.name, "UP")
        yield ReplicaSet(replicas, proxy, sticky)
