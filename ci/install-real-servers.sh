#!/usr/bin/env bash
# Install the real MCP servers that mcp-chaos is tested against in CI.
#
# Usage: ci/install-real-servers.sh            (installs into $MCP_CHAOS_REAL_DIR,
#                                               default <repo>/target/real-servers)
#
# Idempotent: re-running with everything already in place does no network access
# and only re-prints the start commands. Everything lives in a folder this script
# owns; after it has run, the servers start and run offline.
#
# Needs: node + npm (Node >= 20), a Python 3.11 interpreter ($MCP_CHAOS_PYTHON,
# default python3.11), and access to the npm registry and PyPI.
set -euo pipefail

# ---- pinned versions (what we tested; bump deliberately) -------------------
NPM_PKGS=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  # The protocol behaviour of both Node servers comes from the SDK: pin it too
  # (both servers depend on ^1.30.0, npm dedupes them onto this one).
  "@modelcontextprotocol/sdk@1.32.2"
)
PIP_PKGS=(
  "mcp-server-time==2026.10.19"
  "mcp-server-fetch==2026.10.24"
  "mcp-server-git==2026.10.19"
  "mcp==2.3.0"
)
# Everything else in the venv, pinned to what was tested (pip -c constraints).
PIP_CONSTRAINTS="annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 beautifulsoup4==4.15.0
certifi==2026.10.19.post1 cffi==2.1.1 charset-normalizer==3.5.3 click==8.5.1 cryptography==50.0.2
gitdb==4.0.12 GitPython==3.2.1 h11==0.16.0 html5lib==1.1 httpcore==1.0.9 httpcore2==2.16.2
httpx==0.28.1 httpx2==2.16.2 idna==3.20 jsonschema==4.26.0 jsonschema-specifications==2025.9.1
lxml==6.1.3 markdownify==1.2.3 mcp-types==2.3.0 opentelemetry-api==1.45.2 Protego==0.7.0
pycparser==3.12 pydantic==2.14.4 pydantic_core==2.50.5 PyJWT==2.15.1 python-multipart==0.0.34
readabilipy==0.3.0 referencing==0.37.0 regex==2026.11.19 requests==2.34.2 rpds-py==2026.9.1
six==1.17.0 smmap==5.0.3 socksio==1.0.0 soupsieve==4.1.3 sse-starlette==3.7.0 starlette==1.10.0
truststore==0.10.5 typing-inspection==0.4.5 typing_extensions==4.16.0 tzdata==2026.6
tzlocal==5.4.5 urllib3==2.8.0 uvicorn==0.54.0 webencodings==0.6.1"
# mcp-server-fetch -> readabilipy runs `npm install` inside its own package
# folder the first time a fetch returns HTML (network access at run time, and
# npm's output goes to the server's stdout). We do that install here, pinned to
# versions that run on Node 20 (jsdom >= 27.1 needs newer Node).
READABILIPY_JS_PKGS=(
  "@mozilla/readability@0.6.0"
  "jsdom@26.1.0"
  "minimist@1.2.8"
)

# ---- locations ---------------------------------------------------------------
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$SCRIPT_DIR/.." && pwd)"
DIR="${MCP_CHAOS_REAL_DIR:-$REPO/target/real-servers}"
PYTHON="${MCP_CHAOS_PYTHON:-python3.11}"

