"""First-run stumbles: what a fresh checkout and the set-up scripts do on a new user's machine.

- `setup_env.sh` runs for real in a temporary copy (its directory name has a space), with a stand-in system
  Python: the real interpreter, except that the venvs it makes log `pip` calls instead of installing anything, or
  fail the way Debian's python3 does without python3-venv. No network, a second or two per run.
- `setup_env.bat` cannot run here: its text is checked for the same behaviours and for the cmd pitfalls that break
  a batch file silently, and its embedded Python one-liners are run for real.
- `.gitattributes`: a clone made with `core.autocrlf=true` (Git for Windows' default) keeps the byte-exact
  fixtures byte-exact, checks `setup_env.bat` out with CRLF and the shell scripts with LF. The clone is made from
  the committed HEAD, so uncommitted changes neither help nor hurt.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from server.runtime.config import PROJECT_ROOT

pytestmark = pytest.mark.slow  # setup script subprocesses: the slow tier (`pytest -m slow`)

GIT = shutil.which("git")
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None or os.name == "nt", reason="setup_env.sh runs under bash on macOS/Linux")

# A system Python stand-in: the real interpreter, except for `-m venv DIR`, which per $FAKE_VENV makes
#   ok            a venv whose bin/python is the real interpreter but logs `-m pip ...` to $PIP_LOG instead
#   no-ensurepip  what Debian's python3 without python3-venv does: a venv without pip, exit status 1
FAKE_PYTHON = """#!/usr/bin/env bash
REAL={real}
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  if [ "$FAKE_VENV" = "no-ensurepip" ]; then
    "$REAL" -m venv --without-pip "$3"
    echo "The virtual environment was not created successfully because ensurepip is not available." >&2
    exit 1
  fi
  mkdir -p "$3/bin"
  printf '%s\\n' '#!/usr/bin/env bash' \\
    'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then shift 2; echo "pip $*" >>"$PIP_LOG"; exit 0; fi' \\
    "exec $(printf %q "$REAL") \\"\\$@\\"" >"$3/bin/python"
  chmod +x "$3/bin/python"
  exit 0
