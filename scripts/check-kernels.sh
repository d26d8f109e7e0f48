#!/usr/bin/env bash
#! Compiles every kernels/*.cu with the project-local nvcc for sm_80 and sm_90, with the flags
#! coalprof builds with (-lineinfo -O3 -Werror all-warnings), into a temporary folder, then checks
#! the load widths in the SASS of the vector pattern (cuobjdump -sass, no GPU needed):
#!   vector_float4 holds LDG.E.128 (aligned path) and a scalar LDG.E (misaligned fallback);
#!   vector_float holds no 128-bit load.
#! Usage: scripts/check-kernels.sh [ARCH ...]   (default: sm_80 sm_90). Exit 1 on any failure.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cuda_bin="${CUDA_BIN:-$root/.tools/cuda-home/bin}"
nvcc="$cuda_bin/nvcc"
[ -x "$nvcc" ] || { echo "check-kernels: no nvcc at $nvcc (run scripts/install-tools.sh)" >&2; exit 1; }
export PATH="$cuda_bin:$PATH"   # cuobjdump needs nvdisasm on PATH

archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(sm_80 sm_90)
flags=(-lineinfo -O3 -Werror all-warnings)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

fail=0
say() { printf 'check-kernels: %s\n' "$*"; }
bad() { printf 'check-kernels: FAIL: %s\n' "$*" >&2; fail=1; }

for arch in "${archs[@]}"; do
    start=$(date +%s)
    for cu in "$root"/kernels/*.cu; do
        stem="$(basename "$cu" .cu)"
        if "$nvcc" -arch="$arch" "${flags[@]}" -o "$out/$stem.$arch" "$cu"; then
            say "compiled $stem.cu for $arch"
        else
            bad "nvcc -arch=$arch ${flags[*]} $stem.cu"
        fi
    done
    say "$arch: all files in $(( $(date +%s) - start )) s"

    bin="$out/vector.$arch"
    [ -f "$bin" ] || { bad "no vector binary for $arch"; continue; }
    sass="$out/vector.$arch.sass"
    cuobjdump -sass "$bin" > "$sass" || { bad "cuobjdump -sass vector ($arch)"; continue; }
    # The SASS of one function: from its "Function : NAME" line to the next "Function :".
    fn() { awk -v f="$1" '/Function : /{on = ($NF == f)} on' "$sass"; }
    f4="$(fn vector_float4)"
    f1="$(fn vector_float)"
    [ -n "$f4" ] || bad "$arch: no vector_float4 in the SASS"
    [ -n "$f1" ] || bad "$arch: no vector_float in the SASS"
    wide=$(grep -cE 'LDG\.E\.128' <<<"$f4" || true)
    # Scalar: LDG.E followed by nothing or a non-width qualifier (.CONSTANT, .EF, ...), never
    # .64/.128/.U8/.S8/.U16/.S16.
    scalar=$(grep -E 'LDG\.E[. ]' <<<"$f4" | grep -cvE 'LDG\.E\.(64|128|U8|S8|U16|S16)' || true)
    wide1=$(grep -cE '(LDG|STG)\.E\.128' <<<"$f1" || true)
    if [ "$wide" -gt 0 ]; then say "$arch: vector_float4 has $wide LDG.E.128 (vector path)"; else bad "$arch: vector_float4 has no LDG.E.128"; fi
    if [ "$scalar" -gt 0 ]; then say "$arch: vector_float4 has $scalar scalar LDG.E (misaligned fallback)"; else bad "$arch: vector_float4 has no scalar LDG.E fallback"; fi
    if [ "$wide1" -eq 0 ]; then say "$arch: vector_float has no .128 access"; else bad "$arch: vector_float has $wide1 .128 accesses"; fi
done

if [ "$fail" -ne 0 ]; then
    say "FAILED"
    exit 1
fi
say "all checks passed (${archs[*]})"
