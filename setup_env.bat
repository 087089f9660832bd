@echo off
rem Creates .venv (Python 3.10+), installs requirements.txt and this project (editable, no dependencies), and
rem prints a ready Claude Desktop config entry.
rem Idempotent: a second run reuses .venv and skips pip when requirements.txt and pyproject.toml have not changed.
rem A broken .venv (no Python, a Python that does not run, no pip, no ssl outside a conda prompt) is rebuilt.
rem   setup_env.bat                 set up, then print the config entry    (PowerShell: .\setup_env.bat)
rem   setup_env.bat --quiet         set up only
rem   set "PYTHON=C:\path\to\python.exe"   create .venv with that interpreter (PowerShell: $env:PYTHON='...')
rem
rem Written for cmd's parser: no delayed expansion (paths may contain !), no parenthesised block that reads a
rem variable set inside it, exit codes tested with the OR operator rather than "if errorlevel 1" (which misses
rem negative codes such as a failed DLL load), paths always quoted, and every exit names its code so the AND
rem operator and PowerShell's $LASTEXITCODE see it. No rem line holds a percent sign or an operator character.
setlocal EnableExtensions DisableDelayedExpansion
cd /d "%~dp0" || exit /b 1
set "ROOT=%CD%"
set "QUIET="
if /i "%~1"=="--quiet" set "QUIET=1"
set "VPY=.venv\Scripts\python.exe"
set "PY310=import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)"
rem Exit code 0 when the stamp matches requirements.txt and pyproject.toml; with the argument "write", records them.
set "STAMP_PY=import hashlib, pathlib as p, sys; f = p.Path('.venv/.installed.sha256'); d = hashlib.sha256(b''.join(hashlib.sha256(p.Path(n).read_bytes()).digest() for n in ('requirements.txt', 'pyproject.toml'))).hexdigest(); sys.argv[1:] == ['write'] and f.write_text(d); sys.exit(0 if f.exists() and f.read_text().strip() == d else 1)"
rem PYTHON may be given with quotes; only a defined PYTHON may reach the substitution (cmd mangles undefined ones).
if not defined PYTHON goto :options_read
set "PYTHON=%PYTHON:"=%"
:options_read

if not exist ".venv" goto :create
call :venv_problem
if defined PROBLEM goto :broken
if defined QUIET goto :install
if defined PYTHON echo Reusing the existing .venv; PYTHON only applies when .venv is created: delete .venv to rebuild it with "%PYTHON%".
goto :install

:broken
>&2 echo The existing .venv is broken (%PROBLEM%): removing it and creating a new one.
call :remove_venv || goto :cannot_remove

:create
call :find_python || goto :no_python
if not defined QUIET %PY% -c "import sys; print('Creating .venv with ' + sys.executable + ' (Python ' + sys.version.split()[0] + ')...')"
set "PROBLEM=python -m venv failed"
%PY% -m venv .venv || goto :create_failed
call :venv_problem
if defined SSL_BROKEN goto :ssl_failed
if defined PROBLEM goto :create_failed

:install
"%VPY%" -c "%STAMP_PY%" >nul 2>&1 && goto :ready
if not defined QUIET echo Installing requirements.txt and this project, editable, into .venv...
"%VPY%" -m pip install --disable-pip-version-check --quiet --upgrade pip >nul 2>&1
"%VPY%" -m pip install --disable-pip-version-check --quiet -r requirements.txt || goto :pip_failed
rem setuptools warns about editable installs on every success: show its output only when it fails.
set "PIPLOG=%TEMP%\gmail-mcp-setup-%RANDOM%.log"
"%VPY%" -m pip install --disable-pip-version-check --quiet --no-deps -e . >"%PIPLOG%" 2>&1 || goto :editable_failed
del "%PIPLOG%" >nul 2>&1
"%VPY%" -c "%STAMP_PY%" write || goto :stamp_failed

