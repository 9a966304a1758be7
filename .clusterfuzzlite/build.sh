#!/bin/bash -eu
# Builds the mcp-chaos fuzz targets for ClusterFuzzLite (AddressSanitizer, libFuzzer) and
# puts each in $OUT with its seed corpus and dictionary.
#
# mcp_request_flawed is left out on purpose: it fuzzes the fixture with the panic-in-handler
# flaw planted and is meant to crash (ci/fuzz-smoke.sh checks that it does).
cd "$SRC/mcp-chaos"
cargo fuzz build -O --debug-assertions
release=fuzz/target/x86_64-unknown-linux-gnu/release
for target in request_parser sse_parser schema_generator mcp_request fixture_bytes; do
  cp "$release/$target" "$OUT/"
done
# Dictionaries: MCP/JSON-RPC tokens for frames and Arbitrary MCP messages, SSE fields for event
# streams; schema_generator's bytes are choices, not text, so it has none.
for target in request_parser mcp_request fixture_bytes; do
  cp fuzz/mcp.dict "$OUT/$target.dict"
done
cp fuzz/sse.dict "$OUT/sse_parser.dict"
# Seeds: fixture_bytes reads frames too, so it shares request_parser's. mcp_request and
# schema_generator need none (the empty input is already a request, a schema).
for target in request_parser sse_parser; do
  zip -q -j "$OUT/${target}_seed_corpus.zip" fuzz/corpus/$target/seed-*
done
cp "$OUT/request_parser_seed_corpus.zip" "$OUT/fixture_bytes_seed_corpus.zip"
