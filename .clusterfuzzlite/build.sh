#!/bin/bash -eu
# Builds the mcp-chaos fuzz targets for ClusterFuzzLite (AddressSanitizer, libFuzzer) and
# puts each in $OUT with its seed corpus and the MCP dictionary.
#
# mcp_request_flawed is left out on purpose: it fuzzes the fixture with the panic-in-handler
# flaw planted and is meant to crash (ci/fuzz-smoke.sh checks that it does).
cd "$SRC/mcp-chaos"
cargo fuzz build -O --debug-assertions
release=fuzz/target/x86_64-unknown-linux-gnu/release
for target in request_parser mcp_request fixture_bytes; do
  cp "$release/$target" "$OUT/"
  cp fuzz/mcp.dict "$OUT/$target.dict"
done
# fixture_bytes reads frames too: it shares request_parser's seeds. mcp_request needs none.
zip -q -j "$OUT/request_parser_seed_corpus.zip" fuzz/corpus/request_parser/seed-*
cp "$OUT/request_parser_seed_corpus.zip" "$OUT/fixture_bytes_seed_corpus.zip"
