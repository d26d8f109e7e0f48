#!/usr/bin/env bash
#! Installs what `coalprof run|profile --backend sim` needs into the project's own `.tools/`:
#! the CUDA 11.8 toolkit (Debian bookworm non-free, unpacked project-locally as one folder,
#! `.tools/cuda11/`, with its own `bin/nvcc.profile`; or `CUDA11_HOME` where the user has one)
#! and GPGPU-Sim built from the vendored `git archive` (`../shared/vendor/gpgpu-sim/`,
#! sha256-checked, or `COALPROF_GPGPUSIM_SRC`: an archive or a source folder) with the
#! project's fixes for the simulator's faults (`scripts/sim-patches/*.patch`) applied to the
#! source, into `.tools/gpgpu-sim/`. Build dependencies come from Debian main via apt when run
#! as root. Idempotent: each step is skipped when its result is already there (the simulator
#! is rebuilt when the archive or a patch changes).
#!
#! Where something cannot be had it prints one `SKIPPED install-sim: <why>` line and exits 0:
#! the sim tests then say SKIPPED too, and `coalprof doctor` names what is missing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools"

log() { printf 'install-sim: %s\n' "$*" >&2; }
skip() { printf 'SKIPPED install-sim: %s\n' "$*" >&2; exit 0; }
t0=$SECONDS

# --- build dependencies (Debian main) ---------------------------------------------------------
deps=(bison flex zlib1g-dev libxi-dev libxmu-dev libglu1-mesa-dev xutils-dev g++-11)
missing=()
for p in "${deps[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing build dependencies from Debian main: ${missing[*]}"
        apt-get -qq update >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null
    else
        skip "missing build dependencies (${missing[*]}): apt-get install them as root"
    fi
fi

# --- the CUDA 11.8 toolkit as one folder -----------------------------------------------------
cuda11="$tools/cuda11"
if [ -n "${CUDA11_HOME:-}" ]; then
    [ -x "$CUDA11_HOME/bin/nvcc" ] || skip "CUDA11_HOME=$CUDA11_HOME has no bin/nvcc"
    if [ "$(readlink -f "$cuda11" 2>/dev/null)" != "$(readlink -f "$CUDA11_HOME")" ]; then
        rm -rf "$cuda11"
        ln -sfn "$CUDA11_HOME" "$cuda11"
    fi
    log "CUDA 11 toolkit: CUDA11_HOME=$CUDA11_HOME"
elif [ ! -x "$cuda11/bin/nvcc" ] || [ ! -f "$cuda11/lib64/libcudadevrt.a" ]; then
    log "downloading the CUDA 11.8 toolkit from Debian non-free (about 870 MB)"
    command -v apt-get >/dev/null || skip "no apt-get to fetch the CUDA 11.8 toolkit (set CUDA11_HOME)"
    stage="$tools/cuda11.stage"
    rm -rf "$stage" "$cuda11"
    mkdir -p "$tools/apt/lists/partial" "$stage/debs" "$stage/root"
    cat > "$tools/apt/nonfree.sources" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt_opts=(-o "Dir::Etc::sourcelist=$tools/apt/nonfree.sources" -o "Dir::Etc::sourceparts=-"
              -o "Dir::State::Lists=$tools/apt/lists" -o "Debug::NoLocking=1"
              -o "APT::Sandbox::User=root")
    apt-get "${apt_opts[@]}" -qq update \
        || skip "cannot reach Debian's non-free archive for the CUDA 11.8 toolkit (set CUDA11_HOME)"
    (cd "$stage/debs" && apt-get "${apt_opts[@]}" -qq download \
        nvidia-cuda-toolkit libnvvm4 libcudart11.0 nvidia-cuda-dev) \
        || skip "cannot download the CUDA 11.8 toolkit from Debian non-free (set CUDA11_HOME)"
    for d in nvidia-cuda-toolkit libnvvm4 libcudart11.0; do
        dpkg -x "$stage"/debs/${d}_*.deb "$stage/root"
    done
    # From nvidia-cuda-dev (2.8 GB unpacked: cuBLAS, cuFFT, … static libraries) only the
    # headers, libcudart and libcudadevrt: without libcudadevrt.a nvcc's link warns, and
    # `-Werror all-warnings` fails the build.
    dpkg-deb --fsys-tarfile "$stage"/debs/nvidia-cuda-dev_*.deb | tar -x -C "$stage/root" \
        --wildcards './usr/include/*' \
        ./usr/lib/x86_64-linux-gnu/libcudadevrt.a ./usr/lib/x86_64-linux-gnu/libcudart_static.a \
        ./usr/lib/x86_64-linux-gnu/libcudart.so ./usr/lib/x86_64-linux-gnu/stubs/libcuda.so
    r="$stage/root/usr"
    tk="$r/lib/nvidia-cuda-toolkit"
    out="$stage/cuda11"
    mkdir -p "$out/bin/crt" "$out/nvvm/bin" "$out/nvvm/lib64" "$out/nvvm/include" "$out/lib64/stubs"
    # Debian's /usr/bin/nvcc is a shell wrapper around the real one in nvidia-cuda-toolkit/bin.
    cp -a "$tk/bin/nvcc" "$out/bin/nvcc"
    for b in ptxas fatbinary nvlink cudafe++ cuobjdump nvdisasm bin2c nvprune cu++filt; do
        cp -a "$r/bin/$b" "$out/bin/"
    done
    cp -a "$tk/bin/crt/." "$out/bin/crt/"
    cp -a "$tk/bin/cicc" "$out/nvvm/bin/"
    cp -a "$tk/libdevice" "$out/nvvm/libdevice"
    cp -a "$r"/lib/x86_64-linux-gnu/libnvvm.so* "$out/nvvm/lib64/"
    mv "$r/include/nvvm.h" "$out/nvvm/include/"
    cp -a "$r/include" "$out/include"
    cp -a "$r"/lib/x86_64-linux-gnu/libcudart.so* "$r"/lib/x86_64-linux-gnu/libcudadevrt.a \
        "$r"/lib/x86_64-linux-gnu/libcudart_static.a "$out/lib64/"
    ln -sfn libcudart.so.11.0 "$out/lib64/libcudart.so"
    cp -a "$r/lib/x86_64-linux-gnu/stubs/libcuda.so" "$out/lib64/stubs/"
    # Debian's nvcc expects system paths; this profile makes the folder self-contained.
    cat > "$out/bin/nvcc.profile" <<'PROFILE'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:$(TOP)/nvvm/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
