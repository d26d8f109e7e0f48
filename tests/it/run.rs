//! `coalprof run`, `patterns`, `doctor` and `profile` on a machine without a GPU: the model by
//! default, exit 4 with one line when measuring is insisted on, and the real ncu's no-GPU path.

use crate::util::{coalprof, json, real_ncu, real_nvcc, OkStdout};

#[test]
fn patterns_lists_all_ten_with_their_variants() {
    let out = coalprof().arg("patterns").ok_stdout();
    let text = String::from_utf8(out).unwrap();
    for p in [
        "coalesced",
        "offset",
        "stride",
        "broadcast",
        "gather",
        "vector",
        "kv-layout",
        "bank-conflicts",
        "column",
        "reuse",
    ] {
        assert!(text.lines().any(|l| l.starts_with(p)), "{p} missing:\n{text}");
    }
    for v in [
        "stride_32",
        "offset_1",
        "float4_offset4_fallback",
        "nhd_fp16",
        "hdn_fp16",
        "vllm_fp16",
        "transpose_32x33",
        "row_sums",
        "embedding_random",
    ] {
        assert!(text.contains(v), "{v} missing:\n{text}");
    }
}

#[test]
fn the_main_command_without_a_gpu_shows_the_prediction_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = coalprof()
        .env("PATH", crate::util::no_gpu_path())
        .args(["run", "--pattern", "kv-layout", "--out"])
        .arg(dir.path())
        .ok_stdout();
    let text = String::from_utf8(out).unwrap();
    // The first paragraph (wrapped to the width).
    let first = text.split("\n\n").next().unwrap();
    assert!(first.starts_with("no GPU found") && first.contains("prediction"), "{text}");
    assert!(text.contains("predicted by the address model") && text.contains("hdn_fp16"), "{text}");
    // The run is saved.
    let saved = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
    let results = json(&std::fs::read(saved.join("results.json")).unwrap());
    assert_eq!(results["rows"][0]["source"], "predicted");
    assert!(saved.join("results.md").is_file());
}

#[test]
fn the_kv_layouts_are_16x_apart_in_fp16_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = coalprof()
        .args(["run", "--pattern", "kv-layout", "--backend", "model", "--format", "json", "--out"])
        .arg(dir.path())
        .ok_stdout();
    let v = json(&out);
    let spr = |variant: &str| {
        let row = v["rows"].as_array().unwrap().iter().find(|r| r["variant"] == variant).unwrap();
        assert_eq!(row["source"], "predicted");
        assert_eq!(row["params"]["dtype"], "fp16");
        row["metrics"]["global_load_sectors_per_request"].as_f64().unwrap()
    };
    assert_eq!(spr("hdn_fp16") / spr("nhd_fp16"), 16.0);
}

/// `run --backend ncu` in an environment the test controls: a working folder outside the
/// project (so its `.tools/` is not found), `PATH` without CUDA, and ncu given or not.
fn backend_ncu_in(ncu: Option<&std::path::Path>) -> (Option<i32>, Vec<String>) {
    let cwd = tempfile::tempdir().unwrap();
    let mut cmd = coalprof();
    cmd.env("PATH", crate::util::no_gpu_path()).current_dir(cwd.path());
    if let Some(ncu) = ncu {
        cmd.env("COALPROF_NCU", ncu);
    }
    let out =
        cmd.args(["run", "--pattern", "coalesced", "--backend", "ncu", "--out"]).arg(cwd.path()).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    let errors = e.lines().filter(|l| l.starts_with("error: ")).map(str::to_string).collect();
    (out.status.code(), errors)
}