fi
exec "$REAL" "$@"
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of what setup_env.sh reads, in a folder whose name has a space."""
    root = tmp_path / "gmail mcp"
    root.mkdir()
    for name in ("setup_env.sh", "requirements.txt", "pyproject.toml"):
        shutil.copy2(PROJECT_ROOT / name, root / name)
    fake = tmp_path / "fake-python3"
    fake.write_text(FAKE_PYTHON.format(real=shlex.quote(sys.executable)))
    fake.chmod(0o755)
    return root


def run_setup(root: Path, *args: str, fake_venv: str = "ok", **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHON")}
    environ.update(PYTHON=str(root.parent / "fake-python3"), FAKE_VENV=fake_venv, PIP_LOG=str(root.parent / "pip.log"))
    environ.update(env)
    return subprocess.run(
        [BASH, str(root / "setup_env.sh"), *args],
        cwd=root.parent,
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def pip_installs(root: Path) -> list[str]:
    log = root.parent / "pip.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [
        line.removeprefix("pip install --disable-pip-version-check --quiet ") for line in lines if " install " in line
    ]


@needs_bash
def test_fresh_setup_installs_requirements_then_the_project_editable(checkout: Path) -> None:
    result = run_setup(checkout)
    assert result.returncode == 0, result.stderr
    assert pip_installs(checkout) == ["--upgrade pip", "-r requirements.txt", "--no-deps -e ."]
    assert (checkout / ".venv/.installed.sha256").exists()


@needs_bash
def test_setup_writes_the_servers_bytecode_even_where_python_writes_none(checkout: Path) -> None:
    (checkout / "server" / "tests").mkdir(parents=True)
    (checkout / "server" / "main.py").write_text("VALUE = 1\n")
    (checkout / "server" / "tests" / "test_x.py").write_text("VALUE = 2\n")
    for run in range(2):  # every run, not only the one that installs: a pull brings new sources
        result = run_setup(checkout, PYTHONDONTWRITEBYTECODE="1")
        assert result.returncode == 0, result.stderr
        assert list((checkout / "server" / "__pycache__").glob("main.*.pyc")), run
        (checkout / "server" / "main.py").write_text(f"VALUE = {run + 3}\n")
    assert not (checkout / "server" / "tests" / "__pycache__").exists()  # the tests are not the server


@needs_bash
def test_next_step_names_this_checkouts_interpreter_and_auth_cli(checkout: Path) -> None:
    out = run_setup(checkout).stdout
    assert f'"command": "{checkout}/.venv/bin/python"' in out
    next_line = next(line for line in out.splitlines() if line.startswith("Next: "))
    command = next_line.removeprefix("Next: ").split(" (once")[0]
    assert shlex.split(command) == [f"{checkout}/.venv/bin/python", f"{checkout}/server/auth_cli.py"]


@needs_bash
def test_second_run_skips_pip_until_requirements_or_pyproject_change(checkout: Path) -> None:
    assert run_setup(checkout, "--quiet").returncode == 0
    first = pip_installs(checkout)
    assert run_setup(checkout, "--quiet").returncode == 0
    assert pip_installs(checkout) == first, "nothing changed, so pip must not run"
    for name in ("pyproject.toml", "requirements.txt"):
        with open(checkout / name, "a") as f:
            f.write("\n# changed\n")
        before = len(pip_installs(checkout))
        assert run_setup(checkout, "--quiet").returncode == 0
        assert pip_installs(checkout)[before:] == ["--upgrade pip", "-r requirements.txt", "--no-deps -e ."], name


def _venv_without_pip(venv: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)


def _venv_without_python(venv: Path) -> None:
    venv.mkdir()


def _venv_with_dangling_python(venv: Path) -> None:
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/python").symlink_to(venv / "no-such-python")


def _venv_with_failing_python(venv: Path) -> None:
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/python").write_text("#!/bin/sh\nexit 1\n")
    (venv / "bin/python").chmod(0o755)


@needs_bash
@pytest.mark.parametrize(
    ("make_broken", "problem"),
    [
        (_venv_without_pip, "it has no pip"),
        (_venv_without_python, "it has no bin/python"),
        (_venv_with_dangling_python, "it has no bin/python"),
        (_venv_with_failing_python, "its Python does not run or is older than 3.10"),
    ],
)
def test_broken_venv_is_named_removed_and_rebuilt(checkout: Path, make_broken, problem: str) -> None:
    make_broken(checkout / ".venv")
    result = run_setup(checkout, "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"The existing .venv is broken ({problem}): removing it and creating a new one."
    ]
    assert pip_installs(checkout) == ["--upgrade pip", "-r requirements.txt", "--no-deps -e ."]


@needs_bash
def test_python_without_venv_support_says_what_to_install_on_every_run(checkout: Path) -> None:
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for _ in range(2):  # the second run used to fail with "No module named pip" and no advice
        result = run_setup(checkout, fake_venv="no-ensurepip")
        assert result.returncode != 0
        assert f"sudo apt install python{version}-venv" in result.stderr
        assert "PYTHON=/path/to/python3.x ./setup_env.sh" in result.stderr
        assert "No module named pip" not in result.stderr
        assert not (checkout / ".venv").exists(), "a failed creation must not leave a broken .venv behind"


@needs_bash
def test_python_variable_is_used_or_refused_never_replaced(checkout: Path) -> None:
    result = run_setup(checkout, PYTHON=str(checkout / "no-such-python3"))
    assert result.returncode != 0
    assert f"PYTHON={checkout}/no-such-python3 is not a Python 3.10 or newer" in result.stderr
    assert not (checkout / ".venv").exists()


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


BAT = (PROJECT_ROOT / "setup_env.bat").read_text(encoding="ascii")
BAT_LINES = BAT.splitlines()
BAT_CODE = [line.strip() for line in BAT_LINES if line.strip() and not line.lower().lstrip().startswith("rem")]


def _bat_set(name: str) -> str:
    prefix = f'set "{name}='
    values = [line[len(prefix) : -1] for line in BAT_CODE if line.startswith(prefix) and line.endswith('"')]
    assert len(values) == 1, f"setup_env.bat should set {name} once, quoted"
    return values[0]


def _bat_label(name: str) -> list[str]:
    """The code lines of subroutine or section `name`, up to the next label."""
    start = BAT_CODE.index(f":{name}") + 1
    end = next((i for i in range(start, len(BAT_CODE)) if BAT_CODE[i].startswith(":")), len(BAT_CODE))
    return BAT_CODE[start:end]


def test_bat_honours_python_variable_then_tries_py_dash_3() -> None:
    finder = _bat_label("find_python")
    assert 'call :try_python "%PYTHON%"' in finder
    assert finder.index("if defined PYTHON (") < finder.index("call :try_python py -3")
    candidates = [line for line in finder if line.startswith(("call :try_python", "if not defined PY call"))]
    assert [line.split(":try_python ")[1] for line in candidates] == ['"%PYTHON%"', "py -3", "python", "python3"]
    assert 'set "PYTHON=%PYTHON:"=%"' in BAT_CODE  # quotes the user typed around the path are dropped
    assert any("PYTHON=" in line and "is not a Python 3.10" in line for line in _bat_label("bad_python_env"))


def test_bat_rebuilds_a_broken_venv() -> None:
    checks = _bat_label("venv_problem")
    assert any('"%VPY%" -c "%PY310%"' in line for line in checks)
    assert any('"%VPY%" -m pip --version' in line for line in checks)
    assert any("call :ssl_works" in line for line in checks)
    assert ">&2 echo The existing .venv is broken (%PROBLEM%): removing it and creating a new one." in BAT_CODE
    assert _bat_label("broken")[1] == "call :remove_venv || goto :cannot_remove"
    assert 'rmdir /s /q ".venv" >nul 2>&1' in _bat_label("remove_venv")
    # A failed creation leaves no .venv behind and says what to do.
    assert _bat_label("create_failed")[0] == "call :remove_venv"
    assert any("python.org" in line for line in _bat_label("create_failed"))


def test_bat_checks_ssl_as_a_desktop_client_would_start_it() -> None:
    ssl = _bat_label("ssl_works")
    assert ssl[0] == "setlocal"
    assert 'set "PATH=%SystemRoot%\\System32;%SystemRoot%;%SystemRoot%\\System32\\Wbem"' in ssl
    assert 'set "CONDA_PREFIX="' in ssl
    assert any('"%VPY%" -c "import ssl"' in line for line in ssl)
    failed = " ".join(_bat_label("ssl_failed"))
    assert "conda" in failed and "python.org" in failed and 'set "PYTHON=' in failed and "$env:PYTHON=" in failed


def test_bat_writes_the_servers_bytecode_on_every_run() -> None:
    ready = _bat_label("ready")
    assert '"%VPY%" -m compileall -q -x "[/\\\\]tests[/\\\\]" server >nul 2>&1' in ready


def test_bat_installs_requirements_then_project_editable_behind_a_stamp() -> None:
    install = _bat_label("install")
    assert install[0] == '"%VPY%" -c "%STAMP_PY%" >nul 2>&1 && goto :ready'
    pip_lines = [line for line in install if "-m pip install" in line]
    assert "-r requirements.txt" in pip_lines[1] and "--no-deps -e ." in pip_lines[2]
    assert "--quiet" in pip_lines[2]
    assert install[-1] == '"%VPY%" -c "%STAMP_PY%" write || goto :stamp_failed'


def test_bat_stamp_one_liner_tracks_requirements_and_pyproject(tmp_path: Path) -> None:
    stamp_py = _bat_set("STAMP_PY")
    (tmp_path / ".venv").mkdir()
    for name in ("requirements.txt", "pyproject.toml"):
        (tmp_path / name).write_text(f"{name}\n")

    def stamp(*args: str) -> int:
        return subprocess.run([sys.executable, "-c", stamp_py, *args], cwd=tmp_path, timeout=30).returncode

    assert stamp() == 1
    assert stamp("write") == 0 and stamp() == 0
    for name in ("requirements.txt", "pyproject.toml"):
        (tmp_path / name).write_text("changed\n")
        assert stamp() == 1, name
        assert stamp("write") == 0 and stamp() == 0


def test_bat_python_one_liners_compile() -> None:
    snippets = [_bat_set("PY310"), _bat_set("STAMP_PY")]
    for line in BAT_CODE:
        snippets += [part.split('"', 1)[0] for part in line.split(' -c "')[1:] if not part.startswith("%")]
    assert len(snippets) >= 5
    for snippet in snippets:
        assert "%" not in snippet and "!" not in snippet, snippet  # cmd would eat or expand them
        compile(snippet, "<setup_env.bat>", "exec")


def test_bat_prints_forward_slash_config_and_absolute_auth_command() -> None:
    ready = _bat_label("ready")
    assert 'set "JROOT=%ROOT:\\=/%"' in ready
    assert 'echo       "command": "%JROOT%/.venv/Scripts/python.exe",' in ready
    assert 'echo       "cwd": "%JROOT%",' in ready
    auth = '"%ROOT%\\.venv\\Scripts\\python.exe" "%ROOT%\\server\\auth_cli.py"'
    assert any(line.startswith("echo     cmd:") and line.endswith(auth) for line in ready)
    assert any(line.startswith("echo     PowerShell:  ^& ") and line.endswith(auth) for line in ready)


def test_bat_avoids_cmd_pitfalls() -> None:
    assert BAT_CODE[1] == "setlocal EnableExtensions DisableDelayedExpansion"
    assert not any("!" in line for line in BAT_CODE if not line.startswith(("echo", ">&2 echo")))
    # `if errorlevel 1` misses negative exit codes; %ERRORLEVEL% inside a block is read before the block runs.
    assert not [line for line in BAT_CODE if "errorlevel" in line.lower()]
    # Every exit names its code, so `setup_env.bat && ...` and PowerShell's $LASTEXITCODE see failures.
    assert all(re.search(r"exit /b [01]\b", line) for line in BAT_CODE if "exit /b" in line)
    # Every goto/call target exists.
    labels = {line[1:].lower() for line in BAT_CODE if line.startswith(":")}
    targets = {target.lower() for line in BAT_CODE for target in re.findall(r"(?:goto|call) :(\w+)", line)}
    assert targets and targets <= labels, targets - labels
    # Quotes balance on every line (an odd count swallows redirections and parentheses that follow).
    # (The one substitution that drops quotes from PYTHON is balanced once expanded.)
    assert [line for line in BAT_CODE if line.replace('%PYTHON:"=%', "").count('"') % 2] == []
    # rem lines are still percent-expanded: no % there.
    assert [line for line in BAT_LINES if line.lower().startswith("rem") and "%" in line] == []
