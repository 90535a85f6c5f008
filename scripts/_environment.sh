# Sourced by the other scripts: makes .venv with the project and its test tools installed,
# every dependency as requirements/test.lock pins it (hashes checked; scripts/lock writes
# it), reinstalling only when the lock or pyproject.toml changed since the last install.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Frontdesk needs Python 3.11 or newer as '$python' (set PYTHON=/path/to/python3.11)." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "Creating .venv ..." >&2
  "$python" -m venv .venv
fi
stamp=".venv/.frontdesk-installed"
wanted="$(cat pyproject.toml requirements/test.lock | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "Installing Frontdesk and its test tools into .venv ..." >&2
  .venv/bin/python -m pip install --quiet --upgrade pip >&2
  .venv/bin/python -m pip install --quiet --require-hashes -r requirements/test.lock >&2
  .venv/bin/python -m pip install --quiet --no-deps -e . >&2
  echo "$wanted" > "$stamp"
fi
export PATH="$root/.venv/bin:$PATH"
