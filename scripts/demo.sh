#!/bin/sh
# npm run demo: tack against the servers in examples/ (shipped in this repository: no key, nothing to start).
set -e
cd "$(dirname "$0")/.."
tack() { node bin/tack.js --config examples/tack.json "$@"; }
step() { printf '\n\033[1m$ tack %s\033[0m\n' "$*"; }

step servers;  tack servers
step tools;    tack tools
step call mcp__weather__get_forecast '{"city": "Lisbon"}'
tack call mcp__weather__get_forecast '{"city": "Lisbon"}'
step call mcp__docs__search_docs '{"query": "era cache warm start"}'
tack call mcp__docs__search_docs '{"query": "era cache warm start"}'
step call mcp__docs__read_doc '{"slug": "architecture", "max_words": 60}'
tack call mcp__docs__read_doc '{"slug": "architecture", "max_words": 60}'
step 'read doc://benchmarks | head -12'
tack read doc://benchmarks | head -12
step 'skills list   # tier 1 every turn vs every body up front'
tack skills list
step 'skills show release-notes | head -8   # tier 2: what activate_skill returns'
tack skills show release-notes | head -8
step 'skills run --yes release-notes collect.sh v1.2   # tier 3: output, never source'
tack skills run --yes release-notes collect.sh v1.2
