#!/usr/bin/env bash
#! Installs what `coalprof triton`'s tests need into the project's own `.tools/triton/`: a
#! virtual environment with Triton (pinned: the version the tests' numbers were checked with)
#! and numpy from PyPI — no torch, no CUDA toolkit (the triton wheel carries its own ptxas), no
#! GPU. The wheel is ~290 MB (1 GB installed); pip's cache makes a second CI run cheap.
#! Idempotent: skipped when that Triton already imports there. The tests find it at
#! `.tools/triton/bin/python3` (tests/it/triton.rs), coalprof itself through its discovery
#! order (the checkout's `.tools/triton/`).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.tools/triton"
triton_version="${COALPROF_TRITON_VERSION:-3.9.0}"

log() { printf 'install-triton: %s\n' "$*" >&2; }

have="$("$venv/bin/python3" -c 'import importlib.metadata as m; print(m.version("triton"))' 2>/dev/null || true)"
if [ "$have" = "$triton_version" ] && "$venv/bin/python3" -c 'import numpy' 2>/dev/null; then
    log "triton $have and numpy already in $venv"
    exit 0
fi
log "installing triton $triton_version and numpy from PyPI into $venv (no torch)"
# A venv records its own path, so it is made in place; a half-made one fails the check above
# next time and is made again.
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "triton==$triton_version" numpy
if "$venv/bin/python3" -c 'import torch' 2>/dev/null; then
    log "torch is importable in $venv: it must not be needed (and was not asked for)"
fi
log "triton: $("$venv/bin/python3" -c 'import triton; print(triton.__version__, triton.__file__)')"