:ready
rem Bytecode for the server's modules, written now so no start compiles them (Python writes none itself where
rem PYTHONDONTWRITEBYTECODE is set, or the folder is read-only): compiling them costs a cold start a fifth more.
"%VPY%" -m compileall -q -x "[/\\]tests[/\\]" server >nul 2>&1
if defined QUIET exit /b 0
set "JROOT=%ROOT:\=/%"
echo Ready. Add this to "mcpServers" in "%APPDATA%\Claude\claude_desktop_config.json"
echo (add "--demo" to "args" to try the bundled demo mailbox before any Google set-up):
echo(
echo     "gmail": {
echo       "command": "%JROOT%/.venv/Scripts/python.exe",
echo       "args": ["-m", "server.main"],
echo       "cwd": "%JROOT%",
echo       "env": {"PYTHONPATH": "%JROOT%"}
echo     }
echo(
echo Next, once, to authorize your Gmail, then restart Claude Desktop:
echo     cmd:         "%ROOT%\.venv\Scripts\python.exe" "%ROOT%\server\auth_cli.py"
echo     PowerShell:  ^& "%ROOT%\.venv\Scripts\python.exe" "%ROOT%\server\auth_cli.py"
exit /b 0

rem ---------------------------------------------------------------- failures (each exits 1)

:no_python
if defined PYTHON goto :bad_python_env
>&2 echo error: Python 3.10 or newer is required: install it from https://www.python.org/downloads/windows/ and re-run,
>&2 echo   or choose one with  set "PYTHON=C:\path\to\python.exe"  (PowerShell: $env:PYTHON='C:\path\to\python.exe').
exit /b 1

:bad_python_env
>&2 echo error: PYTHON="%PYTHON%" is not a Python 3.10 or newer that runs here; point PYTHON at one, or clear it
>&2 echo   with  set "PYTHON="  (PowerShell: Remove-Item Env:PYTHON).
exit /b 1

:create_failed
call :remove_venv
>&2 echo error: could not create a working .venv (%PROBLEM%) with this Python:
>&2 %PY% -c "import sys; print('  ' + sys.executable + ' (Python ' + sys.version.split()[0] + ')')"
>&2 echo   Install Python 3.10+ from https://www.python.org/downloads/windows/ (its installer includes venv and pip),
>&2 echo   or use another Python 3.10+:  set "PYTHON=C:\path\to\python.exe"  then run setup_env.bat again
>&2 echo   (PowerShell: $env:PYTHON='C:\path\to\python.exe'; .\setup_env.bat).
exit /b 1

:ssl_failed
call :remove_venv
>&2 echo error: the new .venv's Python cannot import ssl when started the way Claude Desktop starts it, without
>&2 echo   a conda environment activated. It was made from:
>&2 %PY% -c "import sys; print('  ' + sys.executable + ' (Python ' + sys.version.split()[0] + ')')"
>&2 echo   A venv made from a conda Python finds OpenSSL's DLLs, in conda's Library\bin folder, only while a conda
>&2 echo   environment is activated, and desktop apps never activate one; running setup_env.bat from an Anaconda
>&2 echo   Prompt does not change that. Install Python 3.10+ from https://www.python.org/downloads/windows/, then:
>&2 echo     set "PYTHON=C:\path\to\python.exe"   (PowerShell: $env:PYTHON='C:\path\to\python.exe')
>&2 echo   and run setup_env.bat again. .venv has been removed.
exit /b 1

:cannot_remove
>&2 echo error: could not remove .venv: quit the programs using its Python (Claude Desktop, a terminal running
>&2 echo   the server), or delete the .venv folder by hand, then run setup_env.bat again.
exit /b 1

:pip_failed
>&2 echo error: pip could not install requirements.txt into .venv (see above).
exit /b 1

:stamp_failed
>&2 echo error: could not write .venv\.installed.sha256.
exit /b 1

:editable_failed
>&2 type "%PIPLOG%"
del "%PIPLOG%" >nul 2>&1
>&2 echo error: pip could not install this project into .venv (see above).
exit /b 1

rem ---------------------------------------------------------------- subroutines

:find_python
rem Sets PY to a command running Python 3.10+. PYTHON, when set, is used or refused, never silently replaced.
set "PY="
if defined PYTHON (
  call :try_python "%PYTHON%"
  goto :found_python
)
call :try_python py -3
if not defined PY call :try_python python
if not defined PY call :try_python python3
:found_python
if defined PY exit /b 0
exit /b 1

:try_python
rem The arguments are a command (the py launcher with its flag, or a quoted path); PY becomes it if it runs
rem Python 3.10 or newer.
%* -c "%PY310%" >nul 2>&1 || exit /b 0
set "PY=%*"
exit /b 0

:venv_problem
rem Sets PROBLEM to why .venv cannot be used (undefined when it works), and SSL_BROKEN when ssl is the reason.
set "PROBLEM="
set "SSL_BROKEN="
if not exist "%VPY%" (
  set "PROBLEM=it has no Scripts\python.exe"
  exit /b 0
)
"%VPY%" -c "%PY310%" >nul 2>&1 || (
  set "PROBLEM=its Python does not run or is older than 3.10"
  exit /b 0
)
"%VPY%" -m pip --version >nul 2>&1 || (
  set "PROBLEM=it has no pip"
  exit /b 0
)
call :ssl_works && exit /b 0
set "PROBLEM=its Python cannot import ssl outside an activated conda environment"
set "SSL_BROKEN=1"
exit /b 0

:ssl_works
rem Exit code 0 when .venv's Python imports ssl in the environment a desktop client gives it: only the system
rem folders on PATH and no conda activation variables.
setlocal
set "PATH=%SystemRoot%\System32;%SystemRoot%;%SystemRoot%\System32\Wbem"
set "CONDA_PREFIX="
set "CONDA_DEFAULT_ENV="
set "CONDA_SHLVL="
"%VPY%" -c "import ssl" >nul 2>&1 || (
  endlocal
  exit /b 1
)
endlocal
exit /b 0

:remove_venv
rmdir /s /q ".venv" >nul 2>&1
if exist ".venv" if not exist ".venv\" del /f /q ".venv" >nul 2>&1
if exist ".venv" exit /b 1
exit /b 0
