#!/usr/bin/env bash
# Runs mcp-chaos against real MCP servers installed from npm and PyPI (server-everything over
# stdio and Streamable HTTP, mcp-server-time, mcp-server-fetch under upstream faults, and a
# small Python SDK server over HTTP), and fails if mcp-chaos
# errors (exit code other than 0 or 1), takes longer than LIMIT_S (150 s) on a server (a hang,
# not a slow server: a default run against server-everything takes 35-50 s on 2 cores, as
# each tool's generated phase ends within its time budget plus one timeout), or makes fewer
# exchanges than twice the server's tool count.
#
# Usage: ci/real-servers.sh
#   MCP_CHAOS_REAL_LIMIT_S  seconds allowed per server (default 150)
#   MCP_CHAOS_REAL_DIR  where the servers are installed (default <repo>/target/real-servers)
#   MCP_CHAOS_BIN       the mcp-chaos binary (default: built with `cargo build -p mcp-chaos-cli`)
#   MCP_CHAOS_REPORTS   where the JSON reports go (default <repo>/target/real-servers/reports)
#
# Everything stays on loopback: servers run with --clean-env --no-egress, and
# server-everything's URL-fetching tool is confined with GZIP_ALLOWED_DOMAINS=127.0.0.1.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${MCP_CHAOS_REAL_DIR:-$REPO/target/real-servers}"
REPORTS="${MCP_CHAOS_REPORTS:-$DIR/reports}"
export MCP_CHAOS_REAL_DIR="$DIR"

log() { printf '[real-servers] %s\n' "$*" >&2; }

bash "$REPO/ci/install-real-servers.sh" >/dev/null

if [[ -z "${MCP_CHAOS_BIN:-}" ]]; then
  (cd "$REPO" && cargo build --quiet -p mcp-chaos-cli --bin mcp-chaos)
  MCP_CHAOS_BIN="$REPO/target/debug/mcp-chaos"
fi
mkdir -p "$REPORTS"

LIMIT_S="${MCP_CHAOS_REAL_LIMIT_S:-150}"
failures=0
# check NAME TRANSPORT-ARGS... -- [mcp-chaos args...]
check() {
  local name="$1"; shift
  local report="$REPORTS/$name.json" rc=0 start end
  log "$name: mcp-chaos run $*"
  start=$(date +%s)
  timeout $((LIMIT_S + 30)) "$MCP_CHAOS_BIN" run --clean-env --no-egress --report-json "$report" "$@" || rc=$?
  end=$(date +%s)
  if (( rc > 1 )); then
    log "FAIL $name: mcp-chaos exited $rc"; failures=$((failures + 1)); return
  fi
  if (( end - start > LIMIT_S )); then
    log "FAIL $name: took $((end - start)) s (limit $LIMIT_S s)"; failures=$((failures + 1)); return
  fi
  if ! python3 - "$report" "$name" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
s = report["summary"]
need = s["tools"] * 2
print(f"[real-servers] {sys.argv[2]}: {s['tools']} tools, {s['exchanges']} exchanges, "
      f"{s['tool_calls']} tool calls, {s['violations']} violations, {s['warnings']} warnings, "
      f"{s['duration_ms']} ms", file=sys.stderr)
for f in report["findings"]:
    print(f"[real-servers]   {f['severity']:9} {f['code']} {f['invariant']}: {f['message']}", file=sys.stderr)
sys.exit(0 if s["exchanges"] >= need and s["tools"] > 0 else 1)
PY
  then
    log "FAIL $name: fewer exchanges than tools x 2, or no tools"; failures=$((failures + 1))
  fi
}

NPM="$DIR/npm/node_modules/@modelcontextprotocol"
VENV="$DIR/venv"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

check everything --stdio "node $NPM/server-everything/dist/index.js stdio" \
  --env GZIP_ALLOWED_DOMAINS=127.0.0.1 --cases 16 --tool-budget-ms 6000
check time --stdio "$VENV/bin/mcp-server-time --local-timezone=Etc/UTC"
# mcp-server-fetch refuses loopback and private addresses unless --allow-private-ips;
# --ignore-robots-txt skips the extra GET /robots.txt before each fetch. --url-args points its
# `url` argument at the fake upstream, which then serves every fault profile.
check fetch --stdio "$VENV/bin/mcp-server-fetch --allow-private-ips --ignore-robots-txt" --url-args

# server-everything over Streamable HTTP. It binds every interface and has no host option; the
# preload ci/loopback-only.cjs makes every Node server listen on 127.0.0.1 only.
port=$(free_port)
check everything-http --http "http://127.0.0.1:$port/mcp" \
  --start "node $NPM/server-everything/dist/index.js streamableHttp" \
  --env "PORT=$port" --env GZIP_ALLOWED_DOMAINS=127.0.0.1 \
  --env "NODE_OPTIONS=--require $REPO/ci/loopback-only.cjs" --cases 16 --tool-budget-ms 6000

# A small server written with the official Python SDK (mcp 2.x) over Streamable HTTP.
port=$(free_port)
check python-http --http "http://127.0.0.1:$port/mcp" \
  --start "$VENV/bin/python $REPO/ci/servers/py_http_server.py" --env "PORT=$port"

if (( failures > 0 )); then
  log "$failures server check(s) failed"
  exit 1
fi
log "all real-server checks passed; reports in $REPORTS"
