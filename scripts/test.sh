#!/usr/bin/env bash
#! The test command: installs what the tests need into the project's own `.tools/` (nvcc from
#! PyPI, the real ncu 2022.3 from Debian; idempotent, no GPU, no root install), then runs every
#! test against the locked dependencies. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-tools.sh
exec cargo test --locked "$@"
