"""deploy/ checked as text, since containers cannot run here: the compose file and the Kubernetes manifests parse,
name the image the Dockerfile builds, its port and health path, and only environment variables the server reads;
the references between manifests resolve; the HAProxy configuration shipped is the one the replica tests run
(server/tests/support/replicas.py), and HAProxy itself accepts it (`haproxy -c`, where HAProxy is installed)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from server.runtime.config import PROJECT_ROOT
from server.tests.support.replicas import haproxy_binary, haproxy_config

DEPLOY = PROJECT_ROOT / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
IMAGE = "gmail-mcp:latest"
PORT = 8080
# Read by `--auth oauth` (branch s2-people, docs/http.md there); drop from this set once it is on main, and the
# test then holds them to the code like every other name.
NAME = re.compile(r"\bGMAIL_MCP_[A-Z0-9_]+\b")


def names_the_code_reads() -> set[str]:
    found: set[str] = set()
    for path in (PROJECT_ROOT / "server").rglob("*.py"):
        if "tests" not in path.relative_to(PROJECT_ROOT).parts:
            found |= set(NAME.findall(path.read_text(encoding="utf-8")))
    return found


def documents(path: Path) -> list[dict[str, Any]]:
    return [document for document in yaml.safe_load_all(path.read_text(encoding="utf-8")) if document]


def manifests() -> list[dict[str, Any]]:
    return [document for path in sorted(KUBERNETES.glob("*.yaml")) for document in documents(path)]


def one(kind: str, name: str) -> dict[str, Any]:
    (found,) = [m for m in manifests() if m["kind"] == kind and m["metadata"]["name"] == name]
    return found


def compose() -> dict[str, Any]:
    (document,) = documents(DEPLOY / "compose.yaml")
    return document


def test_every_gmail_mcp_name_in_deploy_is_one_the_server_reads():
    known = names_the_code_reads()
    for path in [DEPLOY / "compose.yaml", DEPLOY / "compose.env.example", *KUBERNETES.glob("*.yaml")]:
        unknown = set(NAME.findall(path.read_text(encoding="utf-8"))) - known
        assert not unknown, f"{path.name} names {unknown}, which the server does not read"
    assert "GMAIL_MCP_STORE" in names_the_code_reads() and "GMAIL_MCP_TOKEN_KEY" in names_the_code_reads()


def test_the_dockerfile_builds_what_compose_and_kubernetes_run():
    dockerfile = (PROJECT_ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert f"EXPOSE {PORT}" in dockerfile and "/healthz" in dockerfile
    replicas = compose()["services"]["gmail-mcp"]
    assert (DEPLOY / replicas["build"] / "Dockerfile").exists()
    assert replicas["image"] == IMAGE
    assert replicas["command"][:2] == ["--http", f"0.0.0.0:{PORT}"]
    (container,) = one("Deployment", "gmail-mcp")["spec"]["template"]["spec"]["containers"]
    assert container["image"] == IMAGE
    assert container["args"][:2] == ["--http", f"0.0.0.0:{PORT}"]
    assert container["ports"] == [{"name": "http", "containerPort": PORT}]


def test_readiness_is_healthz_and_liveness_is_the_process():
    guard = (PROJECT_ROOT / "server" / "protocol" / "http_guard.py").read_text(encoding="utf-8")
    assert 'path == "/healthz"' in guard
    spec = one("Deployment", "gmail-mcp")["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert "tcpSocket" in container["livenessProbe"]  # not the store: a replica without it recovers by itself
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    # SIGKILL comes after the preStop wait and the server's own grace for calls in flight
    config = one("ConfigMap", "gmail-mcp")["data"]
    pre_stop = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
    assert pod["terminationGracePeriodSeconds"] > pre_stop + float(config["GMAIL_MCP_HTTP_SHUTDOWN_GRACE_S"])
    replicas = compose()["services"]["gmail-mcp"]
    grace = float(replicas["environment"]["GMAIL_MCP_HTTP_SHUTDOWN_GRACE_S"])
    assert int(replicas["stop_grace_period"].removesuffix("s")) > grace


def test_the_replicas_share_the_store_and_its_secrets_resolve():
    services = compose()["services"]
    store = services["gmail-mcp"]["environment"]["GMAIL_MCP_STORE"]
    assert re.fullmatch(r"redis://:\$\{VALKEY_PASSWORD\}@valkey:6379/0", store)
    assert "noeviction" in services["valkey"]["command"] and services["valkey"]["image"].startswith("valkey/")
    secret = one("Secret", "gmail-mcp")["stringData"]
    (container,) = one("Deployment", "gmail-mcp")["spec"]["template"]["spec"]["containers"]
    for variable in container["env"]:
        reference = variable["valueFrom"]["secretKeyRef"]
        assert reference["name"] == "gmail-mcp" and reference["key"] in secret
    assert secret["GMAIL_MCP_STORE"].startswith("redis://") and "@valkey:6379" in secret["GMAIL_MCP_STORE"]
    assert one("Service", "valkey")["spec"]["ports"][0]["port"] == 6379
    mounted = one("Deployment", "gmail-mcp")["spec"]["template"]["spec"]["volumes"][0]["secret"]
    client_file = one("ConfigMap", "gmail-mcp")["data"]["GMAIL_MCP_GOOGLE_CLIENT_FILE"]
    assert mounted["items"][0]["key"] in secret
    assert client_file.endswith("/" + mounted["items"][0]["path"])


def test_kubernetes_references_resolve():
    kustomization = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text(encoding="utf-8"))
    for resource in kustomization["resources"]:
        assert (KUBERNETES / resource).exists() or resource == "secret.yaml"  # made from secret.example.yaml
    headless = one("Service", "gmail-mcp-replicas")
    assert headless["spec"]["clusterIP"] == "None"
    labels = one("Deployment", "gmail-mcp")["spec"]["template"]["metadata"]["labels"]
    assert headless["spec"]["selector"].items() <= labels.items()
    backend = one("Ingress", "gmail-mcp")["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert one("Service", backend["name"])["spec"]["selector"] == {"app": "haproxy"}
    assert "gmail-mcp-replicas:8080" in kubernetes_haproxy_config()


def kubernetes_haproxy_config() -> str:
    return str(one("ConfigMap", "haproxy")["data"]["haproxy.cfg"])


ADDRESSES_AND_LOGGING = (
    "server",
    "bind",
    "log",
    "option httplog",
    "maxconn",
    "stats",
    "tune.",
    "resolvers",
    "parse-resolv-conf",
    "hold",
    "http-check send",  # the same request; the Host it names differs (loopback in the tests)
)


def directives(config: str) -> set[str]:
    """The lines that decide routing, retries and health: every line but addresses, logging and comments."""
    lines = {" ".join(line.split()) for line in config.splitlines()}
    return {line for line in lines if line and not line.startswith(("#", *ADDRESSES_AND_LOGGING))}


def test_the_shipped_haproxy_configuration_is_the_one_the_tests_run(tmp_path: Path):
    shipped = (DEPLOY / "haproxy.cfg").read_text(encoding="utf-8")
    assert directives(kubernetes_haproxy_config()) == directives(shipped)
    tested = directives(haproxy_config(1, [2, 3], tmp_path / "admin.sock", sticky=True))
    assert directives(shipped) == tested
    assert "stick store-response res.hdr(mcp-session-id)" in directives(shipped)
    assert "retry-on conn-failure 503" in directives(shipped)  # never empty-response: a send is not repeated


@pytest.mark.parametrize("source", ["haproxy.cfg", "kubernetes"])
def test_haproxy_accepts_the_shipped_configuration(source: str, tmp_path: Path):
    binary = haproxy_binary()
    if binary is None:
        pytest.skip("no haproxy on PATH (Debian's haproxy; .ci/run installs it)")
    text = (
        (DEPLOY / "haproxy.cfg").read_text(encoding="utf-8") if source == "haproxy.cfg" else kubernetes_haproxy_config()
    )
    path = tmp_path / "haproxy.cfg"
    path.write_text(text if text.endswith("\n") else text + "\n")
    check = subprocess.run([binary, "-c", "-f", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
