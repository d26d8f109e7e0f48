#!/usr/bin/env bash
#! The shell steps of the coalprof GitHub Action (action.yml): `install`, `home`, `setup`,
#! `sources`, `check`, `verdict`. Inputs arrive as COALPROF_ACTION_* variables (action.yml maps
#! each input to one), outputs go to $GITHUB_OUTPUT, the markdown verdict to
#! $GITHUB_STEP_SUMMARY (coalprof check --github appends it), a tool's folder to $GITHUB_PATH.
#! Inputs are data: split into arrays, never evaluated. tests/it/action.rs runs these steps with
#! a fake GitHub environment; outside Actions each of those files may be unset.
set -euo pipefail

say() { printf 'coalprof-action: %s\n' "$*" >&2; }

# `name=value` to $GITHUB_OUTPUT (values here are numbers, words and paths this script made).
output() {
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
        printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"
    fi
}

# A workflow command's message and property values (file=…) escaped as the runner reads them:
# `%`, CR and LF in both; `:` and `,` too in a property.
escape_data() {
    local s="$1"
    s="${s//'%'/%25}"
    s="${s//$'\r'/%0D}"
    s="${s//$'\n'/%0A}"
    printf '%s' "$s"
}
escape_property() {
    local s
    s="$(escape_data "$1")"
    s="${s//:/%3A}"
    s="${s//,/%2C}"
    printf '%s' "$s"
}

