import { Command, CommanderError } from 'commander';
import { TackError } from '../errors.js';
import { VERSION } from '../version.js';
import type { AgentCliOptions } from './commands/agent.js';
import type { KnowledgeOptions } from './commands/knowledge.js';
import type { SkillsOptions } from './commands/skills.js';
import { commanderOutput, exitWhenStdoutCloses, reportError } from './output.js';

/**
 * A command's entry point, imported when the command runs: `tack --version` and `--help` load none of them, and
 * each command loads only its own part of the library (the AI SDK, the MCP packages and the tokenizer are most of
 * the start-up time of a process that needs none of them).
 */
function lazy<M, K extends keyof M>(load: () => Promise<M>, name: K) {
  type Fn = M[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
  return (async (...args: unknown[]) => {
    const fn = (await load())[name] as (...a: unknown[]) => Promise<unknown>;
    return fn(...args);
  }) as Fn;
}

const chatCommand = lazy(() => import('./commands/agent.js'), 'chatCommand');
const contextCommand = lazy(() => import('./commands/agent.js'), 'contextCommand');
const evalCommand = lazy(() => import('./commands/agent.js'), 'evalCommand');
const runCommand = lazy(() => import('./commands/agent.js'), 'runCommand');
const auditCommand = lazy(() => import('./commands/audit.js'), 'auditCommand');
const authCommand = lazy(() => import('./commands/auth.js'), 'authCommand');
const callCommand = lazy(() => import('./commands/call.js'), 'callCommand');
const initCommand = lazy(() => import('./commands/init.js'), 'initCommand');
const mcpAddCommand = lazy(() => import('./commands/mcp.js'), 'mcpAddCommand');
const mcpGetCommand = lazy(() => import('./commands/mcp.js'), 'mcpGetCommand');
const mcpListCommand = lazy(() => import('./commands/mcp.js'), 'mcpListCommand');
const mcpRemoveCommand = lazy(() => import('./commands/mcp.js'), 'mcpRemoveCommand');
const knowledgeGraphCommand = lazy(() => import('./commands/knowledge.js'), 'knowledgeGraphCommand');
const knowledgeIndexCommand = lazy(() => import('./commands/knowledge.js'), 'knowledgeIndexCommand');
const knowledgeInitCommand = lazy(() => import('./commands/knowledge.js'), 'knowledgeInitCommand');
const knowledgeLintCommand = lazy(() => import('./commands/knowledge.js'), 'knowledgeLintCommand');
const knowledgeRunCommand = lazy(() => import('./commands/knowledge.js'), 'knowledgeRunCommand');
const knowledgeSearchCommand = lazy(() => import('./commands/knowledge.js'), 'knowledgeSearchCommand');
const knowledgeShowCommand = lazy(() => import('./commands/knowledge.js'), 'knowledgeShowCommand');
const knowledgeVerifyCommand = lazy(() => import('./commands/knowledge.js'), 'knowledgeVerifyCommand');
const promptsCommand = lazy(() => import('./commands/listings.js'), 'promptsCommand');
const resourcesCommand = lazy(() => import('./commands/listings.js'), 'resourcesCommand');
const pinsAcceptCommand = lazy(() => import('./commands/pins.js'), 'pinsAcceptCommand');
const pinsDiffCommand = lazy(() => import('./commands/pins.js'), 'pinsDiffCommand');
const pinsListCommand = lazy(() => import('./commands/pins.js'), 'pinsListCommand');
const promptCommand = lazy(() => import('./commands/prompt.js'), 'promptCommand');
const readCommand = lazy(() => import('./commands/read.js'), 'readCommand');
const sandboxCheckCommand = lazy(() => import('./commands/sandbox.js'), 'sandboxCheckCommand');
const scanCommand = lazy(() => import('./commands/scan.js'), 'scanCommand');
const serveCommand = lazy(() => import('./commands/serve.js'), 'serveCommand');
const consoleCommand = lazy(() => import('./commands/console.js'), 'consoleCommand');
const serveDocsCommand = lazy(() => import('./commands/serve-docs.js'), 'serveDocsCommand');
const serveKnowledgeCommand = lazy(() => import('./commands/serve-knowledge.js'), 'serveKnowledgeCommand');
const serveSkillsCommand = lazy(() => import('./commands/serve-skills.js'), 'serveSkillsCommand');
const serversCommand = lazy(() => import('./commands/servers.js'), 'serversCommand');
const skillsIndexCommand = lazy(() => import('./commands/skills.js'), 'skillsIndexCommand');
const skillsListCommand = lazy(() => import('./commands/skills.js'), 'skillsListCommand');
const skillsRunCommand = lazy(() => import('./commands/skills.js'), 'skillsRunCommand');
const skillsSearchCommand = lazy(() => import('./commands/skills.js'), 'skillsSearchCommand');
const skillsShowCommand = lazy(() => import('./commands/skills.js'), 'skillsShowCommand');
const skillsValidateCommand = lazy(() => import('./commands/skills.js'), 'skillsValidateCommand');
const toolsExamplesExportCommand = lazy(
  () => import('./commands/tool-search.js'),
  'toolsExamplesExportCommand',
);
const toolsExamplesImportCommand = lazy(
  () => import('./commands/tool-search.js'),
  'toolsExamplesImportCommand',
);
const toolsSearchCommand = lazy(() => import('./commands/tool-search.js'), 'toolsSearchCommand');
const toolsCommand = lazy(() => import('./commands/tools.js'), 'toolsCommand');
const toolsSecurityCommand = lazy(() => import('./commands/tools.js'), 'toolsSecurityCommand');
const trustCommand = lazy(() => import('./commands/trust.js'), 'trustCommand');

interface CliOptions {
  config?: string;
  json?: boolean;
  server?: string;
  trustProject?: boolean;
  allowChanged?: boolean;
}

const ALLOW_CHANGED = '--allow-changed';
const ALLOW_CHANGED_HELP =
  'use it even when its definition is held back (changed since approved, or flagged by the scan), this once';

/** Commander hands every action its command last; optsWithGlobals() merges options given before or after it. */
function optionsOf(args: unknown[]): CliOptions {
  const raw = (args.at(-1) as Command).optsWithGlobals<Record<string, unknown>>();
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    ...(text(raw.config) ? { config: text(raw.config) } : {}),
    ...(raw.json === true ? { json: true } : {}),
    ...(text(raw.server) ? { server: text(raw.server) } : {}),
    ...(raw.trustProject === true ? { trustProject: true } : {}),
    ...(raw.allowChanged === true ? { allowChanged: true } : {}),
  };
}

