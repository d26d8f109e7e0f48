//! `coalprof analyze` on every real ncu CSV fixture: launch counts, kernel names and values.

use serde_json::Value;

use crate::util::{coalprof, fixture, json, OkStdout};

/// Run `analyze --format json` (per launch when asked) and return the rows.
fn rows(rel: &str, per_launch: bool) -> Vec<Value> {
    let mut c = coalprof();
    c.arg("analyze").arg(fixture(rel)).args(["--format", "json"]);
    if per_launch {
        c.arg("--per-launch");
    }
    let out = c.ok_stdout();
    let v = json(&out);
    assert_eq!(v["schema"], "coalprof/1");
    v["rows"].as_array().unwrap().clone()
}

fn metric(row: &Value, key: &str) -> Option<f64> {
    row["metrics"][key].as_f64()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-30)
}

#[test]
fn every_real_csv_fixture_parses_with_its_launches_and_kernels() {
    // (fixture, launches, distinct kernels (per kernel and shape), first kernel name)
    let cases: &[(&str, usize, usize, &str)] = &[
        ("ncu/2019/details_csv_nvnsightcucli2019_v100_lassen_hotspot_stdout.txt", 1, 1, "calculate_temp"),
        ("ncu/2019/raw_page_nvnsightcucli2019_gtx1080_units_base_fp_stdout.txt", 3, 1, "vecAdd"),
        ("ncu/2020/details_csv_ncu2020_2_rtx3070_nvtx_appstdout.csv", 2, 2, "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x10_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x10_nn_align4::Params)"),
        ("ncu/2020/log_ncu2020_3_a100_no_kernels_warning_app_error_excerpt.txt", 1, 1, "void at::native::(anonymous namespace)::upsample_bilinear2d_out_frame<float, float>(int, float, float, bool, at::GenericPackedTensorAccessor<float, 4ul, at::DefaultPtrTraits, long>, at::GenericPackedTensorAccessor<float, 4ul, at::DefaultPtrTraits, long>)"),
        ("ncu/2021/details_csv_ncu2021_2_a100_sections_rules_ragged_head.csv", 1, 1, ""),
        ("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_raw_base.csv", 5, 1, "void vecAdd<float>(float*,float*,float*,int)"),
        ("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_raw_auto.csv", 5, 1, "void vecAdd<float>(float*,float*,float*,int)"),
        ("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_details_base.csv", 5, 1, "void vecAdd<float>(float*,float*,float*,int)"),
        ("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv", 1, 1, "void vecAdd<float>(float*,float*,float*,int)"),
        ("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_details_base.csv", 1, 1, "void vecAdd<float>(float*,float*,float*,int)"),
        ("ncu/2024/details_csv_ncu2024_3_rtx4080_import_rules.csv", 5, 5, "rand_init(curandStateXORWOW *)"),
        ("ncu/2025/details_csv_ncu2025_b200_cc10_setfull_base_units_appstdout.log", 1, 1, "cutlass3x_sm100_tensorop_s64x256x32gemm_f8_f8_f32_f16_f16_64x256x128_1x1x1_0_tnn_align4_1sm_bias_f16_relu_aux_scalemax"),
    ];
    for &(rel, launches, kernels, first) in cases {
        let per_launch = rows(rel, true);
        assert_eq!(per_launch.len(), launches, "{rel}: launches");
        let per_kernel = rows(rel, false);
        assert_eq!(per_kernel.len(), kernels, "{rel}: kernels");
        let total: u64 = per_kernel.iter().map(|r| r["launches"].as_u64().unwrap()).sum();
        assert_eq!(total as usize, launches, "{rel}: launch counts add up");
        if first.is_empty() {
            assert!(
                per_kernel[0]["kernel"].as_str().unwrap().starts_with(
                    "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4,"
                ),
                "{rel}"
            );
        } else {
            assert_eq!(per_kernel[0]["kernel"], first, "{rel}: first kernel");
        }
    }
}

#[test]
fn summary_page_groups_by_kernel_and_shape_and_weights_by_invocations() {
    let rel = "ncu/2023/summary_csv_ncu2023_2_rtx3090_per_kernel_min_max_avg.csv";
    let r = rows(rel, false);
    // The same kernel name appears with Invocations 3 and 2 as two launch shapes.
    let restrict: Vec<&Value> =
        r.iter().filter(|r| r["kernel"].as_str().unwrap().starts_with("rbgs_restrict_aggregate")).collect();
    let counts: Vec<u64> = restrict.iter().map(|r| r["launches"].as_u64().unwrap()).collect();
    assert!(counts.contains(&3) && counts.contains(&2), "{counts:?}");
    assert!(r.iter().all(|row| metric(row, "duration").is_some()));
}