#[test]
fn backend_ncu_with_neither_gpu_nor_ncu_names_the_gpu_first_and_mentions_ncu() {
    let (code, errors) = backend_ncu_in(None);
    assert_eq!(code, Some(4), "{errors:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    let gpu = errors[0].find("no GPU").expect("names the missing GPU");
    let ncu = errors[0].find("`ncu` not found").expect("mentions the missing ncu");
    assert!(gpu < ncu, "the GPU comes first: {errors:?}");
}

#[test]
fn backend_ncu_with_ncu_but_no_gpu_names_only_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = dir.path().join("ncu");
    std::fs::write(&ncu, "#!/bin/sh\necho 'Version 2025.3.0.0'\n").unwrap();
    std::fs::set_permissions(&ncu, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (code, errors) = backend_ncu_in(Some(&ncu));
    assert_eq!(code, Some(4), "{errors:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("no GPU") && !errors[0].contains("ncu"), "{errors:?}");
}

#[test]
fn the_real_ncu_runs_a_pattern_here_and_coalprof_reports_no_gpu() {
    let (Some(ncu), Some(nvcc)) = (real_ncu("the_real_ncu_runs_a_pattern"), real_nvcc("the_real_ncu_runs_a_pattern"))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = coalprof()
        .env("COALPROF_NCU", &ncu)
        .env("COALPROF_NVCC", &nvcc)
        .args(["run", "--pattern", "coalesced", "--backend", "ncu", "--arch", "sm_90", "--size", "1M", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{e}");
    assert!(e.contains("no GPU or NVIDIA driver found: ncu could not connect to the CUDA driver"), "{e}");
    assert_eq!(e.lines().filter(|l| l.starts_with("error: ")).count(), 1, "{e}");
}

#[test]
fn doctor_says_what_is_missing_with_the_fix() {
    let out = coalprof()
        .env("PATH", crate::util::no_gpu_path())
        .current_dir(std::env::temp_dir())
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(text.contains("MISS nvcc") && text.contains("MISS ncu") && text.contains("MISS GPU"), "{text}");
    assert!(text.matches("fix: ").count() >= 3, "{text}");
    // Each missing tool names the setup command that installs it.
    assert!(text.contains("coalprof setup cuda") && text.contains("coalprof setup ncu"), "{text}");
    assert!(text.contains("coalprof setup sim"), "{text}");
    // A missing ncu is a problem for profiling only: reports are read without it.
    assert!(text.contains("needed only to profile") && text.contains("ok   reports"), "{text}");
}

#[test]
fn doctor_finds_the_project_tools() {
    let (Some(_), Some(_)) = (real_ncu("doctor_finds_the_project_tools"), real_nvcc("doctor_finds_the_project_tools"))
    else {
        return;
    };
    let out = coalprof().env("PATH", crate::util::no_gpu_path()).arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ok   nvcc") && text.contains("ok   ncu") && text.contains("2022.3.0.0"), "{text}");
}

/// Outside the checkout, with a fresh `HOME`: what the tool home holds is found there, and
/// `doctor` says so (the tools are the checkout's, linked into a temporary home's layout).
#[test]
fn doctor_finds_the_tools_in_the_tool_home_from_any_folder() {
    let test = "doctor_finds_the_tools_in_the_tool_home_from_any_folder";
    let (Some(ncu), Some(nvcc)) = (real_ncu(test), real_nvcc(test)) else { return };
    let home = tempfile::tempdir().unwrap();
    let tool_home = home.path().join("share/coalprof");
    std::fs::create_dir_all(tool_home.join("bin")).unwrap();
    std::os::unix::fs::symlink(ncu.canonicalize().unwrap(), tool_home.join("bin/ncu")).unwrap();
    let cuda = nvcc.parent().unwrap().parent().unwrap().canonicalize().unwrap();
    std::os::unix::fs::symlink(cuda, tool_home.join("cuda-home")).unwrap();
    let out = coalprof()
        .env("PATH", crate::util::no_gpu_path())
        .env("HOME", home.path())
        .env_remove("COALPROF_HOME")
        .env("XDG_DATA_HOME", home.path().join("share"))
        .current_dir(home.path())
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for tool in ["nvcc", "nvdisasm", "cuobjdump", "ncu"] {
        let line =
            text.lines().find(|l| l.starts_with(&format!("ok   {tool} "))).unwrap_or_else(|| panic!("{tool}: {text}"));
        assert!(line.contains("from the tool home") && line.contains(&*tool_home.to_string_lossy()), "{line}");
    }
}

#[test]
fn an_unknown_pattern_is_a_usage_error_listing_the_known_ones() {
    let out = coalprof().args(["run", "--pattern", "strid"]).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("unknown pattern `strid`") && e.contains("stride"), "{e}");
}

#[test]
fn completions_for_bash_zsh_and_fish_name_every_command() {
    for (shell, marker) in [("bash", "_coalprof()"), ("zsh", "#compdef coalprof"), ("fish", "complete -c coalprof")] {
        let text = String::from_utf8(coalprof().args(["completions", shell]).ok_stdout()).unwrap();
        assert!(text.contains(marker), "{shell}: {}", &text[..text.len().min(300)]);
        for command in ["run", "analyze", "check", "model", "doctor"] {
            assert!(text.contains(command), "{shell} completions lack `{command}`");
        }
    }
    let out = coalprof().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
