#!/usr/bin/env bash
# The step script of the mcp-chaos GitHub Action (action.yml at the repository root). Each step
# of the action is one call: `run.sh key`, `run.sh install`, `run.sh run`, `run.sh finish`. The
# e2e test crates/mcp-chaos-tests/tests/e2e/action.rs runs these very steps, as action.yml writes them, against
# the fixture server, so the action cannot drift from what CI checks.
#
# It reads the action's inputs from the environment action.yml sets (INPUT_*), never from
# ${{ }} expressions pasted into a script, and writes step outputs to $GITHUB_OUTPUT and the
# Markdown summary to $GITHUB_STEP_SUMMARY when those are set (they are on GitHub).
#
#   key      prints key=mcp-chaos-<os>-<arch>-<hash of the action's Rust sources and Cargo.lock>,
#            the cache key of the built binary
#   install  bin=<path of mcp-chaos>: INPUT_MCP_CHAOS if given, else the cached build in
#            $MCP_CHAOS_ACTION_ROOT (default ~/.mcp-chaos-action), else `cargo install --locked`
#            of this source into it; its folder is added to $GITHUB_PATH
#   run      runs `mcp-chaos run` (INPUT_STDIO or INPUT_HTTP, INPUT_START, INPUT_HEADERS) or
#            `mcp-chaos scenario` (INPUT_SCENARIO) with INPUT_ARGS, writing every report into
#            INPUT_REPORT_DIR (report.json, junit.xml, results.sarif, summary.md, report.html);
#            outputs exit-code, report-dir, report-json, junit, sarif, markdown, html (absolute
#            paths, empty when not written). Exits with mcp-chaos's exit code, or 0 with
#            MCP_CHAOS_ACTION_DEFER_EXIT=true (the action fails in `finish`, after the uploads)
#   finish   exits with MCP_CHAOS_EXIT_CODE, except that exit 1 (findings) passes when
#            INPUT_FAIL_ON_FINDINGS is false
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

die() {
    echo "::error title=mcp-chaos action::$*" >&2
    exit 3
}

# Appends NAME=VALUE to $GITHUB_OUTPUT (when set) and prints it.
output() {
    echo "$1=$2"
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
        printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
    fi
}

cache_key() {
    local hash
    hash="$(
        cd "$root" &&
            find Cargo.toml Cargo.lock crates -type f -not -path "crates/mcp-chaos-tests/*" \
                \( -name '*.rs' -o -name 'Cargo.toml' -o -name 'Cargo.lock' -o -name '*.toml' -o -name '*.json' \) \
                -not -path '*/target/*' -print0 |
            LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-20
    )"
    output key "mcp-chaos-$(uname -s)-$(uname -m)-$hash"
}

install() {
    local bin
    if [ -n "${INPUT_MCP_CHAOS:-}" ]; then
        bin="$INPUT_MCP_CHAOS"
        "$bin" --version >/dev/null 2>&1 || die "the mcp-chaos input ($bin) does not run"
    else
        local dest="${MCP_CHAOS_ACTION_ROOT:-$HOME/.mcp-chaos-action}"
        bin="$dest/bin/mcp-chaos"
        if "$bin" --version >/dev/null 2>&1; then
            echo "mcp-chaos: cached build $bin ($("$bin" --version))"
        else
            command -v cargo >/dev/null 2>&1 ||
                die "building mcp-chaos needs a Rust toolchain (e.g. dtolnay/rust-toolchain@stable before this action), or give the mcp-chaos input"
            cargo install --locked --path "$root/crates/mcp-chaos-cli" --root "$dest"
        fi
    fi
    bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
    if [ -n "${GITHUB_PATH:-}" ]; then
        dirname "$bin" >>"$GITHUB_PATH"
    fi
    output bin "$bin"
}

