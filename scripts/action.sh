#!/usr/bin/env bash
#! The shell steps of the coalprof GitHub Action (action.yml): `install`, `check`, `verdict`.
#! Inputs arrive as COALPROF_ACTION_* variables (action.yml maps each input to one), outputs go
#! to $GITHUB_OUTPUT, the markdown verdict to $GITHUB_STEP_SUMMARY (coalprof check --github
#! appends it), a tool's folder to $GITHUB_PATH. tests/it/action.rs runs these steps with a
#! fake GitHub environment; outside Actions each of those files may be unset.
set -euo pipefail

say() { printf 'coalprof-action: %s\n' "$*" >&2; }

# `name=value` to $GITHUB_OUTPUT (values here are numbers, words and paths this script made).
output() {
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
        printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"
    fi
}

# The version in the action's own Cargo.toml: the default, so `uses: …@v0.2.0` gets 0.2.0.
own_version() {
    sed -n 's/^version = "\(.*\)"$/\1/p' "${GITHUB_ACTION_PATH:?}/Cargo.toml" | head -n 1
}

install() {
    local how="${COALPROF_ACTION_INSTALL:-pip}" version="${COALPROF_ACTION_VERSION:-}"
    local temp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}" bin
    case "$how" in
    pip)
        local spec
        case "$version" in
        '') spec="coalprof==$(own_version)" ;;
        latest) spec="coalprof" ;;
        */* | *.whl) spec="$version" ;;
        *) spec="coalprof==$version" ;;
        esac
        # A virtual environment of its own: no clash with the job's Python packages, and no
        # PEP 668 refusal on a system Python.
        python3 -m venv "$temp/coalprof-venv"
        say "pip install $spec"
        if ! "$temp/coalprof-venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"; then
            echo "::error title=coalprof::pip could not install $spec (set the action's version, or install: cargo)"
            exit 3
        fi
        bin="$temp/coalprof-venv/bin"
        ;;
    cargo)
        local source=(--path "${GITHUB_ACTION_PATH:?}")
        case "$version" in
        '') ;;
        latest) source=(coalprof) ;;
        *) source=(coalprof --version "$version") ;;
        esac
        say "cargo install --locked ${source[*]}"
        if ! cargo install --locked --root "$temp/coalprof-cargo" "${source[@]}"; then
            echo "::error title=coalprof::cargo install ${source[*]} failed (see the log above)"
            exit 3
        fi
        bin="$temp/coalprof-cargo/bin"
        ;;
    none)
        if ! command -v coalprof >/dev/null 2>&1; then
            say "install is 'none' but coalprof is not on PATH"
            echo "::error title=coalprof::install is 'none' but coalprof is not on PATH"
            exit 3
        fi
        bin="$(dirname "$(command -v coalprof)")"
        ;;
    *)
        echo "::error title=coalprof::install must be pip, cargo or none"
        exit 2
        ;;
    esac
    if [ -n "${GITHUB_PATH:-}" ]; then
        echo "$bin" >> "$GITHUB_PATH"
    fi
    "$bin/coalprof" --version
}

check() {
    local inputs=() words=() word
    # Whitespace-separated paths or globs (split without the shell's own globbing); a glob that
    # matches nothing stays as written, so coalprof names the missing input (exit 3) instead of
    # checking nothing.
    read -r -d '' -a words <<< "${COALPROF_ACTION_INPUTS:-}" || true
    if [ "${#words[@]}" -eq 0 ]; then
        echo "::error title=coalprof::the action needs inputs: the runs or reports to check"
        exit 2
    fi
    for word in "${words[@]}"; do
        local matches=()
        if [[ "$word" == *[*?[]* ]]; then
            mapfile -t matches < <(compgen -G "$word" | sort)
        fi
        if [ "${#matches[@]}" -gt 0 ]; then
            inputs+=("${matches[@]}")
        else
            inputs+=("$word")
        fi
    done
    local args=(check "${inputs[@]}")
    [ -n "${COALPROF_ACTION_RULES:-}" ] && args+=(--rules "$COALPROF_ACTION_RULES")
    [ -n "${COALPROF_ACTION_BASELINE:-}" ] && args+=(--baseline "$COALPROF_ACTION_BASELINE")
    local extra=()
    read -r -d '' -a extra <<< "${COALPROF_ACTION_ARGS:-}" || true
    local outputs=()
    [ -n "${COALPROF_ACTION_JUNIT:-}" ] && outputs+=(--junit "$COALPROF_ACTION_JUNIT")
    [ -n "${COALPROF_ACTION_SARIF:-}" ] && outputs+=(--sarif "$COALPROF_ACTION_SARIF")

    # The gate: the verdict table and the ::error/::warning annotations in the log, the markdown
    # verdict appended to $GITHUB_STEP_SUMMARY, JUnit and SARIF written before the exit code.
    local code=0
    coalprof "${args[@]}" "${extra[@]}" "${outputs[@]}" --github || code=$?

    # The counts: the same checks again as JSON (no annotations, no summary, no files; check is a
    # pure function of its inputs, so both runs agree). Only when the gate itself ran.
    local failed='' warned='' passed='' unchecked=''
    if [ "$code" -eq 0 ] || [ "$code" -eq 1 ]; then
        local counts
        counts="$(coalprof "${args[@]}" "${extra[@]}" --format json --exit-zero 2>/dev/null | count_verdicts)" || counts=''
        read -r failed warned passed unchecked <<< "$counts" || true
    fi
    local verdict
    case "$code" in
    # Every check skipped (the inputs lack the counters): exit 0, but no pass.
    0) if [ "${warned:-0}" -gt 0 ]; then
        verdict=warn
    elif [ "${unchecked:-0}" -gt 0 ]; then
        verdict=nothing-checked
    else
        verdict=pass
    fi ;;
    1) verdict=fail ;;
    5) verdict=nothing-matched ;;
    *) verdict=error ;;
    esac
    output verdict "$verdict"
    output failed "${failed:-0}"
    output warned "${warned:-0}"
    output passed "${passed:-0}"
    output exit-code "$code"
    if [ -n "${COALPROF_ACTION_SARIF:-}" ] && [ -f "$COALPROF_ACTION_SARIF" ]; then
        output sarif "$COALPROF_ACTION_SARIF"
    fi
    say "verdict: $verdict (${failed:-0} failed, ${warned:-0} warned, ${passed:-0} passed; exit code $code)"
}

# `FAILED WARNED PASSED UNCHECKED` from `coalprof check --format json` on stdin (UNCHECKED: 1
# where every check was skipped, the JSON's `nothing_checked`; python3, else jq: a GitHub-hosted
# runner has both).
count_verdicts() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c '
import json, sys
doc = json.load(sys.stdin)
checks = doc.get("checks", [])
n = lambda v: sum(1 for c in checks if c.get("verdict") == v)
print(n("fail"), n("warn"), n("pass"), 1 if doc.get("nothing_checked") else 0)
'
    else
        jq -r '[.checks[].verdict] as $v | "\([$v[] | select(. == "fail")] | length) \([$v[] | select(. == "warn")] | length) \([$v[] | select(. == "pass")] | length) \(if .nothing_checked then 1 else 0 end)"'
    fi
}

verdict() {
    local code="${COALPROF_ACTION_EXIT_CODE:-}"
    if [ -z "$code" ]; then
        echo "::error title=coalprof::the check step set no exit code"
        exit 70
    fi
    if [ "$code" -eq 1 ] && [ "${COALPROF_ACTION_EXIT_ZERO:-false}" = true ]; then
        say "the gate failed; exit-zero is set, so this step passes"
        exit 0
    fi
    case "$code" in
    0) exit 0 ;;
    1) echo "::error title=coalprof::the gate failed (see the annotations and the job summary)" ;;
    5) echo "::error title=coalprof::nothing was checked: no rule matched a row (exit code 5)" ;;
    *) echo "::error title=coalprof::coalprof check could not run (exit code $code; its error is in the Check step's log)" ;;
    esac
    exit "$code"
}

case "${1:-}" in
install | check | verdict) "$1" ;;
*)
    say "usage: action.sh install|check|verdict"
    exit 2
    ;;
esac
