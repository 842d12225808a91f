# Shared by scripts/demo and scripts/test: make a virtualenv in .venv with duetbench installed.
# Installs the system prerequisites (a C compiler, python3-venv) with apt-get when they are missing
# and we are root; otherwise says exactly what to install.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

need_apt=()
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || need_apt+=(build-essential)
"$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${need_apt[*]} with apt-get" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "error: missing ${need_apt[*]}: run 'sudo apt-get install ${need_apt[*]}' and retry" >&2
    exit 1
  fi
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "error: duetbench needs Python 3.11 or newer ($PYTHON is $("$PYTHON" --version 2>&1)); set PYTHON=python3.11" >&2
  exit 1
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
# setuptools reuses ./build: a module moved or deleted in src/ would survive there and hide a broken import.
rm -rf build
"$VENV/bin/python" -m pip install -q ".[test]"
export PATH="$PWD/$VENV/bin:$PATH"
