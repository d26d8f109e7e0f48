#!/usr/bin/env python3
#! Test oracle: prints what NVIDIA's `ncu_report` module (PyPI `ncu-report`, installed into
#! .tools/ncu-report by scripts/install-tools.sh) reads from one `.ncu-rep`, as JSON on stdout.
#! The integration test tests/it/native_rep.rs compares coalprof's native reader against it.
#! Never used by coalprof itself.
import json
import math
import sys

import ncu_report


def value(m, idx=None):
    v = m.value() if idx is None else m.value(idx)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def dump(path):
    report = ncu_report.load_report(path)
    launches = []
    for r in range(report.num_ranges()):
        rng = report.range_by_idx(r)
        for i in range(rng.num_actions()):
            a = rng.action_by_idx(i)
            metrics = {}
            for name in a.metric_names():
                m = a.metric_by_name(name)
                entry = {"unit": m.unit(), "value": value(m) if m.has_value() else None}
                if m.has_correlation_ids():
                    cids = m.correlation_ids()
                    n = m.num_instances()
                    entry["instances"] = [[cids.as_uint64(k), value(m, k)] for k in range(n)]
                metrics[name] = entry
            launches.append(
                {
                    "range": r,
                    "demangled": a.name(a.NameBase_DEMANGLED),
                    "function": a.name(a.NameBase_FUNCTION),
                    "mangled": a.name(a.NameBase_MANGLED),
                    "metrics": metrics,
                    "sources": dict(a.source_files()),
                }
            )
    return {"launches": launches}


if __name__ == "__main__":
    json.dump(dump(sys.argv[1]), sys.stdout, allow_nan=False)
