"""First-run stumbles: what a fresh checkout and the set-up scripts do on a new user's machine.

- `.gitattributes`: a clone made with `core.autocrlf=true` (Git for Windows' default) keeps the byte-exact
  fixtures byte-exact, checks `setup_env.bat` out with CRLF and the shell scripts with LF. The clone is made from
  the committed HEAD, so uncommitted changes neither help nor hurt.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from server.runtime.config import PROJECT_ROOT

GIT = shutil.which("git")


def _git(*args: str, cwd=PROJECT_ROOT) -> str:
    result = subprocess.run([GIT, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr}"
    return result.stdout


def _blobs(repo, paths: list[str]) -> dict[str, bytes]:
    """The committed bytes of `paths` at HEAD, in one `git cat-file --batch` call."""
    request = "".join(f"HEAD:{path}\n" for path in paths).encode()
    out = subprocess.run(
        [GIT, "cat-file", "--batch"], cwd=repo, input=request, capture_output=True, timeout=60, check=True
    ).stdout
    blobs, pos = {}, 0
    for path in paths:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        blobs[path] = out[header_end + 1 : header_end + 1 + size]
        pos = header_end + 1 + size + 1
    return blobs


@pytest.fixture(scope="module")
def autocrlf_clone(tmp_path_factory: pytest.TempPathFactory):
    if GIT is None or not (PROJECT_ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of the project")
    clone = tmp_path_factory.mktemp("autocrlf") / "clone"
    _git(
        "-c",
        "advice.detachedHead=false",
        "clone",
        "--quiet",
        "--config",
        "core.autocrlf=true",
        str(PROJECT_ROOT),
        str(clone),
    )
    assert _git("rev-parse", "HEAD", cwd=clone) == _git("rev-parse", "HEAD")
    return clone


def test_autocrlf_clone_keeps_fixtures_byte_exact(autocrlf_clone) -> None:
    files = _git("ls-files", "-z", cwd=autocrlf_clone).split("\0")
    fixtures = [
        name
        for name in files
        if name.endswith((".eml", ".mbox", ".json"))
        or (name.startswith("server/tests/data/") and not name.endswith(".py"))
    ]
    assert sum(name.endswith(".eml") for name in fixtures) >= 40
    assert {"server/demo/mailbox.mbox", "server/tests/data/expected.json"} <= set(fixtures)
    committed = _blobs(autocrlf_clone, fixtures)
    changed = [name for name in fixtures if (autocrlf_clone / name).read_bytes() != committed[name]]
    assert changed == [], f"core.autocrlf=true changes these fixtures' bytes: {changed}"


def test_autocrlf_clone_has_crlf_batch_files_and_lf_shell_scripts(autocrlf_clone) -> None:
    bat = (autocrlf_clone / "setup_env.bat").read_bytes()
    assert bat.count(b"\n") > 10 and bat.count(b"\r\n") == bat.count(b"\n"), "setup_env.bat must check out with CRLF"
    for script in ("setup_env.sh", ".ci/run"):
        assert b"\r" not in (autocrlf_clone / script).read_bytes(), f"{script} must check out with LF"


def test_autocrlf_clone_is_clean(autocrlf_clone) -> None:
    # A file committed with line ends its attributes would change shows up as modified right after the clone.
    assert _git("status", "--porcelain", cwd=autocrlf_clone) == ""
