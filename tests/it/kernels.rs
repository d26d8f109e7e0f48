//! The pattern kernels through the real nvcc (PyPI) and cuobjdump: every file compiles for
//! sm_80 and sm_90 with warnings as errors, and the vector pattern keeps its 128-bit loads.

use coalprof::build::build;
use coalprof::patterns::Pattern;
use coalprof::tools::cuobjdump::{global_loads, Cuobjdump};
use coalprof::tools::nvcc::Nvcc;

use crate::util::{coalprof, real_nvcc, root, OkStdout};

#[test]
fn every_pattern_compiles_for_sm80_and_sm90_with_warnings_as_errors() {
    let Some(nvcc) = real_nvcc("every_pattern_compiles") else { return };
    let out = coalprof().env("COALPROF_NVCC", &nvcc).args(["build", "--all", "--arch", "sm_80,sm_90"]).ok_stdout();
    let text = String::from_utf8(out).unwrap();
    for arch in ["sm_80", "sm_90"] {
        for p in Pattern::ALL {
            let line = format!("{arch} {:<15}", p.name());
            assert!(text.lines().any(|l| l.starts_with(&line)), "{line} missing from:\n{text}");
        }
    }
}

#[test]
fn vector_float4_issues_128_bit_loads_and_its_fallback_scalar_ones() {
    let Some(nvcc) = real_nvcc("vector_float4_issues_128_bit_loads") else { return };
    let cache = root().join("kernels/build");
    let built = build(&[Pattern::Vector], "sm_90", &Nvcc { path: nvcc.clone() }, &cache).unwrap();
    let cuobjdump = Cuobjdump { path: nvcc.with_file_name("cuobjdump") };
    let sass = cuobjdump.sass(&built[0].exe).unwrap();
    let f4 = global_loads(&sass["vector_float4"]);
    assert!(f4.iter().any(|l| l.starts_with("LDG.E.128")), "vector_float4 lost its 128-bit load: {f4:?}");
    let scalar = |l: &&String| !l.contains(".64") && !l.contains(".128") && !l.contains(".U") && !l.contains(".S");
    assert!(f4.iter().any(|l| scalar(&l)), "vector_float4 has no scalar fallback load: {f4:?}");
    let f1 = global_loads(&sass["vector_float"]);
    assert!(!f1.is_empty() && f1.iter().all(|l| !l.contains(".128")), "vector_float: {f1:?}");
    let f2 = global_loads(&sass["vector_float2"]);
    assert!(f2.iter().any(|l| l.starts_with("LDG.E.64")), "vector_float2: {f2:?}");
}

#[test]
fn a_kernel_that_does_not_compile_names_the_file_and_shows_nvcc() {
    let Some(nvcc) = real_nvcc("a_kernel_that_does_not_compile") else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("broken.cu");
    std::fs::write(&src, "__global__ void k() { undeclared = 1; }\n").unwrap();
    let n = Nvcc { path: nvcc };
    let err = coalprof::runtime().block_on(n.compile(&src, "sm_90", &dir.path().join("broken"))).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("broken.cu") && msg.contains("does not compile") && msg.contains("undeclared"), "{msg}");
}

/// Every built executable accepts every variant of the catalogue, in the one encoding of
/// `Variant::args`, and reports exactly the launch plan coalprof asked for (plan mode: no GPU).
#[test]
fn every_executable_takes_the_catalogues_variants_and_reports_the_plan() {
    use coalprof::patterns::{variants, Sizing};
    let Some(nvcc) = real_nvcc("every_executable_takes_the_catalogues_variants") else { return };
    let cache = root().join("kernels/build");
    let built = build(&Pattern::ALL, "sm_90", &Nvcc { path: nvcc }, &cache).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for b in built {
        let plan = variants(b.pattern, Sizing { bytes: 1 << 20 });
        let manifest = dir.path().join(format!("{}.jsonl", b.pattern.name()));
        let out = std::process::Command::new(&b.exe)
            .env("COALPROF_PLAN_ONLY", "1")
            .args(coalprof::kernel_args(&manifest, &plan, None))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}: {}", b.pattern, String::from_utf8_lossy(&out.stderr));
        let entries = coalprof::manifest::read(&manifest).unwrap();
        coalprof::manifest::check_against_plan(&entries, &plan).unwrap_or_else(|e| panic!("{}: {e}", b.pattern));
        // A variant whose parameter the executable does not know is refused (exit 2), naming it.
        let broken = plan[0].kernel_arg().replacen(&format!(";{}=", plan[0].args()[0].0), ";no_such_key=", 1);
        let out = std::process::Command::new(&b.exe)
            .env("COALPROF_PLAN_ONLY", "1")
            .args(["--manifest".as_ref(), manifest.as_os_str(), "--variant".as_ref(), broken.as_ref()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}: {}", b.pattern, String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains(plan[0].args()[0].0), "{}", b.pattern);
    }
}
