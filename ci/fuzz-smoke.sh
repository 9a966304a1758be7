#!/usr/bin/env bash
# Fuzz smoke run. Runs the `mcp_chaos::fuzz` tests and the server-author example (a doc test)
# on stable, builds every cargo-fuzz target with nightly (one build shared by all targets), and
# runs each for FUZZ_SECONDS on its seed corpus with its dictionary (fuzz/sse.dict for event
# streams, none for schema_generator, fuzz/mcp.dict for the rest). Fails, printing the
# reproducer path, when a target crashes.
#
# mcp_request_flawed fuzzes the fixture with the panic-in-handler flaw planted: it must crash
# with that panic within FUZZ_FLAWED_SECONDS, and the run fails if it does not.
#
# Usage: ci/fuzz-smoke.sh [TARGET...]     (default: every target)
#   FUZZ_SECONDS          seconds per target (default 60)
#   FUZZ_FLAWED_SECONDS   time allowed to the flawed target to crash (default 300)
#   FUZZ_TOOLCHAIN        toolchain for cargo-fuzz (default nightly)
#   FUZZ_SANITIZER        address (default) or none
#   FUZZ_WORK             scratch dir: grown corpora, artifacts, logs (default target/fuzz-smoke)
#
# cargo-fuzz is installed with `cargo install cargo-fuzz --locked` when missing. The committed
# seed corpora under fuzz/corpus/ are read, never written: new inputs go to FUZZ_WORK. The
# stable tests honour CARGO_TARGET_DIR; the fuzz builds always go to fuzz/target (the fuzz
# crate is its own workspace, built with other flags).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
SECS="${FUZZ_SECONDS:-60}"
FLAWED_SECS="${FUZZ_FLAWED_SECONDS:-300}"
TOOLCHAIN="${FUZZ_TOOLCHAIN:-nightly}"
SANITIZER="${FUZZ_SANITIZER:-address}"
WORK="${FUZZ_WORK:-$REPO/target/fuzz-smoke}"
FLAWED=mcp_request_flawed
PLANTED="unsupported argument nesting"

log() { printf '[fuzz-smoke] %s\n' "$*" >&2; }
fuzz() { env -u CARGO_TARGET_DIR cargo "+$TOOLCHAIN" fuzz "$@"; }

if [[ $# -gt 0 ]]; then
  TARGETS=("$@")
else
  TARGETS=(request_parser sse_parser schema_generator mcp_request fixture_bytes "$FLAWED")
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  log "installing cargo-fuzz (cargo install cargo-fuzz --locked)"
  cargo install cargo-fuzz --locked
fi

log "cargo test -p mcp-chaos --features arbitrary (mcp_chaos::fuzz and its doc example)"
cargo test --quiet -p mcp-chaos --features arbitrary --lib fuzz::
cargo test --quiet -p mcp-chaos --features arbitrary --doc fuzz

log "cargo +$TOOLCHAIN fuzz build -s $SANITIZER"
fuzz build -s "$SANITIZER"

mkdir -p "$WORK"
failures=0

# The committed seeds of a target: fixture_bytes reads frames too, so it shares
# request_parser's; sse_parser and schema_generator have their own (mcp_request's family has
# none: the empty input is already a request).
seeds_of() {
  case "$1" in
    fixture_bytes) echo fuzz/corpus/request_parser ;;
    *) echo "fuzz/corpus/$1" ;;
  esac
}

# The dictionary of a target: SSE fields for event streams, none for schema_generator (its
# bytes are choices among keywords, not text), JSON-RPC/MCP tokens for the rest (frames, and
# the strings inside Arbitrary MCP messages).
dict_of() {
  case "$1" in
    sse_parser) echo fuzz/sse.dict ;;
    schema_generator) ;;
    *) echo fuzz/mcp.dict ;;
  esac
}

# run TARGET SECONDS: fuzzes TARGET, logging to $WORK/TARGET.log; returns libFuzzer's status.
run() {
  local target="$1" secs="$2"
  local corpus="$WORK/corpus/$target" artifacts="$WORK/artifacts/$target/"
  local seeds=() dict=() dir
  mkdir -p "$corpus" "$artifacts"
  dir=$(seeds_of "$target")
  [[ -d "$dir" ]] && seeds=("$dir")
  dir=$(dict_of "$target")
  [[ -n "$dir" ]] && dict=("-dict=$dir")
  fuzz run -s "$SANITIZER" "$target" "$corpus" "${seeds[@]}" -- \
    -max_total_time="$secs" -timeout=10 "${dict[@]}" \
    -artifact_prefix="$artifacts" -print_final_stats=1 >"$WORK/$target.log" 2>&1
}

# exec/s and coverage from a libFuzzer log.
stats() {
  local log="$1"
  local rate cov
  rate=$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  echo "${rate:-?} exec/s, ${cov:-cov: ?}"
}

for target in "${TARGETS[@]}"; do
  rm -f "$WORK/artifacts/$target/"crash-* "$WORK/artifacts/$target/"timeout-* 2>/dev/null || true
  if [[ "$target" == "$FLAWED" ]]; then
    log "$target: must find the planted panic within $FLAWED_SECS s"
    start=$(date +%s%N)
    rc=0
    run "$target" "$FLAWED_SECS" || rc=$?
    elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    crash=$(ls "$WORK/artifacts/$target/"crash-* 2>/dev/null | head -1 || true)
    if [[ $rc -ne 0 && -n "$crash" ]] && grep -q "$PLANTED" "$WORK/$target.log"; then
      log "$target: found the planted panic after ${elapsed_ms} ms (including start-up): $crash"
    else
      log "$target: did NOT find the planted panic in $FLAWED_SECS s (exit $rc); log: $WORK/$target.log"
      failures=$((failures + 1))
    fi
    continue
  fi
  log "$target: fuzzing for $SECS s"
  rc=0
  run "$target" "$SECS" || rc=$?
  if [[ $rc -eq 0 ]]; then
    log "$target: clean ($(stats "$WORK/$target.log"))"
  else
    failures=$((failures + 1))
    found=$(ls -d "$WORK/artifacts/$target/"* 2>/dev/null || true)
    log "$target: FAILED (exit $rc); log: $WORK/$target.log"
    grep -m1 -A1 -E 'panicked at|==[0-9]+==ERROR' "$WORK/$target.log" | sed 's/^/    /' >&2 || true
    for f in $found; do
      log "  reproducer: $f   (cargo +$TOOLCHAIN fuzz run $target $f)"
    done
  fi
done

if [[ $failures -gt 0 ]]; then
  log "$failures target(s) failed"
  exit 1
fi
log "all targets passed"
