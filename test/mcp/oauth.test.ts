import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { createOAuthMetadata, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo as IssuedAuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  oauthMetadataResponse,
  requireBearerAuth,
} from '@modelcontextprotocol/server';
import express, { type Response as ExpressResponse } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { McpHost } from '../../src/mcp/host.js';
import type { OAuthLoginRequest, OAuthOptions } from '../../src/mcp/oauth.js';
import { TackStore } from '../../src/store/store.js';
import { BIN, tack } from '../helpers/cli.js';
import { startHost, type TempProject, tempProject } from '../helpers/project.js';

/**
 * OAuth end to end with real parts: an authorization server built from the SDK's own router (metadata, dynamic
 * client registration, PKCE, code and refresh grants), an MCP server behind the SDK's bearer gate that publishes
 * its protected resource metadata, and tack's host with the store on disk. The "browser" follows the
 * authorization URL with fetch: the server approves at once and redirects to tack's loopback listener.
 */

interface Grant {
  clientId: string;
  scopes: string[];
  resource: string | undefined;
}

/** An authorization server provider that approves every request and rotates refresh tokens. */
class TestAuthorizationServer implements OAuthServerProvider {
  readonly counts = { registrations: 0, authorizations: 0, codeExchanges: 0, refreshes: 0 };
  readonly access = new Map<string, Grant & { expiresAt: number }>();
  readonly #clients = new Map<string, OAuthClientInformationFull>();
  readonly #codes = new Map<string, Grant & { challenge: string }>();
  readonly #refresh = new Map<string, Grant>();

  readonly clientsStore = {
    getClient: (clientId: string) => this.#clients.get(clientId),
    registerClient: (client: OAuthClientInformationFull) => {
      this.counts.registrations++;
      this.#clients.set(client.client_id, client);
      return client;
    },
  };

  async authorize(
    client: OAuthClientInformationFull,
    params: AuthorizationParams,
    res: ExpressResponse,
  ): Promise<void> {
    this.counts.authorizations++;
    const code = randomUUID();
    this.#codes.set(code, {
      clientId: client.client_id,
      scopes: params.scopes ?? [],
      resource: params.resource?.href,
      challenge: params.codeChallenge,
    });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(target.href);
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const grant = this.#codes.get(code);
    if (!grant) throw new InvalidGrantError('unknown authorization code');
    return grant.challenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<OAuthTokens> {
    const grant = this.#codes.get(code);
    if (!grant || grant.clientId !== client.client_id)
      throw new InvalidGrantError('unknown authorization code');
    this.#codes.delete(code);
    this.counts.codeExchanges++;
    return this.#issue(grant);
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string): Promise<OAuthTokens> {
    const grant = this.#refresh.get(refreshToken);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('unknown refresh token');
    this.#refresh.delete(refreshToken);
    this.counts.refreshes++;
    return this.#issue(grant);
  }

  async verifyAccessToken(token: string): Promise<IssuedAuthInfo> {
    const grant = this.access.get(token);
    if (!grant) throw new InvalidGrantError('unknown token');
    return { token, clientId: grant.clientId, scopes: grant.scopes, expiresAt: grant.expiresAt / 1000 };
  }

  /** Every access token issued so far is now past its time; refresh tokens stay good. */
  expireAccessTokens(): void {
    for (const grant of this.access.values()) grant.expiresAt = Date.now() - 10_000;
  }

  #issue(grant: Grant): OAuthTokens {
    const accessToken = `at-${randomUUID()}`;
    const refreshToken = `rt-${randomUUID()}`;
    this.access.set(accessToken, { ...grant, expiresAt: Date.now() + 3600_000 });
    this.#refresh.set(refreshToken, grant);
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: refreshToken,
      scope: grant.scopes.join(' '),
    };
  }
}

