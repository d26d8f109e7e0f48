//! Whose code a source line is: the user's, or a library's (the CUDA toolkit's headers, libcu++,
//! CUB, Thrust, cooperative groups, CUTLASS and CuTe), and so which frame of an inlined call
//! chain an access is counted on. One rule for every input: a cubin's line table (`.ncu-rep`
//! reports) and the PTX's `.loc … inlined_at` (simulated runs).
//!
//! The rule: walking out from where the access was made (the innermost frame), the first frame
//! in the user's files is the line the access is counted on; the innermost frame, a library's,
//! is kept beside it (`via`). So `__ldcs(a + i)` on `app.cu:5` is `app.cu:5` via
//! `sm_32_intrinsics.hpp:302`; a CUB `BlockLoad` called on `app.cu:9` is `app.cu:9` via the CUB
//! line that loads, however deep CUB's own calls go; and a user's helper in their own header
//! that calls `__ldg` is the helper's line (their code made the call). A chain with no frame of
//! the user's (a kernel that is itself a library's: CUB's `DeviceReduce`, CUTLASS's own GEMM)
//! stays on the line that made the access.

/// Folders whose files belong to a library when they sit right under an `include` folder
/// (`…/include/cub/…`, as every one of them is included: `<cub/…>`, `<cuda/std/…>`) or under a
/// folder of their own name (`cccl/cub/cub/…`, `thrust/thrust/…`, as their repositories lay
/// them out). A CUTLASS example (`cutlass/examples/…`) is the user's: it is code people copy
/// and change.
const LIBRARY_FOLDERS: [&str; 10] =
    ["cub", "thrust", "cuda", "cooperative_groups", "crt", "nv", "cute", "cutlass", "nvtx3", "libcudacxx"];

/// The CUDA toolkit's own headers of device code, directly in its `include` folder, by name
/// without extension (`sm_32_intrinsics.hpp` is `sm_NN_…`; `curand_kernel.h`, `cuda_fp16.hpp`,
/// `cuda_pipeline_primitives.h` by how they start): exact names, so a user's `cuda_utils.h` in
/// their own `include/` stays theirs.
const TOOLKIT_HEADERS: [&str; 19] = [
    "cuda_runtime",
    "cuda_device_runtime_api",
    "cuda_surface_types",
    "cuda_texture_types",
    "cuda_bf16",
    "cuda_fp16",
    "cuda_tf32",
    "cooperative_groups",
    "common_functions",
    "device_functions",
    "device_atomic_functions",
    "device_double_functions",
    "math_functions",
    "vector_functions",
    "texture_indirect_functions",
    "surface_indirect_functions",
    "texture_fetch_functions",
    "mma",
    "nvfunctional",
];

/// Name beginnings of toolkit headers that come in families (`cuda_fp8.hpp`, `curand_kernel.h`).
const TOOLKIT_FAMILIES: [&str; 4] = ["cuda_fp", "cuda_pipeline", "cuda_awbarrier", "curand"];

/// Whether `file` (lower case, no folder) is one of the toolkit's headers of device code.
fn is_toolkit_header(file: &str) -> bool {
    let Some((stem, ext)) = file.rsplit_once('.') else { return false };
    if !["h", "hpp"].contains(&ext) {
        return false;
    }
    let sm = stem.strip_prefix("sm_").is_some_and(|r| r.len() > 3 && r[..2].bytes().all(|b| b.is_ascii_digit()));
    sm || TOOLKIT_HEADERS.contains(&stem) || TOOLKIT_FAMILIES.iter().any(|f| stem.starts_with(f))
}

/// Whether `path` (as a line table or `.file` names it) is a library's header, not the user's
/// code: under the CUDA toolkit's (or a system's) `include` folder with a toolkit header's name,
/// or in a library's folder (`include/cub/`, `include/thrust/`, `include/cuda/`, `include/cute/`,
/// `include/cutlass/`, …; `cccl/cub/cub/`). Paths are compared as written, after `.`/`..` are
/// resolved (`/opt/cuda/bin/../include/x.h`); `\` counts as `/`.
pub fn is_library(path: &str) -> bool {
    let unified = path.replace('\\', "/");
    let mut parts: Vec<String> = Vec::new();
    for p in unified.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p.to_ascii_lowercase()),
        }
    }
    let Some((file, folders)) = parts.split_last() else { return false };
    if folders.last().is_some_and(|d| d == "include") && is_toolkit_header(file) {
        return true;
    }
    folders.windows(2).any(|w| LIBRARY_FOLDERS.contains(&w[1].as_str()) && (w[0] == "include" || w[0] == w[1]))
}

