#!/usr/bin/env python3
#! Test oracle for `coalprof lines`: what NVIDIA's `ncu_report` module (PyPI `ncu-report`,
#! installed into .tools/ncu-report by scripts/install-tools.sh) says about one `.ncu-rep`, per
#! launch: the kernel's first PC (`launch__function_pcs`), its kernel-level global load + store
#! requests (`l1tex__t_requests_…`), per instruction PC the source
#! location (`action.source_info(pc)`) and the per-instruction (instanced) metrics named on the
#! command line, and the source files embedded in the report. JSON on stdout. tests/it/lines.rs compares coalprof against it; never used by
#! coalprof itself.
import json
import math
import sys

import ncu_report


def main(path, names):
    report = ncu_report.load_report(path)
    launches = []
    for r in range(report.num_ranges()):
        rng = report.range_by_idx(r)
        for i in range(rng.num_actions()):
            a = rng.action_by_idx(i)
            have = set(a.metric_names())
            fpc = a.metric_by_name("launch__function_pcs") if "launch__function_pcs" in have else None
            pcs = {}
            for n in names:
                if n not in have:
                    continue
                m = a.metric_by_name(n)
                if not m.has_correlation_ids():
                    continue
                cids = m.correlation_ids()
                for k in range(m.num_instances()):
                    v = m.value(k)
                    if isinstance(v, float) and not math.isfinite(v):
                        continue
                    pcs.setdefault(str(cids.as_uint64(k)), {})[n] = v
            for pc, entry in pcs.items():
                info = a.source_info(int(pc))
                entry["file"] = info.file_name() if info else None
                entry["line"] = info.line() if info else None
            # The start PCs: the instances (ncu 2025.1+ keeps only those), else the scalar.
            starts = []
            if fpc is not None and fpc.has_correlation_ids():
                cids = fpc.correlation_ids()
                starts = [int(fpc.value(k)) for k in sorted(range(fpc.num_instances()), key=cids.as_uint64)]
            elif fpc is not None and fpc.has_value():
                starts = [int(fpc.value())]
            requests = [
                a.metric_by_name(n).value()
                for n in ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
                if n in have
            ]
            launches.append(
                {
                    "kernel": a.name(a.NameBase_DEMANGLED),
                    "function_pc": starts[0] if starts else None,
                    "kernel_requests": sum(requests) if len(requests) == 2 and all(map(math.isfinite, requests)) else None,
                    "pcs": pcs,
                    "sources": dict(a.source_files()),
                }
            )
    json.dump({"launches": launches}, sys.stdout, allow_nan=False)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
