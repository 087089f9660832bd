@echo off
rem Creates .venv (Python 3.10+), installs requirements.txt, and prints a ready Claude Desktop config entry.
rem Idempotent: a second run reuses .venv.   setup_env.bat [--quiet]
setlocal EnableDelayedExpansion
cd /d "%~dp0"
set "ROOT=%CD%"

if not exist ".venv\Scripts\python.exe" (
  set "PY="
  for %%P in (py python python3) do (
    if not defined PY (
      %%P -c "import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)" >nul 2>&1 && set "PY=%%P"
    )
  )
  if not defined PY (
    echo error: Python 3.10 or newer is required: install it from python.org and re-run. 1>&2
    exit /b 1
  )
  echo Creating .venv with !PY!...
  !PY! -m venv .venv || exit /b 1
)

".venv\Scripts\python.exe" -m pip install --disable-pip-version-check --quiet -r requirements.txt || exit /b 1

if /i "%~1"=="--quiet" exit /b 0
set "JROOT=%ROOT:\=/%"
echo Ready. Add this to "mcpServers" in %APPDATA%\Claude\claude_desktop_config.json
echo (add "--demo" to "args" to try the bundled demo mailbox before any Google set-up):
echo.
echo     "gmail": {
echo       "command": "%JROOT%/.venv/Scripts/python.exe",
echo       "args": ["-m", "server.main"],
echo       "cwd": "%JROOT%",
echo       "env": {"PYTHONPATH": "%JROOT%"}
echo     }
echo.
echo Next: .venv\Scripts\python.exe server\auth_cli.py (once, to authorize your Gmail), then restart Claude Desktop.
