#!/usr/bin/env bash
# Installs libtorch (PyPI torch 2.13.0, the version tch 0.26 expects) into the
# project-local virtual environment .venv, and links .venv/libtorch to it,
# which is where .cargo/config.toml points the build (LIBTORCH).
# Idempotent: when the right torch is there it returns at once.
set -euo pipefail
TORCH_VERSION=2.13.0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV="$ROOT/.venv"
PY=${PYTHON:-python3}
MARKER="$VENV/.torch-$TORCH_VERSION.ok"

# Cheap file checks only: importing torch takes seconds.
installed() {
  local torch="$VENV/libtorch"
  grep -q "^__version__ = '$TORCH_VERSION" "$torch/version.py" 2>/dev/null &&
    [[ -f "$torch/lib/libtorch_cpu.so" && -f "$torch/lib/libtorch_cuda.so" ]]
}

if [[ -f "$MARKER" ]] && installed; then
  exit 0
fi
command -v "$PY" >/dev/null || { echo "setup-torch: $PY not found (set PYTHON)" >&2; exit 1; }
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
rm -f "$MARKER"
echo "setup-torch: installing torch==$TORCH_VERSION into $VENV (about 2.7 GB download, once)" >&2
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q "torch==$TORCH_VERSION"
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
ln -sfn "$site/torch" "$VENV/libtorch"
installed || { echo "setup-torch: torch $TORCH_VERSION not found in $site after install" >&2; exit 1; }
if ldd "$VENV/libtorch/lib/libtorch_cuda.so" | grep -q "not found"; then
  ldd "$VENV/libtorch/lib/libtorch_cuda.so" | grep "not found" >&2
  echo "setup-torch: libtorch_cuda.so has unresolved libraries" >&2
  exit 1
fi
touch "$MARKER"
echo "setup-torch: torch $TORCH_VERSION ready (LIBTORCH=$VENV/libtorch)" >&2
