//! The unit ncu prints for a metric (`--print-units base`, ncu 2022.3's spelling), by name.
//!
//! A report stores bare numbers in ncu's base units; the unit of each metric lives in ncu's
//! metric database, not in the file. This table rebuilds it from the metric naming convention
//! (`unit__counter_qualifiers.rollup.submetric`): the counter names what is counted (`bytes`,
//! `sectors`, `cycles`, `time_duration`), the sub-metric divides it (`per_second`,
//! `per_cycle_active`) or makes it a percentage. Launch, profiler and source-counter metrics
//! whose units follow no pattern are listed. Names without a roll-up (`gpu__time_duration`, the
//! 2019 vocabulary) are what ncu's database no longer knows, and it prints no unit for them.
//!
//! The integration test `native_rep` checks this against ncu 2022.3's CSV and NVIDIA's
//! `ncu_report` on every fixture report. Only time, size and rate units change a number on the
//! way to coalprof's base units; for a count the unit is a label.

/// Launch, profiler and per-instruction metrics, whose units no pattern gives.
const EXACT: &[(&str, &str)] = &[
    ("launch__block_dim_x", "block"),
    ("launch__block_dim_y", "block"),
    ("launch__block_dim_z", "block"),
    ("launch__occupancy_limit_blocks", "block"),
    ("launch__occupancy_limit_registers", "block"),
    ("launch__occupancy_limit_shared_mem", "block"),
    ("launch__occupancy_limit_warps", "block"),
    ("launch__occupancy_limit_barriers", "block"),
    ("launch__cluster_max_potential_size", "block"),
    ("launch__cluster_max_active", "cluster"),
    ("launch__sm_count", "SM"),
    ("launch__occupancy_cluster_pct", "%"),
    ("launch__occupancy_cluster_gpu_pct", "%"),
    ("launch__registers_per_thread", "register/thread"),
    ("launch__registers_per_thread_allocated", "register/thread"),
    ("launch__shared_mem_config_size", "byte"),
    ("launch__thread_count", "thread"),
    ("launch__shared_mem_per_block", "byte/block"),
    ("launch__shared_mem_per_block_allocated", "byte/block"),
    ("launch__shared_mem_per_block_driver", "byte/block"),
    ("launch__shared_mem_per_block_dynamic", "byte/block"),
    ("launch__shared_mem_per_block_static", "byte/block"),
    // ncu 2022.3 prints none for these, ncu_report 2026 says `pass`: the CSV is the reference.
    ("profiler__replayer_passes", ""),
    ("profiler__replayer_passes_type_warmup", ""),
    ("smsp__pcsamp_aggregated_passes", "pass"),
    ("profiler__pmsampler_interval_time", "nsecond"),
    ("profiler__pmsampler_interval_cycles", "cycle"),
    ("smsp__pcsamp_interval_cycles", "cycle"),
    ("profiler__pmsampler_dropped_samples", "sample"),
    ("profiler__pmsampler_merged_samples", "sample"),
    ("profiler__pmsampler_buffer_size_bytes", "byte"),
    ("smsp__pcsamp_buffer_size_bytes", "byte"),
    ("smsp__pcsamp_dropped_bytes", "byte"),
    ("smsp__branch_targets_threads_divergent", "branches"),
    ("sm__maximum_warps_avg_per_active_cycle", "warp"),
    ("smsp__maximum_warps_avg_per_active_cycle", "warp"),
    ("sm__maximum_warps_per_active_cycle_pct", "%"),
    ("inst_executed", "inst"),
    ("thread_inst_executed_true", "inst"),
    ("memory_l1_tag_requests_global", "sectors"),
    ("memory_l1_wavefronts_shared", "sectors"),
    ("memory_l1_wavefronts_shared_ideal", "sectors"),
    ("memory_l2_theoretical_sectors_global", "sectors"),
    ("memory_l2_theoretical_sectors_global_ideal", "sectors"),
    ("memory_l2_theoretical_sectors_local", "sectors"),
    ("memory_l2_sectors_global", "byte"),
    ("memory_l2_sectors_global_ideal", "byte"),
    ("memory_l2_sectors_local", "byte"),
    ("derived__memory_l2_sectors_global_excessive", "byte"),
    ("derived__memory_l2_theoretical_sectors_global_excessive", "byte"),
    ("derived__pct_occupancy_per_block_size", "%"),
    ("derived__pct_occupancy_per_register_count", "%/register"),
    ("derived__pct_occupancy_per_shared_mem_size", "%/byte"),
    ("derived__smsp__inst_executed_op_branch_pct", "%"),
    ("derived__avg_thread_executed", "thread"),
    ("derived__avg_thread_executed_true", "thread"),
    ("derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2", "thread"),
    ("derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2", "thread"),
    ("derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2", "thread"),
    ("derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2", "thread"),
    ("sass__inst_executed_global_loads", "inst"),
    ("sass__inst_executed_global_stores", "inst"),
    ("sass__inst_executed_local_loads", "inst"),
    ("sass__inst_executed_local_stores", "inst"),
    ("sass__inst_executed_shared_loads", "inst"),
    ("sass__inst_executed_shared_stores", "inst"),
];