# Whether a multi-line input has an entry: a line with a word, not a `#` comment.
has_entries() {
    local line words
    while IFS= read -r line || [ -n "$line" ]; do
        words=()
        read -r -a words <<< "${line//$'\r'/}" || true
        if [ "${#words[@]}" -gt 0 ] && [[ "${words[0]}" != '#'* ]]; then
            return 0
        fi
    done <<< "$1"
    return 1
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

# Source mode: the tool home (an absolute path: actions/cache and COALPROF_HOME get the same
# one), the components to set up in it, and the cache key: coalprof's version (a new version may
# pin another simulator or patch), the OS and architecture (GPGPU-Sim is built there), the
# components. An older key of the same version is restored too: setup adds what is missing.
home() {
    local sources="${COALPROF_ACTION_SOURCES:-}" triton="${COALPROF_ACTION_TRITON:-}"
    local components=()
    has_entries "$sources" && components+=(sim)
    has_entries "$triton" && components+=(triton)
    if [ "${#components[@]}" -eq 0 ]; then
        return 0
    fi
    local path="${COALPROF_ACTION_TOOL_HOME:-}"
    # shellcheck disable=SC2088 # `~/`: the input's literal tilde, expanded here
    case "$path" in
    '') path="${HOME:?}/.local/share/coalprof" ;;
    '~') path="${HOME:?}" ;;
    '~/'*) path="${HOME:?}/${path#'~/'}" ;;
    /*) ;;
    *) path="${GITHUB_WORKSPACE:-$PWD}/$path" ;;
    esac
    # One line each in $GITHUB_OUTPUT: a line break in the path would write other outputs.
    if [[ "$path" == *[$'\n\r']* ]]; then
        echo "::error title=coalprof::tool-home must be one line"
        exit 2
    fi
    local version
    version="$(coalprof --version)"
    version="${version#coalprof }"
    local prefix="coalprof-home-$version-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-"
    local joined="${components[*]}"
    output path "$path"
    output components "$joined"
    output key "$prefix${joined// /+}"
    output restore-key "$prefix"
    say "tool home $path (${joined}), cache key $prefix${joined// /+}"
}

# `coalprof setup` of the components into the tool home: idempotent, so with the cache restored
# it only says what is already there.
setup() {
    local components=()
    read -r -a components <<< "${COALPROF_ACTION_COMPONENTS:-}" || true
    if [ "${#components[@]}" -eq 0 ]; then
        return 0
    fi
    system_packages "${components[@]}"
    logged '' setup "${components[@]}"
}

# A hosted runner's user is not root, so `coalprof setup` cannot apt-get what GPGPU-Sim needs
# from the system (never cached: it lives outside the tool home); its dry run names the command
# (`sudo apt-get install …`). Run that where sudo needs no password; package names only.
system_packages() {
    if [ "$(id -u)" = 0 ] || ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
        return 0
    fi
    local plan line word words=() packages=()
    plan="$(coalprof setup "$@" --dry-run 2>/dev/null)" || return 0
    # shellcheck disable=SC2016 # backquotes of setup's hint, matched literally
    local pattern='`sudo apt-get install -y --no-install-recommends ([^`]*)`'
    while IFS= read -r line; do
        if [[ "$line" =~ $pattern ]]; then
            read -r -a words <<< "${BASH_REMATCH[1]}" || true
            for word in "${words[@]}"; do
                [[ "$word" =~ ^[a-z0-9][a-z0-9+.:-]*$ ]] && packages+=("$word")
            done
        fi
    done <<< "$plan"
    if [ "${#packages[@]}" -gt 0 ]; then
        say "sudo apt-get install ${packages[*]} (what coalprof setup needs from the system)"
        sudo -n apt-get -qq update
        sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"
    fi
}

# Source mode: each `.cu` line profiled in the simulator, each Triton line by `coalprof triton`,
# into a run folder of its own under one folder (the `runs` output, which the check step
# gates). Every source is tried; one that fails is an ::error annotation with coalprof's
# `error:` line, and the step fails after the last.
sources() {
    local sources="${COALPROF_ACTION_SOURCES:-}" triton="${COALPROF_ACTION_TRITON:-}"
    if ! has_entries "$sources" && ! has_entries "$triton"; then
        return 0
    fi
    local base="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/coalprof-sources"
    rm -rf "$base"
    mkdir -p "$base"
    local n=0 code=0 failed=0 line words=() out
    while IFS= read -r line || [ -n "$line" ]; do
        words=()
        read -r -a words <<< "${line//$'\r'/}" || true
        if [ "${#words[@]}" -eq 0 ] || [[ "${words[0]}" == '#'* ]]; then
            continue
        fi
        # `FILE [nvcc flags] [-- program arguments]`.
        local flags=() args=() dashes=0 w file
        for w in "${words[@]:1}"; do
            if [ "$dashes" -eq 0 ] && [ "$w" = -- ]; then
                dashes=1
            elif [ "$dashes" -eq 0 ]; then
                flags+=("--nvcc-arg=$w")
            else
                args+=("$w")
            fi
        done
        local files=("${words[0]}") matches=()
        if [[ "${words[0]}" == *[*?[]* ]]; then
            mapfile -t matches < <(compgen -G "${words[0]}" | sort)
            [ "${#matches[@]}" -gt 0 ] && files=("${matches[@]}")
        fi
        for file in "${files[@]}"; do
            n=$((n + 1))
            printf -v out '%s/%03d' "$base" "$n"
            local unsafe=''
            for w in "$file" "${flags[@]}"; do
                nvcc_safe "$w" || unsafe="$w"
            done
            if [ -n "$unsafe" ]; then
                echo "::error file=$(escape_property "$file"),title=coalprof::$(escape_data "error: \`${unsafe#--nvcc-arg=}\` has a character nvcc would hand to a shell (\$ \` \\ \" ' ; & | < > ( ) * ? [): rename the file, or drop the flag")"
                code=3 failed=$((failed + 1))
                continue
            fi
            local cmd=(profile --backend sim "${flags[@]}" --out "$out" "$(not_a_flag "$file")")
            [ "${#args[@]}" -gt 0 ] && cmd+=(-- "${args[@]}")
            say "source $n: $file"
            logged "$file" "${cmd[@]}" || { code=$?; failed=$((failed + 1)); }
        done
    done <<< "$sources"
    while IFS= read -r line || [ -n "$line" ]; do
        words=()
        read -r -a words <<< "${line//$'\r'/}" || true
        if [ "${#words[@]}" -eq 0 ] || [[ "${words[0]}" == '#'* ]]; then
            continue
        fi
        # `FILE.py::KERNEL` and its launch, as `coalprof triton` takes them.
        n=$((n + 1))
        printf -v out '%s/%03d' "$base" "$n"
        say "source $n: ${words[0]}"
        logged "${words[0]%%::*}" triton "${words[@]:1}" --out "$out" -- "$(not_a_flag "${words[0]}")" ||
            { code=$?; failed=$((failed + 1)); }
    done <<< "$triton"
    output runs "$base"
    if [ "$failed" -gt 0 ]; then
        echo "::error title=coalprof::$failed of $n sources could not be profiled (see the annotations above)"
        exit "$code"
    fi
}

# nvcc (11.8, the simulator's) runs its phases through `sh -c` with the file names and its
# flags pasted in: a name with `$(…)` would run, a `;` would end the command. Such a word is
# refused, never quoted for a shell this script does not control.
nvcc_safe() {
    case "$1" in
    *[\$\`\\\"\'\;\&\|\<\>\(\)\*\?\[]*) return 1 ;;
    esac
    return 0
}

# A path as an argument that cannot be read as a flag.
not_a_flag() {
    case "$1" in
    -*) printf './%s' "$1" ;;
    *) printf '%s' "$1" ;;
    esac
}

# `coalprof ARGS…` with its output (and the simulated program's) in the log, between
# ::stop-commands:: and a fresh random token so that no line of it is read as a workflow
# command; stderr joins stdout so the two cannot interleave around the token. On failure its
# `error:` line (and `hint:`) becomes one ::error annotation, on FILE when one is given.
# Returns coalprof's exit code.
logged() {
    local file="$1" log token code=0
    shift
    log="$(mktemp)"
    token="coalprof-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    echo "::stop-commands::$token"
    coalprof "$@" 2>&1 | tee "$log" || code=$?
    echo "::$token::"
    if [ "$code" -ne 0 ]; then
        local message='' hint='' line
        while IFS= read -r line; do
            case "$line" in
            'error: '*) message="$line" hint='' ;;
            'hint: '*) [ -n "$message" ] && hint="$line" ;;
            esac
        done < "$log"
        [ -n "$message" ] || message="coalprof $1 exited with $code"
        [ -n "$hint" ] && message="$message"$'\n'"$hint"
        local where=''
        [ -n "$file" ] && where="file=$(escape_property "$file"),"
        echo "::error ${where}title=coalprof::$(escape_data "$message")"
    fi
    rm -f "$log"
    return "$code"
}

check() {
    local inputs=() words=() word
    # Whitespace-separated paths or globs (split without the shell's own globbing); a glob that
    # matches nothing stays as written, so coalprof names the missing input (exit 3) instead of
    # checking nothing.
    read -r -d '' -a words <<< "${COALPROF_ACTION_INPUTS:-}" || true
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
    # Source mode: the run folders the sources step made, in its order.
    local run
    if [ -n "${COALPROF_ACTION_RUNS:-}" ]; then
        for run in "$COALPROF_ACTION_RUNS"/*/; do
            [ -d "$run" ] && inputs+=("${run%/}")
        done
    fi
    output runs "${COALPROF_ACTION_RUNS:-}"
    if [ "${#inputs[@]}" -eq 0 ]; then
        echo "::error title=coalprof::the action needs inputs (runs or reports to check), sources or triton kernels"
        exit 2
    fi
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
install | home | setup | sources | check | verdict) "$1" ;;
*)
    say "usage: action.sh install|home|setup|sources|check|verdict"
    exit 2
    ;;
esac