interface World {
  as: TestAuthorizationServer;
  issuer: string;
  /**
   * Moves the MCP server to a new authorization server (SEP-2352): its resource metadata names the new one,
   * and only the new one's tokens are accepted.
   */
  migrate(): Promise<{ as: TestAuthorizationServer; issuer: string }>;
  mcpUrl: string;
  /** The Authorization header of every MCP request (not the metadata ones), oldest first. */
  seen: string[];
  project: TempProject;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** An authorization server on its own port, built from the SDK's router. */
async function startAuthorizationServer() {
  const as = new TestAuthorizationServer();
  const app = express();
  const server = createServer(app);
  const issuerUrl = new URL(`http://127.0.0.1:${await listen(server)}/`);
  const limits = { rateLimit: false as const };
  app.use(
    mcpAuthRouter({
      provider: as,
      issuerUrl,
      scopesSupported: ['mcp:tools'],
      authorizationOptions: limits,
      clientRegistrationOptions: limits,
      tokenOptions: limits,
    }),
  );
  const oauthMetadata = createOAuthMetadata({ provider: as, issuerUrl, scopesSupported: ['mcp:tools'] });
  return { as, issuerUrl, server, oauthMetadata };
}

async function startWorld(): Promise<World> {
  const first = await startAuthorizationServer();
  const { as, issuerUrl, server: asServer } = first;
  const servers = [asServer];
  /** The authorization server whose tokens the MCP server accepts (the one its metadata names). */
  let current = first;

  const mcpServer = createServer();
  const mcpUrl = new URL(`http://127.0.0.1:${await listen(mcpServer)}/mcp`);
  const metadata = {
    oauthMetadata: first.oauthMetadata,
    resourceServerUrl: mcpUrl,
    scopesSupported: ['mcp:tools'],
    resourceName: 'protected test server',
  };
  const gate = requireBearerAuth({
    verifier: {
      verifyAccessToken: async (token) => {
        const grant = current.as.access.get(token);
        if (!grant || grant.expiresAt <= Date.now())
          throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown or expired access token');
        return {
          token,
          clientId: grant.clientId,
          scopes: grant.scopes,
          expiresAt: Math.floor(grant.expiresAt / 1000),
          ...(grant.resource ? { resource: new URL(grant.resource) } : {}),
        };
      },
    },
    expectedResource: mcpUrl,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'protected', version: '1.0.0' });
    server.registerTool(
      'whoami',
      { description: 'Says which OAuth client called', inputSchema: { text: z.string() } },
      async ({ text }, ctx) => ({
        content: [{ type: 'text', text: `${text} from ${ctx.http?.authInfo?.clientId ?? 'nobody'}` }],
      }),
    );
    return server;
  });
  const seen: string[] = [];
  const node = toNodeHandler({
    fetch: async (request) => {
      const document = oauthMetadataResponse(request, metadata);
      if (document) return document;
      seen.push(request.headers.get('authorization') ?? '');
      const auth = await gate(request);
      if (auth instanceof Response) return auth;
      return handler.fetch(request, { authInfo: auth });
    },
  });
  mcpServer.on('request', (req, res) => void node(req, res));

  const project = tempProject('tack-oauth-');
  project.write('tack.json', { mcpServers: { remote: { type: 'http', url: mcpUrl.href } } });
  return {
    as,
    issuer: issuerUrl.href,
    mcpUrl: mcpUrl.href,
    seen,
    project,
    migrate: async () => {
      current = await startAuthorizationServer();
      servers.push(current.server);
      metadata.oauthMetadata = current.oauthMetadata;
      return { as: current.as, issuer: current.issuerUrl.href };
    },
    close: async () => {
      await handler.close();
      await Promise.all([closeServer(mcpServer), ...servers.map(closeServer)]);
      project[Symbol.dispose]();
    },
  };
}