/** Builds the `tack` command line. Every command is a thin layer over a library call (see src/index.ts). */
export function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('tack')
    .description('An MCP host and agent harness: tools (MCP), know-how (Agent Skills) and knowledge (OKF).')
    .version(VERSION)
    .configureOutput(commanderOutput)
    .showHelpAfterError()
    .exitOverride()
    .option('--config <file>', 'use this configuration file alone (tack.json or .mcp.json format)')
    .option('--json', 'print machine-readable JSON')
    .option(
      '--trust-project',
      'trust the project for this run (its servers, hooks, allow rules and skills) without `tack trust`',
    );

  const action =
    (fn: (positional: string[], options: CliOptions) => Promise<number>) =>
    async (...args: unknown[]) => {
      const positional = args.filter((arg): arg is string => typeof arg === 'string' || arg === undefined);
      setExitCode(await fn(positional as string[], optionsOf(args)));
    };

  program
    .command('init')
    .description(
      'set up the current folder: tack.json and AGENTS.md (never over a file that exists), and import the servers Claude Desktop, Claude Code, Cursor, VS Code or Codex have',
    )
    .option(
      '--import <sources>',
      'import without asking: claude-desktop, claude-code, cursor, vscode, codex (comma-separated) or all',
    )
    .option('--yes', 'import every server found without asking')
    .option('--force', 'replace servers of the same name in tack.json')
    .action(async (opts: { import?: string; yes?: boolean; force?: boolean }, cmd: Command) =>
      setExitCode(await initCommand({ ...optionsOf([cmd]), ...opts })),
    );

  const mcp = program
    .command('mcp')
    .description("add, remove, list and show the servers of tack's configuration files (as `claude mcp`)");
  const scopeOption = (cmd: Command) =>
    cmd.option(
      '-s, --scope <scope>',
      "project (the project's .mcp.json, read by Claude Code too), tack (its tack.json) or user (your config.json)",
    );
  const collect = (value: string, previous: string[]) => [...previous, value];
  scopeOption(
    mcp
      .command('add')
      .description(
        'add a server: tack mcp add <name> -- <command> [args...], or tack mcp add --transport http <name> <url>',
      )
      .argument('<name>', 'server name (letters, digits, _ and -)')
      .argument('<command-or-url>', 'the command to start (stdio), or the URL (http, sse)')
      .argument('[args...]', "the command's arguments (after --)")
      .option('-t, --transport <transport>', 'stdio, http or sse (default: http for a lone URL, else stdio)')
      .option(
        '-e, --env <KEY=value>',
        'a variable for a stdio server; repeat for more',
        collect,
        [] as string[],
      )
      .option(
        '-H, --header <"Name: value">',
        'a header for an http or sse server; repeat for more',
        collect,
        [] as string[],
      )
      .option('--force', 'replace a server of the same name in that file'),
  ).action(
    async (
      name: string,
      target: string,
      args: string[],
      opts: { transport?: string; scope?: string; env: string[]; header: string[]; force?: boolean },
      cmd: Command,
    ) => setExitCode(await mcpAddCommand(name, target, args, { ...optionsOf([cmd]), ...opts })),
  );
  scopeOption(
    mcp
      .command('remove')
      .description('remove a server; says which file it was removed from (default: the one file that has it)')
      .argument('<name>', 'server name'),
  ).action(async (name: string, opts: { scope?: string }, cmd: Command) =>
    setExitCode(await mcpRemoveCommand(name, { ...optionsOf([cmd]), ...opts })),
  );
  mcp
    .command('list')
    .description(
      'every server of every configuration file: transport, command or URL, file, and whether it starts',
    )
    .action(action((_, options) => mcpListCommand(options)));
  mcp
    .command('get')
    .description(
      'one server as tack uses it: its file, resolved command or URL, state, and the entry as written',
    )
    .argument('<name>', 'server name')
    .action(action(([name], options) => mcpGetCommand(name!, options)));

  program
    .command('servers')
    .description('connect to every configured server and show its state, era and catalog size')
    .action(action((_, options) => serversCommand(options)));

  program
    .command('auth')
    .description(
      'log in to a remote server that asks for OAuth; --logout and --list manage the stored tokens',
    )
    .argument('[server]', 'server name')
    .option('--logout', "forget the server's stored tokens")
    .option('--list', 'show the stored logins (never the tokens)')
    .option('--no-open', 'print the login URL without opening a browser')
    .action(
      async (
        server: string | undefined,
        opts: { logout?: boolean; list?: boolean; open?: boolean },
        cmd: Command,
      ) => setExitCode(await authCommand(server, { ...optionsOf([cmd]), ...opts })),
    );

  program
    .command('tools')
    .description(
      'list the tools the model sees, with the token cost of each definition; `tools search <query...>` ranks them; `tools examples export|import` shares what search learned',
    )
    .argument('[sub]', '`search` (rank the tools for one or more queries) or `examples` (export or import)')
    .argument('[args...]', 'search: one argument per query; examples: export [file] | import <file>')
    .option('--server <name>', 'only this server')
    .option('-k <n>', 'with search: how many (default 10)')
    .option('--explain', 'with search: why each tool matched (fields and words, expansion, server evidence)')
    .option('--security', 'capability labels (and where each came from), pin status and the trifecta legs')
    .action(
      async (
        sub: string | undefined,
        args: string[],
        opts: { k?: string; security?: boolean; explain?: boolean },
        cmd: Command,
      ) => {
        const options = optionsOf([cmd]);
        if (sub === undefined)
          return setExitCode(
            opts.security ? await toolsSecurityCommand(options) : await toolsCommand(options),
          );
        if (sub === 'examples') {
          const [verb, file] = args;
          if (verb === 'export' && args.length <= 2)
            return setExitCode(await toolsExamplesExportCommand(file, options));
          if (verb === 'import' && file && args.length === 2)
            return setExitCode(await toolsExamplesImportCommand(file, options));
          throw new TackError(
            'USAGE',
            'expected `tack tools examples export [file]` or `tack tools examples import <file>`',
          );
        }
        if (sub !== 'search' || args.length === 0 || args.some((q) => q.trim() === ''))
          throw new TackError(
            'USAGE',
            'expected `tack tools`, `tack tools search "<query>" ["<query>" ...]` or `tack tools examples export|import`',
          );
        setExitCode(
          await toolsSearchCommand(args, {
            ...options,
            ...(opts.k ? { k: positive('k', opts.k) } : {}),
            ...(opts.explain ? { explain: true } : {}),
          }),
        );
      },
    );

  program
    .command('resources')
    .description('list the resources and resource templates of every server')
    .option('--server <name>', 'only this server')
    .action(action((_, options) => resourcesCommand(options)));

  program
    .command('prompts')
    .description('list the prompts of every server, with their arguments')
    .option('--server <name>', 'only this server')
    .action(action((_, options) => promptsCommand(options)));

  program
    .command('call')
    .description(
      'call a tool by its model-visible name, e.g. tack call mcp__docs__search_docs \'{"query":"x"}\'',
    )
    .argument('<tool>', 'model-visible tool name (mcp__<server>__<tool>)')
    .argument('[json-args]', 'arguments as a JSON object')
    .option(ALLOW_CHANGED, ALLOW_CHANGED_HELP)
    .action(action(([tool, args], options) => callCommand(tool!, args, options)));

  program
    .command('read')
    .description('read a resource by URI')
    .argument('<uri>', 'resource URI')
    .option('--server <name>', 'the server to ask (default: the one that lists the URI)')
    .option(ALLOW_CHANGED, ALLOW_CHANGED_HELP)
    .action(action(([uri], options) => readCommand(uri!, options)));

  program
    .command('prompt')
    .description('get a prompt from a server')
    .argument('<server>', 'server name')
    .argument('<name>', 'prompt name')
    .argument('[json-args]', 'arguments as a JSON object of strings')
    .option(ALLOW_CHANGED, ALLOW_CHANGED_HELP)
    .action(action(([server, name, args], options) => promptCommand(server!, name!, args, options)));

  program
    .command('serve')
    .description('serve every configured server as one MCP server (stdio, or --http), for any MCP host')
    .option(
      '--http <[host:]port>',
      'serve Streamable HTTP on this address instead of stdio (host defaults to 127.0.0.1)',
    )
    .action(async (opts: { http?: string }, cmd: Command) =>
      setExitCode(await serveCommand({ ...optionsOf([cmd]), ...(opts.http ? { http: opts.http } : {}) })),
    );

  program
    .command('console')
    .description(
      'open the web console: servers, costs, sessions, pins and knowledge in a browser (127.0.0.1)',
    )
    .option('--port <n>', 'port to listen on (default: a free one)')
    .option('--open', 'open the URL in the default browser')
    .action(async (opts: { port?: string; open?: boolean }, cmd: Command) =>
      setExitCode(
        await consoleCommand({
          ...optionsOf([cmd]),
          ...(opts.port ? { port: opts.port } : {}),
          ...(opts.open ? { open: true } : {}),
        }),
      ),
    );

  program
    .command('audit')
    .description('show the newest calls served by tack serve (time, client, server, tool, outcome)')
    .option('--limit <n>', 'how many (default 20)')
    .action(async (opts: { limit?: string }, cmd: Command) =>
      setExitCode(await auditCommand({ ...optionsOf([cmd]), ...(opts.limit ? { limit: opts.limit } : {}) })),
    );

  program
    .command('serve-docs')
    .description('serve a folder of Markdown/MDX as an MCP docs search server (stdio, or --http)')
    .argument('<folder>', 'folder of .md / .mdx documents')
    .option(
      '--http <[host:]port>',
      'serve Streamable HTTP on this address instead of stdio (host defaults to 127.0.0.1)',
    )
    .option('--no-watch', 'do not re-index when files change')
    .action(async (folder: string, opts: { http?: string; watch?: boolean }, cmd: Command) =>
      setExitCode(await serveDocsCommand(folder, { ...optionsOf([cmd]), ...opts })),
    );

  program
    .command('serve-skills')
    .description('serve every skill tack finds over MCP (the Skills extension, plus tools), stdio or --http')
    .option(
      '--http <[host:]port>',
      'serve Streamable HTTP on this address instead of stdio (host defaults to 127.0.0.1)',
    )
    .action(async (opts: { http?: string }, cmd: Command) =>
      setExitCode(
        await serveSkillsCommand({ ...optionsOf([cmd]), ...(opts.http ? { http: opts.http } : {}) }),
      ),
    );

  const skills = program
    .command('skills')
    .description('Agent Skills: list, index, show, validate and run (project skills wait for `tack trust`)');
  const positive = (name: string, value: unknown) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0)
      throw new TackError('USAGE', `--${name} must be a positive integer, got ${JSON.stringify(value)}`);
    return n;
  };
  const skillOptions = (cmd: Command): SkillsOptions => {
    const raw = cmd.optsWithGlobals<Record<string, unknown>>();
    return {
      ...optionsOf([cmd]),
      servers: raw.servers === true,
      contextWindow: positive('context-window', raw.contextWindow),
      budget: positive('budget', raw.budget),
    };
  };
  const withSkillOptions = (cmd: Command) =>
    cmd.option('--servers', 'also the skills of the configured MCP servers (connects to them)');
  const withBudget = (cmd: Command) =>
    cmd
      .option(
        '--context-window <tokens>',
        "the model's context window; the index gets 1% of it (default 200000)",
      )
      .option('--budget <tokens>', 'the index budget in tokens (overrides --context-window)');
  withBudget(
    withSkillOptions(
      // `tack skills` alone lists them, as `tack servers` and `tack tools` list theirs (it printed help, exit 2).
      skills
        .command('list', { isDefault: true })
        .description('every skill with its scope and token cost: index, body, files (the default)'),
    ),
  ).action(async (_opts: unknown, cmd: Command) => setExitCode(await skillsListCommand(skillOptions(cmd))));
  withBudget(
    withSkillOptions(
      skills.command('index').description('tier 1: the skills index exactly as the model gets it'),
    ),
  ).action(async (_opts: unknown, cmd: Command) => setExitCode(await skillsIndexCommand(skillOptions(cmd))));
  withSkillOptions(
    skills
      .command('search')
      .description('rank every installed skill (those left out of the index too) for one or more queries')
      .argument('<query...>', 'one argument per query')
      .option('-k <n>', 'how many (default 10)'),
  ).action(async (queries: string[], opts: { k?: string }, cmd: Command) =>
    setExitCode(
      await skillsSearchCommand(queries, {
        ...skillOptions(cmd),
        ...(opts.k ? { k: positive('k', opts.k) ?? 10 } : {}),
      }),
    ),
  );
  withSkillOptions(
    skills
      .command('show')
      .description('tier 2: what activate_skill returns for a skill')
      .argument('<name>', 'skill name'),
  ).action(async (name: string, _opts: unknown, cmd: Command) =>
    setExitCode(await skillsShowCommand(name, skillOptions(cmd))),
  );
  withSkillOptions(
    skills
      .command('validate')
      .description("check skills against the Agent Skills spec and tack's warnings (exit 1 on errors)")
      .argument(
        '[path...]',
        'skill folders, SKILL.md files or folders of skills (default: every skill found)',
      )
      .option('--strict', 'unknown front matter fields are errors'),
  ).action(async (paths: string[], opts: { strict?: boolean }, cmd: Command) =>
    setExitCode(await skillsValidateCommand(paths, { ...skillOptions(cmd), strict: opts.strict === true })),
  );
  withSkillOptions(
    skills
      .command('run')
      .description("tier 3: run a script from a skill's scripts/ folder (asks first)")
      .argument('<name>', 'skill name')
      .argument('<script>', 'path inside scripts/')
      .argument('[args...]', 'arguments for the script')
      .option('--yes', 'approve the run without asking')
      .option('--timeout <ms>', 'kill the script after this long (default 60000)'),
  ).action(
    async (
      name: string,
      script: string,
      args: string[],
      opts: { yes?: boolean; timeout?: string },
      cmd: Command,
    ) =>
      setExitCode(
        await skillsRunCommand(name, script, args, {
          ...skillOptions(cmd),
          yes: opts.yes === true,
          timeout: positive('timeout', opts.timeout),
        }),
      ),
  );

  program
    .command('serve-knowledge')
    .description('serve OKF knowledge bundles over MCP: search_knowledge, read_concept, okf:// resources')
    .argument('[bundle...]', 'bundle folders, `path` or `name=path` (default: tack.json knowledge.bundles)')
    .option(
      '--http <[host:]port>',
      'serve Streamable HTTP on this address instead of stdio (host defaults to 127.0.0.1)',
    )
    .option(
      '--sqlite <file>',
      'run sqlite computations on this database (default: knowledge.runtimes.sqlite)',
    )
    .option(
      '--postgres <url>',
      'run postgres computations here (default: $TACK_POSTGRES_URL, then knowledge.runtimes.postgres)',
    )
    .action(
      async (bundles: string[], opts: { http?: string; sqlite?: string; postgres?: string }, cmd: Command) =>
        setExitCode(await serveKnowledgeCommand({ ...optionsOf([cmd]), bundles, ...opts })),
    );

  const knowledge = program
    .command('knowledge')
    .description('Open Knowledge Format bundles: lint, index, show, search, graph, verify, run, init');
  const knowledgeOptions = (cmd: Command, bundles?: string[]): KnowledgeOptions => {
    const raw = cmd.optsWithGlobals<Record<string, unknown>>();
    const named = Array.isArray(raw.bundle) ? (raw.bundle as string[]) : [];
    return { ...optionsOf([cmd]), bundles: [...(bundles ?? []), ...named] };
  };
  const bundleOption = (cmd: Command) =>
    cmd.option(
      '-b, --bundle <folder>',
      'a bundle folder, `path` or `name=path`; repeat for more (default: tack.json knowledge.bundles)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    );
  knowledge
    .command('lint')
    .description('check bundles against OKF v0.2: conformance errors (exit 1) and warnings')
    .argument('[bundle...]', 'bundle folders (default: tack.json knowledge.bundles)')
    .action(async (bundles: string[], _opts: unknown, cmd: Command) =>
      setExitCode(await knowledgeLintCommand(knowledgeOptions(cmd, bundles))),
    );
  knowledge
    .command('index')
    .description(
      'show the index.md changes each bundle needs as a diff (exit 1 when any); --write writes them, keeping hand-written lines',
    )
    .argument('[bundle...]', 'bundle folders (default: tack.json knowledge.bundles)')
    .option('--write', 'write the changes (only the generated block of each index.md changes)')
    .action(async (bundles: string[], opts: { write?: boolean }, cmd: Command) =>
      setExitCode(
        await knowledgeIndexCommand({ ...knowledgeOptions(cmd, bundles), write: opts.write === true }),
      ),
    );
  bundleOption(
    knowledge
      .command('show')
      .description('a concept as read_concept gives it to the model: trust, status, staleness, sources, body')
      .argument('<id>', 'concept id, <bundle>/<id> or okf://<bundle>/<id>'),
  ).action(async (id: string, _opts: unknown, cmd: Command) =>
    setExitCode(await knowledgeShowCommand(id, knowledgeOptions(cmd))),
  );
  bundleOption(
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
  bundleOption(
    knowledge
      .command('verify')
      .description(
        'record a verification (human:<id> makes a concept human-reviewed); the rest of the file is kept',
      )
      .argument('<id>', 'concept id, <bundle>/<id> or okf://<bundle>/<id>')
      .requiredOption('--by <actor>', 'human:<id>, process:<id> or <tool>/<version>')
      .option('--at <datetime>', 'when (default now, ISO 8601 with offset)'),
  ).action(async (id: string, opts: { by: string; at?: string }, cmd: Command) =>
    setExitCode(await knowledgeVerifyCommand(id, { ...knowledgeOptions(cmd), ...opts })),
  );

  knowledge
    .command('graph')
    .description('the link graph of each bundle as Mermaid or DOT text (--json: nodes and edges)')
    .argument('[bundle...]', 'bundle folders (default: tack.json knowledge.bundles)')
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
      setExitCode(await knowledgeInitCommand({ ...optionsOf([cmd]), ...opts })),
    );
  bundleOption(
    knowledge
      .command('run')
      .description(
        'run an Attested Computation with parameter values, attest it, print the value (exit 1 if refused)',
      )
      .argument('<id>', 'concept id, <bundle>/<id> or okf://<bundle>/<id>')
      .option(
        '-p, --param <name=value>',
        'a value for a declared parameter; repeat for more',
        (value: string, previous: string[]) => [...previous, value],
        [] as string[],
      )
      .option('--sqlite <file>', 'the database for runtime: sqlite (default: knowledge.runtimes.sqlite)')
      .option(
        '--postgres <url>',
        'the server for runtime: postgres (default: $TACK_POSTGRES_URL, then tack.json)',
      ),
  ).action(async (id: string, opts: { param?: string[]; sqlite?: string; postgres?: string }, cmd: Command) =>
    setExitCode(await knowledgeRunCommand(id, { ...knowledgeOptions(cmd), ...opts })),
  );

  const agentOptions = (cmd: Command): AgentCliOptions => {
    const raw = cmd.optsWithGlobals<Record<string, unknown>>();
    const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
    const number = (name: string, v: unknown) => {
      if (v === undefined) return undefined;
      const n = Number(v);
      if (!(n > 0))
        throw new TackError('USAGE', `--${name} must be a positive number, got ${JSON.stringify(v)}`);
      return n;
    };
    const steps = positive('max-steps', raw.maxSteps);
    const cost = number('max-cost', raw.maxCost);
    return {
      ...optionsOf([cmd]),
      ...(text(raw.model) ? { model: text(raw.model) } : {}),
      ...(text(raw.approve) ? { approve: text(raw.approve) } : {}),
      ...(steps ? { maxSteps: steps } : {}),
      ...(cost ? { maxCost: cost } : {}),
      ...(text(raw.resume) ? { resume: text(raw.resume) } : {}),
      ...(raw.plain === true ? { plain: true } : {}),
    };
  };
  const withAgentOptions = (cmd: Command) =>
    cmd
      .option(
        '--model <provider:id>',
        'anthropic:<id>, openai:<id> or openai-compatible:<id> (default: agent.model)',
      )
      .option('--approve <mode>', 'ask | auto-read-only | never: calls that need approval (default ask)')
      .option('--max-steps <n>', 'model calls per run (default 50)')
      .option('--max-cost <usd>', 'stop past this cost in US dollars');
  withAgentOptions(
    program
      .command('run')
      .description(
        'run a task headless: the answer streams to stdout; exit 0 done, 4 done but calls were refused (nobody to ask), 3 a limit, 1 an error, 130 interrupted',
      )
      .argument('[task]', 'what to do (with --resume: optional, default "continue")')
      .option('--resume <session>', 'continue a session (its id, or the last part of it)'),
  ).action(async (task: string | undefined, _opts: unknown, cmd: Command) =>
    setExitCode(await runCommand(task, agentOptions(cmd))),
  );
  withAgentOptions(
    program
      .command('chat')
      .description(
        'talk with the agent in a full-screen terminal interface (/help for commands and keys); line mode when stdout is not a terminal, TERM=dumb, CI is set or --plain',
      )
      .option('--resume <session>', 'continue a session')
      .option('--plain', 'the line-based chat instead of the full-screen one'),
  ).action(async (_opts: unknown, cmd: Command) => setExitCode(await chatCommand(agentOptions(cmd))));
  withAgentOptions(
    program.command('context').description('what the next turn would send, part by part, with token counts'),
  ).action(async (_opts: unknown, cmd: Command) => setExitCode(await contextCommand(agentOptions(cmd))));
  withAgentOptions(
    program
      .command('eval')
      .description('run a prompt set with the current guidelines; outputs recorded with the guidelines hash')
      .argument('<prompts.jsonl>', 'one {"id", "prompt", "expect"?} per line'),
  ).action(async (file: string, _opts: unknown, cmd: Command) =>
    setExitCode(await evalCommand(file, agentOptions(cmd))),
  );

  program
    .command('trust')
    .description(
      'trust a project: show what its tack.json, .mcp.json and skills would run, ask, then record their hashes (a changed file asks again)',
    )
    .argument('[dir]', 'the project folder (default: the current one)')
    .option('--yes', 'trust without asking (scripts, CI)')
    .option('--dry-run', 'show what would be trusted; record nothing')
    .option('--list', 'the trusted projects, and whether their files changed since')
    .option('--revoke', 'forget the project: its servers, hooks, allow rules and skills wait again')
    .action(
      async (
        dir: string | undefined,
        opts: { list?: boolean; revoke?: boolean; yes?: boolean; dryRun?: boolean },
        cmd: Command,
      ) =>
        setExitCode(
          await trustCommand(dir, {
            ...optionsOf([cmd]),
            list: opts.list === true,
            revoke: opts.revoke === true,
            yes: opts.yes === true,
            dryRun: opts.dryRun === true,
          }),
        ),
    );

  program
    .command('scan')
    .description(
      'check tool definitions for poisoning (hidden text, directives to the model, exfiltration); exit 1 on a block',
    )
    .option(
      '--tools <file.json>',
      'scan exported definitions offline (tools, prompts, resources) instead of the configured servers',
    )
    .option('--judge', 'send definitions the score leaves in doubt to scan.judge.model (cached by digest)')
    .action(async (opts: { tools?: string; judge?: boolean }, cmd: Command) =>
      setExitCode(
        await scanCommand({
          ...optionsOf([cmd]),
          ...(opts.tools ? { tools: opts.tools } : {}),
          ...(opts.judge ? { judge: true } : {}),
        }),
      ),
    );

  const sandbox = program
    .command('sandbox')
    .description('the sandbox servers and skill scripts run in (bubblewrap on Linux)');
  sandbox
    .command('check')
    .description(
      'run a probe inside each sandbox policy and print what it can and cannot reach; exit 1 when that differs from the policy',
    )
    .argument('[server]', 'only this server')
    .option('--skill-scripts', "only the skill scripts' sandbox")
    .action(async (server: string | undefined, opts: { skillScripts?: boolean }, cmd: Command) =>
      setExitCode(
        await sandboxCheckCommand(server, { ...optionsOf([cmd]), skillScripts: opts.skillScripts === true }),
      ),
    );

  const pins = program
    .command('pins')
    .description('pinned tool definitions (trust on first use): list, diff and accept what changed');
  pins
    .command('list')
    .description("this project's pins and their status; exit 1 when something is held back")
    .argument('[server]', 'only this server')
    .option('--check', 'connect the servers first: pin what is new, hold what changed')
    .option('--all', "every project's pins, with the projects each was seen in")
    .action(async (server: string | undefined, opts: { check?: boolean; all?: boolean }, cmd: Command) =>
      setExitCode(
        await pinsListCommand(server, {
          ...optionsOf([cmd]),
          check: opts.check === true,
          all: opts.all === true,
        }),
      ),
    );
  pins
    .command('diff')
    .description('the pinned definition against the one held back')
    .argument('[server]', 'only this server')
    .argument('[name]', 'only this tool or prompt')
    .action(async (server: string | undefined, name: string | undefined, _opts: unknown, cmd: Command) =>
      setExitCode(await pinsDiffCommand(server, name, optionsOf([cmd]))),
    );
  pins
    .command('accept')
    .description('accept what is held back: it becomes the pin and is offered again')
    .argument('<server>', 'the server')
    .argument('[name]', 'only this tool or prompt')
    .option('--kind <kind>', 'only this kind: tool, instructions, prompt, resource, resource-template')
    .option('--sha <prefix>', 'only the version with this sha256 (as `tack pins diff` showed it)')
    .action(
      async (server: string, name: string | undefined, opts: { kind?: string; sha?: string }, cmd: Command) =>
        setExitCode(
          await pinsAcceptCommand(server, name, {
            ...optionsOf([cmd]),
            ...(opts.kind ? { kind: opts.kind } : {}),
            ...(opts.sha ? { sha: opts.sha } : {}),
          }),
        ),
    );

  for (const command of program.commands) command.exitOverride();
  for (const command of skills.commands) command.exitOverride();
  for (const command of mcp.commands) command.exitOverride();
  for (const command of sandbox.commands) command.exitOverride();
  for (const command of knowledge.commands) command.exitOverride();
  return program;
}

/** Runs the CLI and returns its exit code: 0 ok, 1 failure, 2 usage or configuration error, 130 interrupted. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  exitWhenStdoutCloses();
  let code = 0;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync([...argv]);
    return code;
  } catch (error) {
    // Commander has already printed its usage error, help or version (the last two exit 0).
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    return reportError(error);
  }
}
