//! The one integration-test binary. Each module tests one command or one external tool.

#![allow(clippy::print_stderr, clippy::print_stdout, clippy::disallowed_methods)] // tests drive processes and say what they skip

mod action; // action.yml's steps in a fake GitHub environment; action.yml and release.yml parse
mod analyze;
mod architecture; // no module cycles; every file says what it is for
mod bad_input;
mod benchmark; // `--format bencher` and `github-benchmark` against their documented shapes
mod browser; // headless Chromium for the HTML tests
mod check; // `coalprof check`: rules × fixture runs × baseline → outputs and exit codes
mod check_waste; // the default gate on a store, a bank conflict and a padded tile: simulated, and a fake report
mod compare; // `coalprof compare`: runs and reports side by side, every format
mod docs; // every console example of README.md and docs/ runs (trycmd)
mod fake_gpu; // `run --backend ncu` end to end through the fakes of tests/fake_gpu/
mod faults;
mod help; // help texts against behaviour where they state a fact
mod history; // `coalprof history` over saved runs, and the commit each run records
mod hostile; // names with newlines, workflow commands and terminal escapes stay text in every format
mod html; // `--format html` pages opened in headless Chromium
mod kernels;
mod lines; // `coalprof lines` against ncu_report and ncu 2022.3's source page
mod lines_2025; // reports in ncu 2025's layout, made by the fake ncu's writer around a real cubin
mod lines_cubin;
mod lines_gate; // `[[gate]]` rules and baselines on source lines
mod lines_sarif; // SARIF 2.1.0 validated against the OASIS schema // the cubin line-table reader against nvcc + nvdisasm
mod lines_stream; // `lines::report` streaming equals the collecting path on every fixture
mod mcp; // `coalprof mcp` through the official MCP Python SDK's client: every tool, errors, progress, cancel
mod model;
mod native_rep; // the native .ncu-rep reader against ncu_report and ncu 2022.3, on every fixture
mod package; // what `cargo package` packs: every embedded file, no fixture
mod pipes; // stdout and stderr closed pipes: each command exits with its own code, never aborts
mod plots; // plots in a run folder, linked from results.md and `report --format markdown`
mod profile;
mod real_ncu;
mod robust;
mod robust_rep; // the native .ncu-rep reader against bad, truncated and mutated reports
mod run;
mod sanity; // broken counters (NaN, impossible counts) in CSV and .ncu-rep; re-saved CSVs
mod setup; // `coalprof setup`: dry run, idempotence, a failed simulator build that leaves nothing
mod sim; // `--backend sim`: the kernels in GPGPU-Sim equal the address model exactly
mod sim_programs; // CUDA programs as people write them (cooperative groups, CUB, Thrust…) under `profile --backend sim`
mod slurm; // `run --slurm` through a real one-node Slurm (scripts/slurm-local.sh)
mod snapshots_out;
mod summary; // `--format summary`: each command's, its 4 KB bound, the limit flag, hostile names
mod triton; // `coalprof triton`: exact numbers of Triton kernels through a real Triton, no GPU
mod untrusted; // hostile inputs built from a grammar of each format: `check` bounded in time and memory
mod util;
mod wheel; // the wheel in fresh venvs: the CLI, `import coalprof`, the [cuda] extra (opt-in: a release build)
mod width; // terminal tables fit COLUMNS / the terminal / 100 columns; `--wide` shows all