/// An access's place in the user's code: the frame it is counted on, and the library frame it
/// was made in when that is another (`None` when the access was made in the user's code, or no
/// frame is the user's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributed<L> {
    /// The line the access is counted on.
    pub at: L,
    /// Where inside a library it was made.
    pub via: Option<L>,
}

/// The frame of `chain` (innermost first: where the access was made, then each call site
/// outwards) an access is counted on, by the rule of this module; `path` names a frame's file.
/// `None` for an empty chain.
pub fn attribute<L: Clone>(chain: &[L], path: impl Fn(&L) -> &str) -> Option<Attributed<L>> {
    let inner = chain.first()?;
    if !is_library(path(inner)) {
        return Some(Attributed { at: inner.clone(), via: None });
    }
    Some(match chain.iter().find(|f| !is_library(path(f))) {
        Some(user) => Attributed { at: user.clone(), via: Some(inner.clone()) },
        None => Attributed { at: inner.clone(), via: None },
    })
}

/// `file:line` as people read it beside a row: the file's name without its folders.
pub fn short(file: &str, line: u32) -> String {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    format!("{name}:{line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_headers_and_the_users_files() {
        for lib in [
            "/opt/cuda11/bin/../include/sm_32_intrinsics.hpp",
            "/usr/local/cuda-11.8/bin/../targets/x86_64-linux/include/sm_32_intrinsics.hpp",
            "/home/u/.coalprof/cuda/include/cub/block/block_load.cuh",
            "/usr/include/thrust/system/cuda/detail/transform.h",
            "/usr/include/cuda/std/detail/libcxx/include/atomic",
            "/opt/cuda/include/cooperative_groups/details/reduce.h",
            "/opt/cuda/include/cooperative_groups.h",
            "/opt/cuda/include/cuda_fp16.hpp",
            "/opt/cuda/include/crt/sm_80_rt.hpp",
            "/root/cutlass/include/cutlass/arch/memory_sm80.h",
            "/root/cutlass/include/cute/arch/copy_sm80.hpp",
            "/src/cccl/cub/cub/block/block_reduce.cuh",
            "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\include\\sm_32_intrinsics.hpp",
        ] {
            assert!(is_library(lib), "{lib}");
        }
        for user in [
            "/home/u/app/include/mine.cuh",
            "/home/u/cuda-app/app.cu",
            "/home/u/cuda-app/include/kernels.cuh",
            "/home/u/cuda/k.cu",
            "/root/cutlass/examples/13_two_tensor_op_fusion/kernel/b2b_gemm.h",
            "/home/u/include/sm_helpers.cu",
            "/home/u/app/include/cuda_utils.h",
            "/home/u/app/include/device_utils.cuh",
            "app.cu",
            "",
        ] {
            assert!(!is_library(user), "{user}");
        }
    }

    #[test]
    fn the_first_frame_of_the_users_walking_out_with_the_library_line_beside() {
        let hdr = "/cuda/include/sm_32_intrinsics.hpp:302";
        let cub = "/cuda/include/cub/block/block_load.cuh:80";
        let at = |chain: &[&str]| {
            let chain: Vec<String> = chain.iter().map(|s| s.to_string()).collect();
            let a = attribute(&chain, |s: &String| s.split(':').next().unwrap())?;
            Some((a.at, a.via))
        };
        let s = |t: &str| t.to_string();
        assert_eq!(at(&[hdr, "/a/app.cu:5"]), Some((s("/a/app.cu:5"), Some(s(hdr)))));
        assert_eq!(at(&[hdr, cub, cub, "/a/app.cu:9", "/a/app.cu:2"]), Some((s("/a/app.cu:9"), Some(s(hdr)))));
        assert_eq!(at(&[hdr, "/a/mine.cuh:3", "/a/app.cu:7"]), Some((s("/a/mine.cuh:3"), Some(s(hdr)))));
        assert_eq!(at(&["/a/mine.cuh:3", "/a/app.cu:7"]), Some((s("/a/mine.cuh:3"), None)), "the user's own code");
        assert_eq!(at(&[hdr, cub]), Some((s(hdr), None)), "no frame of the user's: where it was made");
        assert_eq!(at(&[]), None);
        assert_eq!(short("/cuda/include/sm_32_intrinsics.hpp", 302), "sm_32_intrinsics.hpp:302");
    }
}
