import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/node';
import type { ApprovalAnswer } from '../agent/approval.js';
import { projectSkillsTrusted } from '../config/apply-trust.js';
import type { TackConfig } from '../config/load.js';
import { TackError } from '../errors.js';
import { KnowledgeBase } from '../knowledge/knowledge.js';
import type { ComputationRuntimes } from '../knowledge/runtimes.js';
import { openRuntimes } from '../knowledge/runtimes.js';
import { McpHost } from '../mcp/host.js';
import type { SkillLibrary } from '../skills/library.js';
import { loadSkills } from '../skills/load.js';
import { openStore } from '../store/open.js';
import { requestTarget } from '../util/request-target.js';
import type { WarningSink } from '../util/warnings.js';
import { VERSION } from '../version.js';
import { AppViews } from './apps.js';
import { ConsoleCalls } from './calls.js';
import { type CatalogView, catalogView, serverRows } from './catalog.js';
import {
  bearerOf,
  COMMON_HEADERS,
  consoleCsp,
  readJsonBody,
  sendError,
  sendJson,
  tokenMatcher,
} from './http.js';
import {
  bundleGraph,
  bundleSummaries,
  computations,
  conceptDetail,
  findConcepts,
  runComputationFor,
} from './knowledge.js';
import { readForPage, runPrompt, serverListing } from './listings.js';
import { type SandboxServer, startSandbox } from './sandbox.js';
import { acceptHeld, auditEntries, heldDefinitions, projectTrust } from './security.js';
import { listSessions, sessionDetail, streamTranscript } from './sessions.js';
import { skillDetail, skillFile, skillsIndex } from './skills.js';

export interface ConsoleOptions {
  config: TackConfig;
  /**
   * A host to show, with the store it was given (the caller closes both); default: one started from `config`
   * over the store of `config.paths`, both opened here and closed with the console.
   */
  host?: McpHost;
  /** 0 (default) picks a free port. Always bound to 127.0.0.1. */
  port?: number;
  /** The session token; default 32 random bytes. Tests and benchmarks pass none. */
  token?: string;
  /** The built front end (index.html, assets/); default: the one shipped in the package. */
  assetsDir?: string;
  onWarning?: WarningSink;
}

export interface RunningConsole {
  /** The URL to open: the console's origin with the token, the only way in. */
  url: string;
  origin: string;
  token: string;
  host: McpHost;
  /** Stops the console, and the host it started when it was given none. */
  close(): Promise<void>;
}

