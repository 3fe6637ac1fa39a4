#!/bin/sh
# npm run demo: tack against the servers in examples/ (shipped in this repository: no key, nothing to start).
set -e
cd "$(dirname "$0")/.."
tack() { node bin/tack.js --config examples/tack.json "$@"; }
# Bold step lines only on a terminal and without NO_COLOR, so `npm run demo > file` gets plain text; FORCE_COLOR
# decides when set, read as Node reads it ('', 1, 2, 3 or true: on; anything else: off).
case "${FORCE_COLOR-unset}" in
  unset) if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=1; else bold=; fi ;;
  '' | 1 | 2 | 3 | true) bold=1 ;;
  *) bold= ;;
esac
if [ -n "$bold" ]; then
  step() { printf '\n\033[1m$ tack %s\033[0m\n' "$*"; }
else
  step() { printf '\n$ tack %s\n' "$*"; }
fi

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
step 'knowledge lint test/fixtures/okf/acme_retail | tail -1'
tack knowledge lint test/fixtures/okf/acme_retail | tail -1
step 'knowledge search -b test/fixtures/okf/acme_retail "gross margin" -k 2   # trust tier, status, staleness'
tack knowledge search -b test/fixtures/okf/acme_retail "gross margin" -k 2
step 'knowledge show -b test/fixtures/okf/shop computations/average-order-value | head -9   # a stale one'
tack knowledge show -b test/fixtures/okf/shop computations/average-order-value | head -9
db="$(mktemp -d)/shop.db"
node -e "const D=require('better-sqlite3');const d=new D(process.argv[1]);d.exec(require('fs').readFileSync('test/fixtures/okf/shop-data.sql','utf8'));d.close()" "$db"
step "knowledge run -b test/fixtures/okf/shop computations/average-order-value -p year=2026 --sqlite shop.db   # attested, stale"
tack knowledge run -b test/fixtures/okf/shop computations/average-order-value -p year=2026 --sqlite "$db"
rm -rf "$(dirname "$db")"
step 'context   # what the next turn would send, part by part'
tack context
step 'tools search "find notes about a release"   # tool search over every example server, with scores'
tack tools search "find notes about a release"
step 'tools --security   # capability labels (and where each came from), pins, the trifecta legs'
tack tools --security
step 'scan, on examples/poisoned.json   # a deliberately poisoned server: findings, decoded hidden text, exit 1'
node bin/tack.js --config examples/poisoned.json scan || true