#[test]
fn values_are_in_base_units_whatever_the_page_printed() {
    // The same report rendered with base and auto-scaled units gives the same numbers.
    let base = rows("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv", true);
    let auto = rows("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_auto.csv", true);
    assert_eq!(base[0]["metrics"], auto[0]["metrics"]);
    // dram__read_bytes = 820,928 B, gpu__time_duration = 7,520 ns (no unit printed: ncu's ns).
    assert_eq!(metric(&base[0], "dram_bytes_read"), Some(820_928.0));
    assert!(close(metric(&base[0], "duration").unwrap(), 7.52e-6));
    let bw = metric(&base[0], "dram_bandwidth").unwrap();
    assert!(close(bw, (820_928.0 + 331_264.0) / 7.52e-6), "{bw}");
    // 2019 raw page with --fp: "2,720.00" nsecond.
    let fp = rows("ncu/2019/raw_page_nvnsightcucli2019_gtx1080_units_base_fp_stdout.txt", true);
    assert!(close(metric(&fp[0], "duration").unwrap(), 2.72e-6));
    assert_eq!(metric(&fp[0], "dram_bytes_read"), Some(7552.0));
    // 2024.3 details with auto-scaled `us`: Duration 1.66 us.
    let auto24 = rows("ncu/2024/details_csv_ncu2024_3_rtx4080_import_rules.csv", true);
    assert!(close(metric(&auto24[0], "duration").unwrap(), 1.66e-6));
    assert_eq!(auto24[0]["grid"], serde_json::json!([1, 1, 1]));
}

#[test]
fn shared_memory_counters_of_a_real_a100_report() {
    let r = rows("ncu/2021/details_csv_ncu2021_2_a100_sections_rules_ragged_head.csv", true);
    assert_eq!(metric(&r[0], "shared_load_wavefronts"), Some(0.0));
    assert_eq!(metric(&r[0], "shared_load_bank_conflicts"), Some(0.0));
    // 0 wavefronts over an unknown instruction count: absent, not NaN.
    assert_eq!(metric(&r[0], "shared_load_wavefronts_per_instruction"), None);
}

#[test]
fn json_is_the_documented_contract_and_notes_missing_metrics() {
    let out = coalprof()
        .args(["analyze", "--format", "json"])
        .arg(fixture("ncu/2024/details_csv_ncu2024_3_rtx4080_import_rules.csv"))
        .ok_stdout();
    let v = json(&out);
    let row = &v["rows"][0];
    for key in ["kernel", "id", "metrics", "launches", "source"] {
        assert!(row.get(key).is_some(), "row lacks `{key}`: {row}");
    }
    assert_eq!(row["source"], "measured");
    let notice = v["notices"][0].as_str().unwrap();
    assert!(notice.contains("global_load_sectors"), "{notice}");
}

#[test]
fn every_format_renders() {
    let f = fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv");
    for (format, needle) in [
        ("table", "vecAdd"),
        // Tables show the function name; JSON and CSV keep the whole signature.
        ("markdown", "| `vecAdd<float>` |"),
        ("csv", "void vecAdd<float>("),
        ("json", "\"kernel\": \"void vecAdd<float>("),
    ] {
        let out = coalprof().args(["analyze", "--format", format]).arg(&f).ok_stdout();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(needle), "{format}: {text}");
    }
}

#[test]
fn stdin_is_read_with_a_dash() {
    let f = fixture("ncu/2025/details_csv_ncu2025_b200_cc10_setfull_base_units_appstdout.log");
    let out = coalprof().args(["analyze", "-", "--format", "json"]).pipe_stdin(f).unwrap().ok_stdout();
    assert_eq!(json(&out)["rows"].as_array().unwrap().len(), 1);
}

/// `analyze A B` says what each file lacks: the second file's notices are not dropped.
#[test]
fn analyze_of_two_files_keeps_the_notices_of_both() {
    let notices = |files: &[&str]| -> Vec<String> {
        let mut c = coalprof();
        c.arg("analyze").args(files.iter().map(|f| fixture(f))).args(["--format", "json"]);
        let v = json(&c.ok_stdout());
        v["notices"].as_array().map_or(Vec::new(), |n| n.iter().map(|s| s.as_str().unwrap().to_string()).collect())
    };
    let (a, b) = (
        "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_raw_base.csv",
        "ncu/2021/details_csv_ncu2021_2_a100_sections_rules_ragged_head.csv",
    );
    let (first, second) = (notices(&[a]), notices(&[b]));
    assert!(!second.is_empty() && first != second, "the fixtures lack different metrics: {first:?} {second:?}");
    let both = notices(&[a, b]);
    for n in first.iter().chain(&second) {
        assert!(both.contains(n), "`{n}` is missing from {both:?}");
    }
}