/** A browser in a test: follows the authorization URL (the server approves) back to tack's loopback listener. */
async function follow(url: URL): Promise<{ status: number; body: string }> {
  const answer = await fetch(url, { redirect: 'manual' });
  const location = answer.headers.get('location');
  if (answer.status !== 302 || !location) {
    throw new Error(`authorize answered ${answer.status}: ${await answer.text()}`);
  }
  const back = await fetch(location);
  return { status: back.status, body: await back.text() };
}

/** The user, a moment after tack printed the URL (not inside the SDK's redirect call). */
function user() {
  const urls: URL[] = [];
  const pages: Array<Promise<{ status: number; body: string }>> = [];
  const onAuthorizationUrl = ({ url }: OAuthLoginRequest) => {
    urls.push(url);
    pages.push(new Promise((resolve) => setTimeout(resolve, 30)).then(() => follow(url)));
  };
  return { urls, pages, onAuthorizationUrl };
}

const worlds: World[] = [];
const hosts: McpHost[] = [];

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
  await Promise.all(worlds.splice(0).map((world) => world.close()));
});

async function world(): Promise<World> {
  const w = await startWorld();
  worlds.push(w);
  return w;
}

async function host(w: World, oauth?: OAuthOptions): Promise<McpHost> {
  const h = await startHost(w.project, { remote: { type: 'http', url: w.mcpUrl } }, oauth ? { oauth } : {});
  hosts.push(h);
  return h;
}

async function storedTokens(w: World) {
  const store = TackStore.open(w.project.load().paths.storeFile);
  try {
    return await store.oauth.listTokens();
  } finally {
    store.close();
  }
}

async function whoami(h: McpHost): Promise<string> {
  const result = await h.callTool('mcp__remote__whoami', { text: 'hello' });
  const [first] = result.content ?? [];
  return first?.type === 'text' ? first.text : JSON.stringify(result);
}

/** Logs in once through an interactive host, then closes it: the state every later test starts from. */
async function loggedIn(w: World) {
  const browser = user();
  const first = await host(w, { interactive: true, onAuthorizationUrl: browser.onAuthorizationUrl });
  expect(first.servers()[0]).toMatchObject({ status: 'connected' });
  await first.close();
  return browser;
}

