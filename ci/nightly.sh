#!/usr/bin/env bash
# The nightly scenario suite: every scenario under scenarios/ (the fixture, correct and with
# each flaw planted, and the real servers from npm and PyPI), judged against
# scenarios/baseline.toml, with every report written into one folder:
#
#   $MCP_CHAOS_OUT/report.json    the suite report (mcp-chaos scenario --report-json)
#   $MCP_CHAOS_OUT/junit.xml      JUnit: a test suite per scenario, a test case per step
#   $MCP_CHAOS_OUT/results.sarif  SARIF 2.1.0, new findings only (for GitHub code scanning)
#   $MCP_CHAOS_OUT/summary.md     Markdown summary (appended to $GITHUB_STEP_SUMMARY when set)
#   $MCP_CHAOS_OUT/replays/       replay files of generated findings, per scenario
#
# Exit code: mcp-chaos's own: 0 every scenario passed (known and baselined findings do not
# fail), 1 a new finding or a failed expectation, 2 a scenario's server did not start, 3 a
# malformed scenario or baseline file, 4 a report could not be written.
#
# Usage: ci/nightly.sh [mcp-chaos scenario options...]     e.g. --shard 1/2
#   MCP_CHAOS_OUT       the report folder (default <repo>/target/nightly)
#   MCP_CHAOS_JOBS      scenarios run at once (default 2)
#   MCP_CHAOS_REAL_DIR  where the real servers are installed (default <repo>/target/real-servers;
#                       ci/install-real-servers.sh installs them there, from npm and PyPI)
#   MCP_CHAOS_BIN       the mcp-chaos binary (default: built with `cargo build`, the profile
#                       `cargo test` already built)
#
# Everything stays on loopback: the scenarios start their servers cut off from the network
# (no_egress) and point them at fake upstreams on 127.0.0.1.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${MCP_CHAOS_OUT:-$REPO/target/nightly}"
JOBS="${MCP_CHAOS_JOBS:-2}"
export MCP_CHAOS_REAL_DIR="${MCP_CHAOS_REAL_DIR:-$REPO/target/real-servers}"

log() { printf '[nightly] %s\n' "$*" >&2; }

log "installing the real servers into $MCP_CHAOS_REAL_DIR"
bash "$REPO/ci/install-real-servers.sh" >/dev/null

if [[ -z "${MCP_CHAOS_BIN:-}" ]]; then
  log "building mcp-chaos"
  (cd "$REPO" && cargo build --quiet -p mcp-chaos-cli --bin mcp-chaos)
  MCP_CHAOS_BIN="${CARGO_TARGET_DIR:-$REPO/target}/debug/mcp-chaos"
fi

rm -rf "$OUT"
mkdir -p "$OUT"
rc=0
(cd "$REPO" && "$MCP_CHAOS_BIN" scenario scenarios/ \
  --jobs "$JOBS" \
  --baseline scenarios/baseline.toml \
  --report-json "$OUT/report.json" \
  --junit "$OUT/junit.xml" \
  --sarif "$OUT/results.sarif" --sarif-new-only \
  --markdown "$OUT/summary.md" \
  --replays "$OUT/replays" \
  "$@") || rc=$?

if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$OUT/summary.md" ]]; then
  cat "$OUT/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
case $rc in
  0) log "every scenario passed; reports in $OUT" ;;
  1) log "FAILED: a new finding or a failed expectation (see $OUT/summary.md)" ;;
  2) log "FAILED: a scenario's server could not be started (see $OUT/summary.md)" ;;
  *) log "FAILED: mcp-chaos exited $rc" ;;
esac
exit $rc