run() {
    local bin="${MCP_CHAOS:-mcp-chaos}"
    local dir="${INPUT_REPORT_DIR:-mcp-chaos-report}"
    local stdio="${INPUT_STDIO:-}" http="${INPUT_HTTP:-}" start="${INPUT_START:-}"
    local headers="${INPUT_HEADERS:-}" scenario="${INPUT_SCENARIO:-}"
    local -a args=() extra=()

    if [ -n "$scenario" ]; then
        [ -z "$stdio$http$start$headers" ] ||
            die "give scenario, or a server (stdio or http), not both: a scenario file names its own server and headers"
        local -a paths=()
        read -r -d '' -a paths <<<"$scenario" || true
        args+=(scenario "${paths[@]}")
    elif [ -n "$stdio" ]; then
        [ -z "$http$start$headers" ] || die "stdio goes without http, start and headers"
        args+=(run --stdio "$stdio")
    elif [ -n "$http" ]; then
        args+=(run --http "$http")
        if [ -n "$start" ]; then args+=(--start "$start"); fi
        local line
        while IFS= read -r line; do
            line="${line#"${line%%[![:space:]]*}"}"
            line="${line%"${line##*[![:space:]]}"}"
            if [ -n "$line" ]; then args+=(--header "$line"); fi
        done <<<"$headers"
    else
        die "give one of the inputs stdio (a command), http (a URL) or scenario (files)"
    fi

    # Extra arguments, split like a shell does (quotes and backslashes), nothing expanded.
    if [ -n "${INPUT_ARGS:-}" ]; then
        local split
        split="$(mktemp)"
        printf '%s\n' "$INPUT_ARGS" | xargs -r printf '%s\0' >"$split" ||
            die "the args input does not split like a shell line (an unmatched quote?)"
        mapfile -d '' -t extra <"$split"
        rm -f "$split"
    fi

    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    rm -f "$dir"/report.json "$dir"/junit.xml "$dir"/results.sarif "$dir"/summary.md "$dir"/report.html
    args+=(
        --report-json "$dir/report.json"
        --junit "$dir/junit.xml"
        --sarif "$dir/results.sarif"
        --markdown "$dir/summary.md"
        --html "$dir/report.html"
    )

    echo "mcp-chaos: $bin ${args[0]} ... (reports in $dir)"
    local code=0
    "$bin" "${args[@]}" "${extra[@]}" || code=$?

    if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$dir/summary.md" ]; then
        cat "$dir/summary.md" >>"$GITHUB_STEP_SUMMARY"
    fi
    output exit-code "$code"
    output report-dir "$dir"
    local name file
    for name in report-json:report.json junit:junit.xml sarif:results.sarif markdown:summary.md html:report.html; do
        file="$dir/${name#*:}"
        if [ -f "$file" ]; then output "${name%%:*}" "$file"; else output "${name%%:*}" ""; fi
    done
    case "$code" in
        0) echo "mcp-chaos: passed" ;;
        1) echo "::error title=mcp-chaos::violations found (exit 1); see $dir/report.html or the job summary" ;;
        2) echo "::error title=mcp-chaos::the run did not complete (exit 2): the server could not be started or initialized" ;;
        *) echo "::error title=mcp-chaos::mcp-chaos failed (exit $code)" ;;
    esac
    if [ "${MCP_CHAOS_ACTION_DEFER_EXIT:-}" = true ]; then
        return 0
    fi
    return "$code"
}

finish() {
    local code="${MCP_CHAOS_EXIT_CODE:-}"
    case "$code" in
        '') die "no exit code: the run step did not finish" ;;
        0) exit 0 ;;
        1) if [ "${INPUT_FAIL_ON_FINDINGS:-true}" = false ]; then
               echo "mcp-chaos: violations found; fail-on-findings is false, so the step passes"
               exit 0
           fi ;;
    esac
    exit "$code"
}

case "${1:-}" in
    key) cache_key ;;
    install) install ;;
    run) run ;;
    finish) finish ;;
    *) die "usage: $0 key|install|run|finish" ;;
esac