/// The unit ncu prints for `name` with `--print-units base` ("" when it prints none).
pub fn ncu_unit(name: &str) -> &'static str {
    if let Some((_, u)) = EXACT.iter().find(|(n, _)| *n == name) {
        return u;
    }
    // `breakdown:…`, `pmsampling:…`: the same metric, grouped for a section.
    let name = name.rsplit(':').next().unwrap_or(name);
    let Some((base, rest)) = name.split_once('.') else {
        // PC-sampling stall counts: warps sampled (the one for no instructions is in `inst`,
        // as ncu 2022.3 prints it; the 2026 database says `branches` for branch_resolving).
        if let Some(reason) = name.strip_prefix("smsp__pcsamp_warps_issue_stalled_") {
            return if reason.starts_with("no_instructions") { "inst" } else { "warp" };
        }
        return "";
    };
    let (domain, counter) = base.split_once("__").unwrap_or(("", base));
    if matches!(domain, "device" | "launch" | "derived") {
        return "";
    }
    let parts: Vec<&str> = rest.split('.').collect();
    if parts.iter().any(|p| p.starts_with("pct")) || counter.ends_with("_pct") {
        return "%";
    }
    let last = parts.last().copied().unwrap_or_default();
    if matches!(last, "ratio" | "max_rate") {
        return ratio_unit(counter);
    }
    let c = counted(counter);
    match last {
        "per_second" => match c {
            "cycle" => "cycle/second",
            "byte" => "byte/second",
            "sector" => "sector/second",
            "inst" => "inst/second",
            "request" => "request/second",
            "warp" => "warp/second",
            "block" => "block/second",
            "thread" => "thread/second",
            _ => "1/second",
        },
        l if l.starts_with("per_cycle") || l.starts_with("peak_sustained") => match c {
            // Warps resident per cycle are warps: ncu counts warp-cycles.
            "warp" | "cycle" => c,
            "byte" => "byte/cycle",
            "sector" => "sector/cycle",
            "inst" => "inst/cycle",
            "request" => "request/cycle",
            "thread" => "thread/cycle",
            _ => "",
        },
        _ => c,
    }
}

/// What a counter counts, from its name.
fn counted(counter: &str) -> &'static str {
    let has = |s: &str| counter.contains(s);
    if has("time_duration") {
        "nsecond"
    } else if has("cycles") || has("writeback_active") {
        "cycle"
    } else if has("bytes") {
        "byte"
    } else if has("sectors") {
        "sector"
    } else if has("requests") {
        "request"
    } else if has("inst_executed") || has("inst_issued") {
        "inst"
    } else if has("warps") {
        "warp"
    } else if has("branch_targets") {
        "branches"
    } else if has("ctas") {
        "block"
    } else if has("threads") {
        "thread"
    } else {
        ""
    }
}

/// `…average_X_per_Y….ratio`: what ncu calls the unit of such ratios.
fn ratio_unit(counter: &str) -> &'static str {
    if counter.contains("average_data_bytes_per_sector") {
        "byte/sector"
    } else if counter.contains("average_t_sectors_per_request") {
        "sector/request"
    } else if counter.contains("average_warp_latency_issue_stalled") {
        "inst/warp"
    } else if counter.contains("average_warps_issue_stalled") || counter.contains("per_issue_active") {
        "inst"
    } else if counter.contains("average_warp_latency_per_inst") || counter.contains("average_warps_active_per_inst") {
        "cycle"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::units::scale;

    #[test]
    fn durations_sizes_and_rates_get_units_that_scale() {
        assert_eq!(scale(ncu_unit("gpu__time_duration.sum")).pow10, -9);
        assert_eq!(ncu_unit("dram__bytes_read.sum"), "byte");
        assert_eq!(ncu_unit("dram__bytes_read.sum.per_second"), "byte/second");
        assert_eq!(ncu_unit("sm__cycles_elapsed.avg.per_second"), "cycle/second");
        assert_eq!(ncu_unit("lts__t_sectors.avg.pct_of_peak_sustained_elapsed"), "%");
        assert_eq!(ncu_unit("breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed"), "%");
        // 2019 names without a roll-up: ncu prints no unit, and coalprof's `assume_unit` applies.
        assert_eq!(ncu_unit("gpu__time_duration"), "");
        assert_eq!(ncu_unit("device__attribute_memory_clock_rate"), "");
    }
}
