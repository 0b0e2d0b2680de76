#!/usr/bin/env bash
# Installs the distributed loop's packages (distributed/requirements.txt:
# Ray with its dashboard, fsspec, matplotlib) into the project's .venv.
# Idempotent: returns at once when that list is installed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV="$ROOT/.venv"
PY=${PYTHON:-python3}
REQUIREMENTS="$ROOT/distributed/requirements.txt"
MARKER="$VENV/.distributed-$(sha256sum "$REQUIREMENTS" | cut -c1-12).ok"

if [[ -f "$MARKER" && -x "$VENV/bin/ray" ]]; then
  exit 0
fi
command -v "$PY" >/dev/null || { echo "setup-distributed: $PY not found (set PYTHON)" >&2; exit 1; }
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
echo "setup-distributed: installing $(grep -v '^#' "$REQUIREMENTS" | xargs) into $VENV (about 300 MB, once)" >&2
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$REQUIREMENTS"
"$VENV/bin/python" -c 'import ray, fsspec, matplotlib' ||
  { echo "setup-distributed: the packages do not import after the install" >&2; exit 1; }
rm -f "$VENV"/.distributed-*.ok
touch "$MARKER"