log() { printf '[install-real-servers] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v node >/dev/null || die "node not found"
command -v npm >/dev/null || die "npm not found"
command -v "$PYTHON" >/dev/null || die "$PYTHON not found (set MCP_CHAOS_PYTHON)"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' \
  || die "$PYTHON is not Python 3.11"

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"

# ---- npm servers ---------------------------------------------------------------
# installed version of an npm package under $1/node_modules, or empty
npm_installed_version() { # $1=prefix $2=name
  local pj="$1/node_modules/$2/package.json"
  [[ -f "$pj" ]] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj" || true
}
npm_all_present() { # $1=prefix, rest=name@version...
  local prefix="$1"; shift
  local spec name ver
  for spec in "$@"; do
    name="${spec%@*}"; ver="${spec##*@}"
    [[ "$(npm_installed_version "$prefix" "$name")" == "$ver" ]] || return 1
  done
}

NPM_DIR="$DIR/npm"
if npm_all_present "$NPM_DIR" "${NPM_PKGS[@]}"; then
  log "npm packages already installed in $NPM_DIR"
else
  log "installing npm packages into $NPM_DIR"
  mkdir -p "$NPM_DIR"
  npm install --prefix "$NPM_DIR" --save-exact --no-audit --no-fund \
    --loglevel=error "${NPM_PKGS[@]}" >&2
  npm_all_present "$NPM_DIR" "${NPM_PKGS[@]}" || die "npm install did not yield the pinned versions"
fi

# ---- Python servers ------------------------------------------------------------
VENV="$DIR/venv"
if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
  log "creating venv $VENV"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi
pip_all_present() {
  local spec name ver have
  for spec in "${PIP_PKGS[@]}"; do
    name="${spec%%==*}"; ver="${spec##*==}"
    have="$("$VENV/bin/python" -c 'import sys
from importlib.metadata import version, PackageNotFoundError
try: print(version(sys.argv[1]))
except PackageNotFoundError: print("")' "$name")"
    [[ "$have" == "$ver" ]] || return 1
  done
}
if pip_all_present; then
  log "python packages already installed in $VENV"
else
  log "installing python packages into $VENV"
  tr ' ' '\n' <<<"$PIP_CONSTRAINTS" | sed '/^$/d' >"$DIR/pip-constraints.txt"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    -c "$DIR/pip-constraints.txt" "${PIP_PKGS[@]}" >&2
  pip_all_present || die "pip install did not yield the pinned versions"
fi

# readabilipy's Node helper (see READABILIPY_JS_PKGS above)
RJS_DIR="$("$VENV/bin/python" -c 'import os, readabilipy; print(os.path.join(os.path.dirname(readabilipy.__file__), "javascript"))')"
if npm_all_present "$RJS_DIR" "${READABILIPY_JS_PKGS[@]}"; then
  log "readabilipy node helper already installed"
else
  log "installing readabilipy node helper into $RJS_DIR"
  npm install --prefix "$RJS_DIR" --save-exact --no-audit --no-fund \
    --loglevel=error "${READABILIPY_JS_PKGS[@]}" >&2
  npm_all_present "$RJS_DIR" "${READABILIPY_JS_PKGS[@]}" || die "readabilipy helper install failed"
fi

# ---- sanity: entry points exist ------------------------------------------------
EVERYTHING_JS="$NPM_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
FILESYSTEM_JS="$NPM_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
for f in "$EVERYTHING_JS" "$FILESYSTEM_JS" "$VENV/bin/mcp-server-time" \
         "$VENV/bin/mcp-server-fetch" "$VENV/bin/mcp-server-git"; do
  [[ -e "$f" ]] || die "missing entry point $f"
done

# ---- how to start them (stdout, one per line: NAME<TAB>COMMAND) ----------------
# Notes:
# - everything: its gzip-file-as-resource tool fetches URLs and defaults to a
#   public one; GZIP_ALLOWED_DOMAINS=127.0.0.1 keeps it on loopback. Its get-env
#   tool returns the whole environment, so start it with a scrubbed env.
# - everything-http: binds ALL interfaces (express app.listen(PORT), no host
#   option, default port 3001); endpoint http://127.0.0.1:<port>/mcp. Run it in
#   its own network namespace (`unshare -n`, then `ip link set lo up`) to keep
#   it off every non-loopback interface.
# - fetch: loopback/private targets are refused unless --allow-private-ips;
#   --ignore-robots-txt skips the extra GET /robots.txt made before each fetch.
cat <<EOF
# real MCP servers installed in $DIR (stdio transport unless noted)
everything	env -i PATH=\$PATH HOME=\$HOME GZIP_ALLOWED_DOMAINS=127.0.0.1 node $EVERYTHING_JS stdio
everything-http	env -i PATH=\$PATH HOME=\$HOME PORT=<port> GZIP_ALLOWED_DOMAINS=127.0.0.1 node $EVERYTHING_JS streamableHttp
filesystem	node $FILESYSTEM_JS <allowed-dir> [<allowed-dir>...]
time	$VENV/bin/mcp-server-time [--local-timezone=Etc/UTC]
fetch	$VENV/bin/mcp-server-fetch --allow-private-ips --ignore-robots-txt
git	$VENV/bin/mcp-server-git --repository <git-repo-dir>
EOF
