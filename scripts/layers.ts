/**
 * tack's layers: which folder of src/ may import which (test/layering.test.ts holds every import to it), and the
 * picture of them in docs/architecture.md, drawn from the same table. `npm run docs:layers` redraws the picture
 * after a change to the table; the layering test fails while the committed one differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every layer below the harness and the servers: what those two (and all above them) may build on. */
export const FEATURES = [
  'errors',
  'version',
  'util',
  'telemetry',
  'config',
  'store',
  'mcp',
  'tokens',
  'tools',
  'skills',
  'knowledge',
  'search',
  'security',
  'sandbox',
  'codemode',
] as const;

/**
 * The architecture, held by a test rather than by prose: which layer of src/ may import which. A lower layer
 * never reaches up (config and store know nothing of MCP connections; nothing but the CLI knows the CLI).
 */
export const ALLOWED: Record<string, readonly string[]> = {
  errors: [],
  version: [],
  util: [],
  // OpenTelemetry: the SDK's start and the span helper every layer above traces with; the API itself is loaded only
  // once a tracer provider is registered.
  telemetry: ['version'],
  // Config checks permission rules and capability names with the security layer's parsers, and applies project
  // trust (config/apply-trust.ts) with its file checks.
  config: ['errors', 'util', 'security'],
  store: ['errors', 'util'],
  // The sandbox turns a resolved policy (config) into bubblewrap's command line, its proxy and explanations; it
  // knows nothing of MCP: mcp and skills hand it a command to wrap.
  sandbox: ['errors', 'util', 'config'],
  // Stdio servers are spawned inside their sandbox; every request is a client span.
  mcp: ['errors', 'version', 'util', 'telemetry', 'config', 'store', 'sandbox'],
  // Token counts: the tokenizer, and the digests a cache of counts is keyed by.
  tokens: ['mcp', 'util'],
  tools: ['errors'],
  // Skill scripts run inside the skill-script sandbox; skills are checked by the poisoning scan before they load.
  skills: ['errors', 'util', 'config', 'mcp', 'tools', 'sandbox', 'security'],
  // Tool search ranks definitions it is handed; it knows nothing of hosts or tokenizers.
  search: ['errors', 'util'],
  // The scanner judges text it is handed; pins and project trust keep their records in the store. Security knows
  // nothing of connections or config (config imports its rule parser, not the other way round).
  security: ['errors', 'util', 'store'],
  // Code mode's runtime and typed API: scripts and declarations it is handed; the agent wires them to the pipeline.
  codemode: ['errors', 'util'],
  // Knowledge reads bundles and queries databases; it needs no MCP connection.
  knowledge: ['errors', 'util', 'tools'],
  servers: FEATURES,
  // The harness: everything a session needs, nothing of serving or the CLI.
  agent: FEATURES,
  // The console (tack console) is a front end like the CLI: a thin HTTP layer over the library, which needs the
  // harness's approval gate, tool mapping and transcript reader; nothing below it imports it.
  console: [...FEATURES, 'agent'],
  // The public API: the root entry (index.ts) and the subpath entries (entries/) re-export the layers below.
  index: [...FEATURES, 'agent', 'servers'],
  entries: [...FEATURES, 'agent', 'servers', 'console', 'tui'],
  // The full-screen chat: a client of the session's API and events; only the CLI loads it (lazily).
  tui: [...FEATURES, 'agent'],
  // The CLI loads the terminal interface lazily through its public entry (tack/tui).
  cli: [...FEATURES, 'agent', 'servers', 'console', 'tui', 'entries'],
};

/** The public entries: they re-export the layers below them. */
const FACADES = ['index', 'entries'];

/** The markers around the generated picture in docs/architecture.md. */
export const PICTURE_BEGIN = '<!-- layers: drawn from scripts/layers.ts by `npm run docs:layers` -->';
export const PICTURE_END = '<!-- /layers -->';

/**
 * The layers from the top down: each on the row above everything it may import, with the layers it imports
 * directly (what it may reach only through another of them is left out, so each line says what is new).
 */
export function layerPicture(allowed: Readonly<Record<string, readonly string[]>> = ALLOWED): string {
  const level = new Map<string, number>();
  const levelOf = (layer: string): number => {
    const known = level.get(layer);
    if (known !== undefined) return known;
    const below = (allowed[layer] ?? []).map(levelOf);
    const value = below.length === 0 ? 0 : Math.max(...below) + 1;
    level.set(layer, value);
    return value;
  };
  const reach = new Map<string, Set<string>>();
  const reachOf = (layer: string): Set<string> => {
    let set = reach.get(layer);
    if (!set) {
      set = new Set<string>();
      for (const dep of allowed[layer] ?? []) {
        set.add(dep);
        for (const further of reachOf(dep)) set.add(further);
      }
      reach.set(layer, set);
    }
    return set;
  };
  const name = (layer: string) =>
    ['errors', 'version', 'index'].includes(layer) ? `${layer}.ts` : `${layer}/`;
  const layers = Object.keys(allowed).sort((a, b) => levelOf(b) - levelOf(a) || a.localeCompare(b));
  const width = Math.max(...layers.map((layer) => name(layer).length));
  const lines = layers.map((layer) => {
    // The entries re-export layers, nothing is built on them: a layer reached through an entry is still drawn.
    const direct = (allowed[layer] ?? []).filter(
      (dep) =>
        !(allowed[layer] ?? []).some(
          (other) => other !== dep && !FACADES.includes(other) && reachOf(other).has(dep),
        ),
    );
    const imports = direct.length === 0 ? '(imports nothing)' : `-> ${direct.map(name).join(' ')}`;
    return `${String(levelOf(layer)).padStart(2)}  ${name(layer).padEnd(width)}  ${imports}`.trimEnd();
  });
  return ['```', ...lines, '```'].join('\n');
}

/** docs/architecture.md with the picture between its markers replaced by `picture`. */
export function withPicture(doc: string, picture: string): string {
  const begin = doc.indexOf(PICTURE_BEGIN);
  const end = doc.indexOf(PICTURE_END);
  if (begin < 0 || end < begin)
    throw new Error('docs/architecture.md: the layer picture markers are missing');
  return `${doc.slice(0, begin + PICTURE_BEGIN.length)}\n${picture}\n${doc.slice(end)}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'architecture.md');
  writeFileSync(file, withPicture(readFileSync(file, 'utf8'), layerPicture()));
}