PROFILE
    mv "$out" "$cuda11"
    rm -rf "$stage"
    log "CUDA 11.8 toolkit unpacked into $cuda11 ($((SECONDS - t0)) s)"
else
    log "CUDA 11.8 toolkit already present"
fi
"$cuda11/bin/nvcc" --version | grep -q 'release 11\.' \
    || skip "$cuda11/bin/nvcc is not CUDA 11.x (GPGPU-Sim needs CUDA <= 11)"

# --- GPGPU-Sim from the vendored source -------------------------------------------------------
vendor="$root/../shared/vendor/gpgpu-sim"
src_in="${COALPROF_GPGPUSIM_SRC:-$vendor/gpgpu-sim_distribution-dev-667834c.tar.gz}"
patches=("$root"/scripts/sim-patches/*.patch)
sim="$tools/gpgpu-sim"
if [ -f "$src_in" ]; then
    if [ -z "${COALPROF_GPGPUSIM_SRC:-}" ]; then
        (cd "$vendor" && sha256sum --quiet -c SHA256SUMS) \
            || skip "the vendored GPGPU-Sim archive fails its sha256 check ($vendor/SHA256SUMS)"
    fi
    src_id="$(sha256sum < "$src_in" | cut -c1-64)"
elif [ -d "$src_in" ]; then
    src_id="dir:$(readlink -f "$src_in")"
else
    skip "no GPGPU-Sim source at $src_in (set COALPROF_GPGPUSIM_SRC to an archive or a folder)"
fi
stamp="$src_id $(cat "${patches[@]}" | sha256sum | cut -c1-64)"
lib="$sim/lib/libcudart.so"
if [ -f "$sim/STAMP" ] && [ "$(cat "$sim/STAMP")" = "$stamp" ] && [ -e "$lib" ]; then
    log "GPGPU-Sim already built ($sim)"
else
    t1=$SECONDS
    rm -rf "$sim"
    mkdir -p "$sim/src"
    if [ -f "$src_in" ]; then
        tar -xzf "$src_in" -C "$sim/src"   # a `git archive`: no top-level folder
    else
        cp -a "$src_in/." "$sim/src/"
    fi
    for p in "${patches[@]}"; do
        log "applying $(basename "$p")"
        patch -d "$sim/src" -p1 --forward --quiet < "$p"
    done
    log "building GPGPU-Sim (make -j2: a few minutes)"
    (
        cd "$sim/src"
        export CUDA_INSTALL_PATH="$cuda11"
        # The build string names the git commit it is built in: not coalprof's checkout above.
        export GIT_CEILING_DIRECTORIES="$sim"
        # Outside a git checkout setup_environment prints harmless git errors; it reads
        # variables that may be unset, so not under `set -u`.
        set +eu
        # shellcheck disable=SC1091
        source setup_environment >"$sim/setup.log" 2>&1
        rc=$?
        set -eu
        [ "$rc" = 0 ] || { cat "$sim/setup.log" >&2; exit 1; }
        nice -n 10 make -j2 >"$sim/build.log" 2>&1 \
            || { tail -n 40 "$sim/build.log" >&2; exit 1; }
        ln -sfn "src/lib/$GPGPUSIM_CONFIG" "$sim/lib"
    ) || { echo "error: building GPGPU-Sim failed (log: $sim/build.log)" >&2; exit 1; }
    ln -sfn src/configs/tested-cfgs "$sim/configs"
    ver="$(sed -n 's/.*Version \([0-9.]*\).*/\1/p' "$sim/src/version" | head -n1)"
    printf 'GPGPU-Sim %s (accel-sim/gpgpu-sim_distribution dev 667834c + %s)\n' "$ver" \
        "$(for p in "${patches[@]}"; do basename "$p" .patch; done | paste -sd, -)" > "$sim/VERSION"
    printf '%s\n' "$stamp" > "$sim/STAMP"
    log "GPGPU-Sim built in $((SECONDS - t1)) s"
fi
[ -e "$lib" ] || { echo "error: GPGPU-Sim's libcudart.so is missing from $sim/lib" >&2; exit 1; }
log "cuda11: $("$cuda11/bin/nvcc" --version | tail -n1)"
log "gpgpu-sim: $(cat "$sim/VERSION") in $((SECONDS - t0)) s"
