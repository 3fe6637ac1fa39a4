import type { Command } from 'commander';
import type { KnowledgeOptions } from '../commands/knowledge.js';
import type { CommandContext, Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, positive, repeated } from './options.js';

const knowledgeGraphCommand = lazy(() => import('../commands/knowledge.js'), 'knowledgeGraphCommand');
const knowledgeIndexCommand = lazy(() => import('../commands/knowledge.js'), 'knowledgeIndexCommand');
const knowledgeInitCommand = lazy(() => import('../commands/knowledge.js'), 'knowledgeInitCommand');
const knowledgeLintCommand = lazy(() => import('../commands/knowledge.js'), 'knowledgeLintCommand');
const knowledgeRunCommand = lazy(() => import('../commands/knowledge.js'), 'knowledgeRunCommand');
const knowledgeSearchCommand = lazy(() => import('../commands/knowledge.js'), 'knowledgeSearchCommand');
const knowledgeShowCommand = lazy(() => import('../commands/knowledge.js'), 'knowledgeShowCommand');
const knowledgeVerifyCommand = lazy(() => import('../commands/knowledge.js'), 'knowledgeVerifyCommand');

/** The bundles a subcommand works on: those named as arguments, then those named with --bundle. */
function knowledgeOptions(cmd: Command, bundles?: string[]): KnowledgeOptions {
  const raw = cmd.optsWithGlobals<Record<string, unknown>>();
  const named = Array.isArray(raw.bundle) ? (raw.bundle as string[]) : [];
  return { ...optionsOf(cmd), bundles: [...(bundles ?? []), ...named] };
}

const withBundles = (cmd: Command) =>
  cmd.option(
    '-b, --bundle <folder>',
    'a bundle folder, `path` or `name=path`; repeat for more (default: tack.json knowledge.bundles)',
    repeated,
    [],
  );

const BUNDLE_ARGUMENTS = 'bundle folders (default: tack.json knowledge.bundles)';
const CONCEPT_ID = 'concept id, <bundle>/<id> or okf://<bundle>/<id>';

/** lint and index: the checks of whole bundles. */
function registerBundleChecks(knowledge: Command, { setExitCode }: CommandContext): void {
  knowledge
    .command('lint')
    .description('check bundles against OKF v0.2: conformance errors (exit 1) and warnings')
    .argument('[bundle...]', BUNDLE_ARGUMENTS)
    .action(async (bundles: string[], _opts: unknown, cmd: Command) =>
      setExitCode(await knowledgeLintCommand(knowledgeOptions(cmd, bundles))),
    );
  knowledge
    .command('index')
    .description(
      'show the index.md changes each bundle needs as a diff (exit 1 when any); --write writes them, keeping hand-written lines',
    )
    .argument('[bundle...]', BUNDLE_ARGUMENTS)
    .option('--write', 'write the changes (only the generated block of each index.md changes)')
    .action(async (bundles: string[], opts: { write?: boolean }, cmd: Command) =>
      setExitCode(
        await knowledgeIndexCommand({ ...knowledgeOptions(cmd, bundles), write: opts.write === true }),
      ),
    );
}

/** show, search and verify: the subcommands over one concept or a query. */
function registerConcepts(knowledge: Command, { setExitCode }: CommandContext): void {
  withBundles(
    knowledge
      .command('show')
      .description('a concept as read_concept gives it to the model: trust, status, staleness, sources, body')
      .argument('<id>', CONCEPT_ID),
  ).action(async (id: string, _opts: unknown, cmd: Command) =>
    setExitCode(await knowledgeShowCommand(id, knowledgeOptions(cmd))),
  );
  withBundles(
    knowledge
      .command('search')
      .description('BM25 search over titles, descriptions, tags and bodies, as search_knowledge does')
      .argument('<query>', 'what to look for')
      .option('-k <n>', 'how many hits (default 5)')
      .option('--type <type>', 'only concepts of this type')
      .option('--min-trust <tier>', 'unverified | machine-confirmed | human-reviewed'),
  ).action(async (query: string, opts: { k?: string; type?: string; minTrust?: string }, cmd: Command) =>
    setExitCode(
      await knowledgeSearchCommand(query, {
        ...knowledgeOptions(cmd),
        ...(opts.k ? { k: positive('k', opts.k) } : {}),
        ...(opts.type ? { type: opts.type } : {}),
        ...(opts.minTrust ? { minTrust: opts.minTrust } : {}),
      }),
    ),
  );
  withBundles(
    knowledge
      .command('verify')
      .description(
        'record a verification (human:<id> makes a concept human-reviewed); the rest of the file is kept',
      )
      .argument('<id>', CONCEPT_ID)
      .requiredOption('--by <actor>', 'human:<id>, process:<id> or <tool>/<version>')
      .option('--at <datetime>', 'when (default now, ISO 8601 with offset)'),
  ).action(async (id: string, opts: { by: string; at?: string }, cmd: Command) =>
    setExitCode(await knowledgeVerifyCommand(id, { ...knowledgeOptions(cmd), ...opts })),
  );
}

interface RunOptions {
  param?: string[];
  sqlite?: string;
  postgres?: string;
}

/** graph, init and run: a bundle's link graph, a new bundle from docs, a computation's value. */
function registerBundleWork(knowledge: Command, { setExitCode }: CommandContext): void {
  knowledge
    .command('graph')
    .description('the link graph of each bundle as Mermaid or DOT text (--json: nodes and edges)')
    .argument('[bundle...]', BUNDLE_ARGUMENTS)
    .option('--format <format>', 'mermaid or dot (default mermaid)')
    .option('--files', 'also edges to files that are not concepts (scripts, indexes)')
    .action(async (bundles: string[], opts: { format?: string; files?: boolean }, cmd: Command) =>
      setExitCode(await knowledgeGraphCommand({ ...knowledgeOptions(cmd, bundles), ...opts })),
    );
  knowledge
    .command('init')
    .description(
      'make a draft bundle from a folder of Markdown docs: one concept per document, plus index.md',
    )
    .requiredOption('--from <folder>', 'the docs folder (.md, .mdx)')
    .requiredOption('--out <folder>', 'the bundle folder to write (absent or empty)')
    .option('--force', 'write into a non-empty folder (replaces files of the same name, deletes nothing)')
    .action(async (opts: { from: string; out: string; force?: boolean }, cmd: Command) =>
      setExitCode(await knowledgeInitCommand({ ...optionsOf(cmd), ...opts })),
    );
  withBundles(
    knowledge
      .command('run')
      .description(
        'run an Attested Computation with parameter values, attest it, print the value (exit 1 if refused)',
      )
      .argument('<id>', CONCEPT_ID)
      .option('-p, --param <name=value>', 'a value for a declared parameter; repeat for more', repeated, [])
      .option('--sqlite <file>', 'the database for runtime: sqlite (default: knowledge.runtimes.sqlite)')
      .option(
        '--postgres <url>',
        'the server for runtime: postgres (default: $TACK_POSTGRES_URL, then tack.json)',
      ),
  ).action(async (id: string, opts: RunOptions, cmd: Command) =>
    setExitCode(await knowledgeRunCommand(id, { ...knowledgeOptions(cmd), ...opts })),
  );
}

/** `tack knowledge lint|index|show|search|verify|graph|init|run`: Open Knowledge Format bundles. */
export const registerKnowledge: Register = (program, context) => {
  const knowledge = program
    .command('knowledge')
    .description('Open Knowledge Format bundles: lint, index, show, search, graph, verify, run, init');
  registerBundleChecks(knowledge, context);
  registerConcepts(knowledge, context);
  registerBundleWork(knowledge, context);
};