describe('OAuth for remote servers', () => {
  it('runs the login on first connect and keeps the tokens in the store', async () => {
    const w = await world();
    const browser = user();
    const h = await host(w, { interactive: true, onAuthorizationUrl: browser.onAuthorizationUrl });

    expect(h.servers()[0]).toMatchObject({ status: 'connected', error: undefined });
    expect(browser.urls).toHaveLength(1); // one URL, even though the era probe and the connect both met the 401
    const url = browser.urls[0]!;
    expect(url.origin).toBe(new URL(w.issuer).origin);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(w.mcpUrl);
    expect(new URL(url.searchParams.get('redirect_uri')!).hostname).toBe('127.0.0.1');
    expect(await browser.pages[0]).toMatchObject({ status: 200, body: expect.stringContaining('Logged in') });
    expect(w.as.counts).toMatchObject({
      registrations: 1,
      authorizations: 1,
      codeExchanges: 1,
      refreshes: 0,
    });

    const text = await whoami(h);
    expect(text).toMatch(/^hello from [\w-]+$/);
    expect(w.seen.at(-1)).toMatch(/^Bearer at-/);

    const [record, ...more] = await storedTokens(w);
    expect(more).toEqual([]);
    expect(record).toMatchObject({
      issuer: w.issuer,
      resource: w.mcpUrl,
      server: 'remote',
      tokens: {
        access_token: w.seen.at(-1)!.slice('Bearer '.length),
        refresh_token: expect.stringMatching(/^rt-/),
      },
    });
    expect(record!.expiresAt).toBeGreaterThan(Date.now() + 3500_000);
    // The loopback listener is gone once the login is done.
    await expect(fetch(url.searchParams.get('redirect_uri')!)).rejects.toThrow();
  });

  it('refuses a callback that does not carry the state of the login it waits for', async () => {
    const w = await world();
    const pages: Array<{ status: number; body: string }> = [];
    const h = await host(w, {
      interactive: true,
      onAuthorizationUrl: async ({ url }) => {
        const forged = new URL(url.searchParams.get('redirect_uri')!);
        forged.searchParams.set('code', 'stolen');
        forged.searchParams.set('state', 'not-the-state');
        const answer = await fetch(forged);
        pages.push({ status: answer.status, body: await answer.text() });
        setTimeout(() => void follow(url), 10);
      },
    });
    expect(pages[0]).toMatchObject({
      status: 400,
      body: expect.stringContaining('not waiting for this login'),
    });
    expect(h.servers()[0]?.status).toBe('connected');
    expect(w.as.counts.codeExchanges).toBe(1);
  });

  it('reuses the stored tokens in a new host, without a new login', async () => {
    const w = await world();
    await loggedIn(w);
    const before = { ...w.as.counts };
    const second = await host(w); // not interactive: a login would fail it
    expect(second.servers()[0]).toMatchObject({ status: 'connected' });
    expect(await whoami(second)).toMatch(/^hello from /);
    expect(w.as.counts).toEqual(before);
  });

  it('refreshes an expired access token with the refresh token and saves the new tokens', async () => {
    const w = await world();
    await loggedIn(w);
    const [old] = await storedTokens(w);
    w.as.expireAccessTokens();

    // A new process: the stored access token is refused, the SDK refreshes, tack saves the new pair.
    const second = await host(w);
    expect(second.servers()[0]).toMatchObject({ status: 'connected' });
    expect(w.as.counts).toMatchObject({ authorizations: 1, codeExchanges: 1, refreshes: 1 });
    const [renewed] = await storedTokens(w);
    expect(renewed!.tokens.access_token).not.toBe(old!.tokens.access_token);
    expect(renewed!.tokens.refresh_token).not.toBe(old!.tokens.refresh_token); // rotated, and the new one kept
    expect(renewed!.updatedAt).toBeGreaterThanOrEqual(old!.updatedAt);

    // Expiry in the middle of a session: the call is answered after a refresh, not an error.
    w.as.expireAccessTokens();
    expect(await whoami(second)).toMatch(/^hello from /);
    expect(w.as.counts).toMatchObject({ authorizations: 1, refreshes: 2 });
    const [latest] = await storedTokens(w);
    expect(w.seen.at(-1)).toBe(`Bearer ${latest!.tokens.access_token}`);
  });

  it('follows the server to a new authorization server: discovers it afresh, registers there and logs in', async () => {
    const w = await world();
    const browser = user();
    const h = await host(w, { interactive: true, onAuthorizationUrl: browser.onAuthorizationUrl });
    expect(await whoami(h)).toMatch(/^hello from /);
    const moved = await w.migrate();

    // The old server's token is refused. Discovery cached from the first login would send tack back to the old
    // server (a refresh there, refused again); dropped, it finds the new one. The login starts during this call,
    // which fails: a connection waits for a login only while connecting.
    await h.callTool('mcp__remote__whoami', { text: 'hello' }).catch(() => {});
    expect(browser.urls).toHaveLength(2);
    expect(browser.urls[1]!.origin).toBe(new URL(moved.issuer).origin);
    expect(await browser.pages[1]).toMatchObject({ status: 200, body: expect.stringContaining('Logged in') });

    expect(await whoami(h)).toMatch(/^hello from /);
    expect(moved.as.counts).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 });
    expect(w.as.counts).toMatchObject({ registrations: 1, authorizations: 1, refreshes: 0 });
    expect((await storedTokens(w)).map((record) => record.issuer)).toContain(moved.issuer);
  });

  it('fails a non-interactive connect without tokens with an error that says to run tack auth', async () => {
    const w = await world();
    const h = await host(w);
    const [status] = h.servers();
    expect(status).toMatchObject({
      status: 'failed',
      error: {
        code: 'AUTH_REQUIRED',
        message: 'server "remote" answered 401 Unauthorized: it needs an OAuth login (or a token)',
        hint: expect.stringContaining('tack auth remote'),
      },
    });
    // Nothing was registered or stored on the way to that answer.
    expect(w.as.counts).toMatchObject({ registrations: 0, authorizations: 0 });
    expect(await storedTokens(w)).toEqual([]);
    await expect(h.callTool('mcp__remote__whoami', { text: 'x' })).rejects.toMatchObject({
      message: expect.stringContaining('needs an OAuth login'),
      subject: { server: 'remote' },
      hint: expect.stringContaining('tack auth remote'),
    });
  });

  it('leaves OAuth alone for an entry that turns it off or sends its own Authorization header', async () => {
    const w = await world();
    w.project.env.TACK_TEST_CLIENT = 'pre-registered';
    const config = w.project.config({
      off: { type: 'http', url: w.mcpUrl, oauth: false },
      own: { type: 'http', url: w.mcpUrl, headers: { authorization: 'Bearer static' } },
      set: {
        type: 'sse',
        url: w.mcpUrl,
        oauth: { clientId: '${TACK_TEST_CLIENT}', scopes: ['mcp:tools'], callbackPort: 8765 },
      },
      plain: { type: 'http', url: w.mcpUrl },
    });
    const oauth = Object.fromEntries(
      config.servers.map((server) => [server.name, server.transport === 'stdio' ? null : server.oauth]),
    );
    expect(oauth).toEqual({
      off: false,
      own: false,
      set: { clientId: 'pre-registered', scopes: ['mcp:tools'], callbackPort: 8765 },
      plain: {},
    });

    const off = await startHost(w.project, { off: { type: 'http', url: w.mcpUrl, oauth: false } });
    hosts.push(off);
    expect(off.servers()[0]).toMatchObject({ status: 'failed', error: { code: 'SERVER_START_FAILED' } });
    expect(w.as.counts.registrations).toBe(0);
  });

  it('logs in, lists and logs out through the tack CLI', { timeout: 30_000 }, async () => {
    const w = await world();
    const { project } = w;
    const login = spawn(process.execPath, [BIN, 'auth', 'remote', '--no-open'], {
      cwd: project.dir,
      env: project.env,
    });
    let stderr = '';
    let stdout = '';
    let followed: Promise<{ status: number; body: string }> | undefined;
    login.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    login.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = /https?:\/\/\S+\/authorize\?\S+/.exec(stderr)?.[0];
      if (url && !followed) followed = follow(new URL(url));
    });
    const code = await new Promise<number | null>((resolve) => login.on('close', resolve));
    expect({ code, stderr }).toMatchObject({
      code: 0,
      stderr: expect.stringContaining('Log in to "remote"'),
    });
    expect(stdout).toContain(`logged in to "remote" (authorization server ${w.issuer})`);
    expect(await followed).toMatchObject({ status: 200 });

    const list = await tack(['auth', '--list'], { cwd: project.dir, env: project.env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^remote\s+http:\/\/127\.0\.0\.1:\d+\/mcp\s+http:\/\/127\.0\.0\.1:\d+\/\s+valid \d+ min\s+yes/m,
    );
    const [record] = await storedTokens(w);
    expect(list.stdout).not.toContain(record!.tokens.access_token);
    expect(list.stdout).not.toContain(record!.tokens.refresh_token);

    const logout = await tack(['auth', '--logout', 'remote'], { cwd: project.dir, env: project.env });
    expect(logout).toMatchObject({ code: 0, stdout: expect.stringContaining('logged out of "remote"') });
    expect(await storedTokens(w)).toEqual([]);
    const after = await tack(['auth', '--list'], { cwd: project.dir, env: project.env });
    expect(after.stdout).toContain('No OAuth logins stored');

    const h = await host(w);
    expect(h.servers()[0]?.error?.code).toBe('AUTH_REQUIRED');
  });
});