/** The shipped front end: `dist/console` next to `dist/src`, from the built module or from the sources. */
export function defaultAssetsDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const candidates = [resolve(here, '../../console'), resolve(here, '../../dist/console')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? candidates[0]!;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Page routes worth a token check; anything else is 404 (no directory listing, no other files). */
const PAGE = /^\/(index\.html)?$/;

/**
 * `tack console`: a local web application over the library, a thin HTTP layer like the CLI. Bound to
 * 127.0.0.1; Host and Origin are checked as `tack serve --http` checks them (DNS rebinding), and every page and
 * API answer needs the session token: the page URL carries it once (`/?token=`), the page sends it back as a
 * bearer header on every API request, so nothing a browser sends on its own (a cookie) can stand in for it.
 */
export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const { config } = options;
  const token = options.token ?? randomBytes(32).toString('base64url');
  const tokenOk = tokenMatcher(token);
  const assetsDir = options.assetsDir ?? defaultAssetsDir();
  const indexFile = join(assetsDir, 'index.html');
  if (!existsSync(indexFile))
    throw new TackError('USAGE', `the console's front end is not built (${indexFile} is missing)`, {
      hint: 'Run `npm run build` in the tack repository.',
    });
  const ownHost = options.host === undefined;
  // The console is a composition root like the CLI and startGateway: the host it builds gets the store opened
  // here (sessions, pins, audit, era verdicts, token counts), closed after the host when the console stops.
  const ownStore = ownHost ? await openStore(config, options.onWarning) : undefined;
  const host = options.host ?? new McpHost({ config, store: ownStore });
  // Servers start in the background: the page opens at once and shows them connecting.
  const connecting = ownHost ? host.connectAll().catch(() => {}) : Promise.resolve();
  const calls = new ConsoleCalls(host, config);
  const views = new AppViews(host);

  let view: { catalog: unknown; value: Promise<CatalogView> } | undefined;
  const currentView = () => {
    if (view?.catalog !== host.catalog) {
      const value = catalogView(host, config);
      view = { catalog: host.catalog, value };
      value.catch(() => {
        view = undefined;
      });
    }
    return view.value;
  };
  let skills: Promise<SkillLibrary> | undefined;
  const library = () => {
    skills ??= connecting.then(() =>
      loadSkills({ config, trustProject: projectSkillsTrusted(config), host }),
    );
    return skills;
  };
  let knowledge: Promise<KnowledgeBase | undefined> | undefined;
  const base = () => {
    knowledge ??=
      config.knowledge.bundles.length > 0
        ? KnowledgeBase.load(config.knowledge.bundles)
        : Promise.resolve(undefined);
    return knowledge;
  };
  let runtimes: Promise<ComputationRuntimes> | undefined;
  const runtime = () => {
    runtimes ??= openRuntimes(config.knowledge.runtimes);
    return runtimes;
  };

  let sandbox: SandboxServer | undefined;

  const validHost = localhostHostValidation();
  const validOrigin = localhostOriginValidation();
  let origins = new Set<string>();
  let consoleOrigin = '';

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname.slice('/api'.length);
    const method = req.method ?? 'GET';
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const [section, name, action] = parts;
    const get = method === 'GET';
    const post = method === 'POST';
    if (get && section === 'overview') {
      const sessions = host.store ? (await listSessions(host.store)).length : 0;
      return sendJson(res, 200, {
        version: VERSION,
        projectRoot: config.projectRoot,
        servers: serverRows(host),
        sessions,
        held: (await heldDefinitions(host.store, config)).length,
        bundles: config.knowledge.bundles.length,
        store: host.store !== undefined,
      });
    }
    if (get && section === 'servers' && !name) {
      const catalog = await currentView();
      return sendJson(res, 200, {
        servers: serverRows(host),
        perServer: catalog.perServer,
        inlineTokens: catalog.inlineTokens,
        deferredTokens: catalog.deferredTokens,
        deferred: catalog.deferred,
        mode: catalog.mode,
        contextWindow: catalog.contextWindow,
        tools: catalog.rows.length,
      });
    }
    if (section === 'servers' && name) {
      // A server's prompts and resources: the console has no conversation, so they are run and read here.
      const held = (await currentView()).held;
      if (get && !action) return sendJson(res, 200, serverListing(host, name, held));
      const body = post && (action === 'prompt' || action === 'read') ? await readJsonBody(req) : undefined;
      const fields = (body ?? {}) as { name?: unknown; arguments?: unknown; uri?: unknown };
      if (post && action === 'prompt') {
        if (typeof fields.name !== 'string') throw new TackError('USAGE', 'name is required');
        return sendJson(res, 200, await runPrompt(host, name, fields.name, fields.arguments, held));
      }
      if (post && action === 'read') return sendJson(res, 200, await readForPage(host, name, fields.uri));
    }
    if (get && section === 'tools' && !name) {
      const catalog = await currentView();
      const q = (url.searchParams.get('q') ?? '').toLowerCase();
      const server = url.searchParams.get('server') ?? '';
      const sort = url.searchParams.get('sort') ?? 'tokens';
      const offset = Math.max(0, Number(url.searchParams.get('offset')) || 0);
      const limit = Math.min(500, Math.max(1, Number(url.searchParams.get('limit')) || 100));
      let rows = catalog.rows.filter(
        (r) =>
          (!server || r.server === server) &&
          (!q || r.name.toLowerCase().includes(q) || r.summary.toLowerCase().includes(q)),
      );
      if (sort === 'tokens') rows = [...rows].sort((a, b) => b.tokens - a.tokens);
      return sendJson(res, 200, { total: rows.length, offset, rows: rows.slice(offset, offset + limit) });
    }
    if (section === 'tools' && name) {
      const catalog = await currentView();
      const row = catalog.rows.find((r) => r.name === name);
      const entry = host.catalog.getTool(name);
      if (!row || !entry)
        throw new TackError('UNKNOWN_TOOL', `no tool named ${name}`, { subject: { tool: name } });
      if (get && !action) return sendJson(res, 200, { row, definition: entry.definition });
      if (post && action === 'call') {
        const body = (await readJsonBody(req)) as { arguments?: unknown };
        return sendJson(
          res,
          200,
          await calls.call(name, argumentsOf(body.arguments), row.held !== undefined, 'form'),
        );
      }
    }
    if (post && section === 'approvals' && name) {
      const body = (await readJsonBody(req)) as { decision?: unknown; remember?: unknown };
      const answer: ApprovalAnswer = {
        decision: body.decision === 'allow' ? 'allow' : 'deny',
        ...(body.remember === 'session' ? { remember: 'session' as const } : {}),
      };
      return sendJson(res, 200, await calls.answer(name, answer));
    }
    if (get && section === 'sessions') {
      if (!host.store) return sendJson(res, 200, name ? { error: { message: 'no store' } } : []);
      if (!name) return sendJson(res, 200, await listSessions(host.store));
      if (action === 'live') {
        const detail = await host.store.sessions.get(name);
        if (!detail) throw new TackError('SESSION', `no session ${name} in the index`);
        return streamTranscript(detail.file, Math.max(0, Number(url.searchParams.get('offset')) || 0), res);
      }
      return sendJson(res, 200, await sessionDetail(host.store, name));
    }
    if (get && section === 'security') {
      const catalog = await currentView();
      return sendJson(res, 200, {
        held: await heldDefinitions(host.store, config),
        findings: catalog.findings,
        trifecta: catalog.trifecta,
        trust: projectTrust(config),
        store: host.store !== undefined,
      });
    }
    if (post && section === 'pins' && name === 'accept') {
      const accepted = await acceptHeld(host.store, (await readJsonBody(req)) as Record<string, unknown>);
      view = undefined;
      return sendJson(res, 200, { accepted });
    }
    if (get && section === 'audit')
      return sendJson(res, 200, await auditEntries(host.store, url.searchParams));
    if (section === 'knowledge') {
      const kb = await base();
      if (get && !name) return sendJson(res, 200, { bundles: bundleSummaries(kb) });
      if (get && name && action === 'computations')
        return sendJson(res, 200, computations(kb, name, url.searchParams.get('q') ?? ''));
      if (get && name && action === 'graph')
        return sendJson(res, 200, bundleGraph(kb, name, url.searchParams.get('focus') ?? undefined));
      if (get && name && action === 'search')
        return sendJson(res, 200, findConcepts(kb, name, url.searchParams.get('q') ?? ''));
      if (get && name && action === 'concept')
        return sendJson(res, 200, conceptDetail(kb, name, url.searchParams.get('id') ?? ''));
      if (post && name && action === 'run') {
        const body = (await readJsonBody(req)) as { id?: unknown; values?: unknown };
        if (typeof body.id !== 'string') throw new TackError('USAGE', 'id is required');
        return sendJson(
          res,
          200,
          await runComputationFor(kb, await runtime(), name, body.id, argumentsOf(body.values)),
        );
      }
    }
    if (get && section === 'skills') {
      const lib = await library();
      if (!name) return sendJson(res, 200, await skillsIndex(lib, config.agent.contextWindow ?? 200_000));
      if (action === 'file')
        return sendJson(res, 200, await skillFile(lib, name, url.searchParams.get('path') ?? ''));
      return sendJson(res, 200, await skillDetail(lib, name));
    }
    if (post && section === 'apps') {
      const body = (await readJsonBody(req)) as {
        tool?: unknown;
        name?: unknown;
        arguments?: unknown;
        uri?: unknown;
      };
      if (name === 'open') {
        if (typeof body.tool !== 'string') throw new TackError('USAGE', 'tool is required');
        if (!sandbox) throw new TackError('USAGE', 'the MCP Apps sandbox is not listening');
        const pageOrigin = originOf(req);
        const opened = await views.open(body.tool, origins.has(pageOrigin) ? pageOrigin : consoleOrigin);
        const catalog = await currentView();
        return sendJson(res, 200, {
          viewId: opened.id,
          proxy: sandbox.urlOf(opened),
          sandboxOrigin: sandbox.origin,
          html: opened.html,
          csp: opened.declared,
          uri: opened.uri,
          server: opened.server,
          prefersBorder: opened.prefersBorder,
          tool: host.catalog.getTool(body.tool)?.definition,
          held: catalog.rows.find((r) => r.name === body.tool)?.held !== undefined,
        });
      }
      const opened = name ? views.get(name) : undefined;
      if (!opened) throw new TackError('USAGE', 'no such view (it expired): open the app again');
      if (action === 'call') {
        if (typeof body.name !== 'string') throw new TackError('USAGE', 'name is required');
        const tool = views.toolFor(opened, body.name);
        const catalog = await currentView();
        const held = catalog.rows.find((r) => r.name === tool)?.held !== undefined;
        return sendJson(
          res,
          200,
          await calls.call(tool, argumentsOf(body.arguments), held, `app ${opened.uri}`),
        );
      }
      if (action === 'read') {
        if (typeof body.uri !== 'string') throw new TackError('USAGE', 'uri is required');
        return sendJson(res, 200, await views.read(opened, body.uri));
      }
      const note = body as { role?: unknown; content?: unknown; structuredContent?: unknown };
      if (action === 'message')
        return sendJson(res, 200, {
          recorded: views.recordMessage(opened, note.role, note.content),
          messages: opened.messages.length,
        });
      if (action === 'context')
        return sendJson(res, 200, {
          context: views.setContext(opened, note.content, note.structuredContent),
        });
      if (action === 'close') return sendJson(res, 200, { closed: views.close(opened.id) });
    }
    sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `no API ${method} ${url.pathname}` } });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    // Stricter than the SDK's check (which accepts any localhost port): a page on another local port is
    // another site, and may not drive this one.
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin)) {
      sendJson(res, 403, { error: { code: 'FORBIDDEN', message: `origin ${origin} is not this console` } });
      return;
    }
    const url = requestTarget(req.url);
    if (!url) {
      sendJson(res, 400, { error: { code: 'BAD_REQUEST', message: 'the request target is not a URL' } });
      return;
    }
    if (url.pathname.startsWith('/api/')) {
      if (!tokenOk(bearerOf(req))) {
        res.writeHead(401, { ...COMMON_HEADERS, 'www-authenticate': 'Bearer realm="tack console"' });
        res.end();
        return;
      }
      try {
        await api(req, res, url);
      } catch (error) {
        if (!res.headersSent) sendError(res, error);
        else res.end();
      }
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, COMMON_HEADERS).end();
      return;
    }
    if (PAGE.test(url.pathname)) {
      if (!tokenOk(url.searchParams.get('token') ?? undefined)) {
        res
          .writeHead(401, {
            ...COMMON_HEADERS,
            'content-type': 'text/plain; charset=utf-8',
            'content-security-policy': "default-src 'none'",
          })
          .end('tack console: open the URL `tack console` printed (it carries the session token).\n');
        return;
      }
      res.writeHead(200, {
        ...COMMON_HEADERS,
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': consoleCsp(sandbox?.origin),
        'cache-control': 'no-store',
        'x-frame-options': 'DENY',
      });
      res.end(readFileSync(indexFile));
      return;
    }
    if (url.pathname.startsWith('/assets/')) {
      // The front end's own files (no data): served without the token, by name inside assets/ only.
      const root = join(assetsDir, 'assets');
      const file = normalize(join(root, url.pathname.slice('/assets/'.length)));
      const type = TYPES[extname(file)];
      if (file.startsWith(root + sep) && type && existsSync(file)) {
        res.writeHead(200, {
          ...COMMON_HEADERS,
          'content-type': type,
          'cache-control': 'public, max-age=31536000, immutable',
        });
        res.end(readFileSync(file));
        return;
      }
    }
    res.writeHead(404, { ...COMMON_HEADERS, 'content-type': 'text/plain' }).end('Not found\n');
  };

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new TackError(
            'USAGE',
            `cannot listen on 127.0.0.1:${options.port ?? 0}: ${error.code ?? error.message}`,
            {
              hint:
                error.code === 'EADDRINUSE'
                  ? 'Pick another port with --port, or stop what holds this one.'
                  : undefined,
            },
          ),
        ),
      );
      server.listen(options.port ?? 0, '127.0.0.1', resolveListen);
    });
    sandbox = await startSandbox(views);
  } catch (error) {
    server.close();
    // Nothing listens: what was started for the console stops with it.
    if (ownHost) await host.close();
    await ownStore?.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  consoleOrigin = origin;
  origins = new Set([origin, `http://localhost:${port}`, `http://[::1]:${port}`]);
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    host,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await sandbox?.close();
      if (runtimes) await (await runtimes).close().catch(() => {});
      if (ownHost) await host.close();
      await ownStore?.close();
    },
  };
}

/** The origin the page was loaded from, for the view's frame-ancestors. */
function originOf(req: IncomingMessage): string {
  return `http://${req.headers.host ?? '127.0.0.1'}`;
}

function argumentsOf(value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TackError('USAGE', 'arguments must be a JSON object');
  return value as Record<string, unknown>;
}
