import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  FetchLike,
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { HttpServerConfig } from '../config/load.js';
import type { OAuthSettings } from '../config/schema.js';
import { errorMessage, TackError } from '../errors.js';
import type { OAuthCredentials, OAuthTokenRecord } from '../store/oauth-credentials.js';
import { requestTarget } from '../util/request-target.js';
import { VERSION } from '../version.js';

/** What the user is shown when a server needs a login. */
export interface OAuthLoginRequest {
  server: string;
  /** The authorization server's page to open in a browser; it sends the browser back to tack's loopback listener. */
  url: URL;
}

/** How a host handles servers that ask for OAuth (HostOptions.oauth). */
export interface OAuthOptions {
  /**
   * Whether a server without usable tokens may start a browser login: only when a person is there to log in.
   * Default false: such a server fails with AUTH_REQUIRED, whose hint names `tack auth <server>`. Stored tokens
   * are used and refreshed either way.
   */
  interactive?: boolean | undefined;
  /**
   * Shows the user the authorization URL (the CLI prints and opens it; tests follow it). Default: a line on
   * stderr. The login goes on once the browser comes back to the loopback listener, whether or not this returns.
   */
  onAuthorizationUrl?: ((request: OAuthLoginRequest) => void | Promise<void>) | undefined;
  /** How long to wait for the browser to come back (default 5 minutes). */
  loginTimeoutMs?: number | undefined;
  /** Ignore stored tokens and log in afresh (`tack auth <server>`); the old ones are replaced only on success. */
  forceLogin?: boolean | undefined;
}

export const DEFAULT_LOGIN_TIMEOUT_MS = 5 * 60_000;

/** The key tokens are stored under: the MCP endpoint without query or fragment, as tokens are minted for it. */
export function oauthResource(url: string | URL): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/** What the loopback listener serves the login on; an RFC 8252 loopback redirect, never `localhost` (DNS). */
const CALLBACK_PATH = '/callback';
/**
 * The redirect URL a non-interactive provider reports. The SDK treats a provider without one as a machine
 * client (client_credentials); this one never reaches an authorization server, since a non-interactive
 * provider refuses before registering or redirecting.
 */
const UNBOUND_REDIRECT = `http://127.0.0.1${CALLBACK_PATH}`;

interface PendingLogin {
  promise: Promise<void>;
  resolve(): void;
  reject(error: TackError): void;
  /** The code is being redeemed (one browser callback only; a reload gets the same answer). */
  finishing: Promise<CallbackOutcome> | undefined;
  /** Done, one way or the other; a later 401 starts a new login. */
  settled: boolean;
}

interface CallbackOutcome {
  status: number;
  title: string;
  text: string;
}

/**
 * The SDK's OAuthClientProvider for one remote server, backed by tack's store. The SDK does the protocol
 * (discovery, dynamic client registration, PKCE, code exchange, refresh when a request answers 401); this class
 * keeps what it learns: registrations and tokens in SQLite per issuer and resource, the PKCE verifier, state and
 * discovery in memory for the one login they belong to. The browser comes back to a loopback listener on
 * 127.0.0.1, bound only once the server has answered 401 or 403, and the login completes when it does.
 */
export class TackOAuthProvider implements OAuthClientProvider {
  readonly server: string;
  readonly resource: string;
  readonly #settings: OAuthSettings;
  readonly #credentials: () => OAuthCredentials;
  readonly #options: OAuthOptions;
  readonly #note: (message: string) => void;
  #listener: LoopbackListener | undefined;
  #binding: Promise<LoopbackListener> | undefined;
  #state: string | undefined;
  #codeVerifier: string | undefined;
  #discovery: OAuthDiscoveryState | undefined;
  /** The issuer the SDK last named; invalidateCredentials gets none. */
  #issuer: string | undefined;
  #login: PendingLogin | undefined;
  #loginRequired: TackError | undefined;
  /** Whether this provider saved tokens: with forceLogin, stored ones count only after that. */
  #saved = false;
  #finishAuth: ((params: URLSearchParams) => Promise<void>) | undefined;
  /** Refresh grants in flight or just answered, by refresh token (see #refreshOnce). */
  readonly #refreshes = new Map<string, Promise<Response>>();
  /** The refresh token the authorization server last refused. */
  #refused: string | undefined;

  constructor(
    config: Pick<HttpServerConfig, 'name' | 'url' | 'oauth'>,
    credentials: () => OAuthCredentials,
    options: OAuthOptions = {},
    note: (message: string) => void = () => {},
  ) {
    this.server = config.name;
    this.resource = oauthResource(config.url);
    this.#settings = config.oauth || {};
    this.#credentials = credentials;
    this.#options = options;
    this.#note = note;
  }

  /** The AUTH_REQUIRED error of the last attempt, when a login was needed and the host is not interactive. */
  get loginRequired(): TackError | undefined {
    return this.#loginRequired;
  }

  /** Whether the user has been sent to the authorization URL and the login has not been awaited yet. */
  get loginStarted(): boolean {
    return this.#login !== undefined;
  }

  /** Forget the outcome of the previous connect attempt. */
  beginAttempt(): void {
    this.#loginRequired = undefined;
  }

  /** The transport whose `finishAuth` redeems the code: the SDK keeps the challenge's resource metadata and scope there. */
  attach(transport: { finishAuth(params: URLSearchParams): Promise<void> }): void {
    this.#finishAuth = (params) => transport.finishAuth(params);
  }

  /**
   * The fetch the transport uses. The SDK reads `redirectUrl` synchronously as its flow starts, right after a
   * 401 (or a 403 asking for more scope), so that is when the listener is bound: never for a server that does
   * not ask, never in a host that cannot log in.
   */
  wrapFetch(base: FetchLike = fetch): FetchLike {
    return async (url, init) => {
      const refreshToken = refreshGrantOf(init);
      if (refreshToken !== undefined) return this.#refreshOnce(refreshToken, () => base(url, init));
      const response = await base(url, init);
      // A refused access token may mean the resource moved to another authorization server (SEP-2352). The
      // SDK reuses the discovery it cached and leaves dropping it to the host ("on repeated 401s"): without
      // this, tack would refresh at, and log in with, the old server for good. Kept while a login is pending:
      // its callback leg is bound to the server it was sent to.
      if (response.status === 401 && bearerOf(init) && !this.#waiting()) this.#discovery = undefined;
      if ((response.status === 401 || response.status === 403) && this.#options.interactive) {
        await this.#bind();
      }
      return response;
    };
  }

  /**
   * Waits for the login the SDK started (the browser coming back, the code redeemed), then the caller connects
   * afresh with the new tokens. Rejects with AUTH_FAILED on a refusal, a failed exchange or the timeout.
   */
  async completeLogin(): Promise<void> {
    const login = this.#login;
    if (!login) return;
    const timeoutMs = this.#options.loginTimeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS;
    // This timer, unlike the unref'd listener, keeps a process alive that has nothing else to wait for.
    const timer = setTimeout(
      () =>
        login.reject(
          new TackError(
            'AUTH_FAILED',
            `server "${this.server}": no OAuth login within ${Math.round(timeoutMs / 1000)} s`,
            {
              subject: { server: this.server },
              hint: `Open the URL tack printed and finish the login, or run \`tack auth ${this.server}\` again.`,
            },
          ),
        ),
      timeoutMs,
    );
    try {
      await login.promise;
    } finally {
      clearTimeout(timer);
      if (this.#login === login) this.#login = undefined;
      await this.#closeListener();
    }
  }

  /** Stops waiting for a login and closes the listener (the host is closing). */
  async close(): Promise<void> {
    this.#login?.reject(
      new TackError('AUTH_FAILED', `server "${this.server}": the OAuth login was cancelled`, {
        subject: { server: this.server },
      }),
    );
    this.#login = undefined;
    await this.#closeListener();
  }

  /** Closes a listener bound for a 401 that needed no login after all (stored tokens, a refresh). */
  async release(): Promise<void> {
    if (this.#waiting()) return;
    this.#login = undefined;
    await this.#closeListener();
  }

  // ---- OAuthClientProvider ----

  get redirectUrl(): string {
    if (this.#listener) return this.#listener.url;
    const port = this.#settings.callbackPort;
    return port ? `http://127.0.0.1:${port}${CALLBACK_PATH}` : UNBOUND_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'tack',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A CLI cannot keep a secret: a public client, held to its word by PKCE (RFC 8252 §8.4).
      token_endpoint_auth_method: 'none',
      software_id: 'tack',
      software_version: VERSION,
      ...(this.#settings.scopes?.length ? { scope: this.#settings.scopes.join(' ') } : {}),
    };
  }

  state(): string {
    // A second redirect while the user is already at the first URL keeps that URL valid (see saveCodeVerifier).
    if (!this.#waiting() || !this.#state) this.#state = randomBytes(24).toString('base64url');
    return this.#state;
  }

  async clientInformation(
    ctx?: OAuthClientInformationContext,
  ): Promise<StoredOAuthClientInformation | undefined> {
    const configured = this.#configuredClient();
    if (configured) return configured;
    if (!ctx) return undefined;
    this.#issuer = ctx.issuer;
    const tokens = await this.#usableTokens(ctx.issuer);
    // Without tokens only a login helps: refuse before the SDK registers a client nobody would use.
    if (!this.#options.interactive && !tokens) throw this.#requireLogin();
    const record = await this.#credentials().getClient(ctx.issuer, this.resource);
    if (!record) return undefined;
    // A registration names the loopback URL it was made with, and an authorization server may hold it to that
    // port (RFC 8252 §7.3 says it should not). A login from another port registers afresh, unless refresh
    // tokens are bound to this client id.
    const registered = 'redirect_uris' in record.client ? record.client.redirect_uris : undefined;
    const url = this.#listener?.url;
    if (url && registered && !registered.includes(url) && !tokens?.tokens.refresh_token) return undefined;
    return record.client;
  }

  async saveClientInformation(
    client: StoredOAuthClientInformation,
    ctx?: OAuthClientInformationContext,
  ): Promise<void> {
    if (this.#settings.clientId) return; // from the configuration; nothing to keep
    const issuer = ctx?.issuer ?? client.issuer;
    if (!issuer) return;
    await this.#credentials().putClient(issuer, this.resource, client);
    this.#note(`registered with ${issuer} as OAuth client ${client.client_id}`);
  }

  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    if (ctx) this.#issuer = ctx.issuer;
    return (await this.#usableTokens(ctx?.issuer))?.tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    const issuer = ctx?.issuer ?? tokens.issuer ?? this.#issuer;
    if (!issuer) throw new Error('the SDK saved OAuth tokens without naming their issuer');
    this.#issuer = issuer;
    await this.#credentials().putTokens({
      issuer,
      resource: this.resource,
      server: this.server,
      tokens,
      expiresAt: tokens.expires_in === undefined ? undefined : Date.now() + tokens.expires_in * 1000,
    });
    this.#saved = true;
    this.#note(`OAuth tokens from ${issuer} saved${tokens.refresh_token ? ' (with a refresh token)' : ''}`);
    if (!this.#waiting()) void this.#closeListener();
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (!this.#options.interactive) throw this.#requireLogin();
    if (this.#waiting()) return; // the user already has a URL; a second one would only confuse
    this.#login = pendingLogin();
    this.#login.promise.catch(() => {}); // awaited by completeLogin, maybe never (a request, not a connect)
    this.#note('waiting for the OAuth login in the browser');
    const show = this.#options.onAuthorizationUrl ?? showOnStderr;
    try {
      await show({ server: this.server, url: authorizationUrl });
    } catch (error) {
      this.#note(`showing the authorization URL failed: ${errorMessage(error)}`);
    }
  }

  saveCodeVerifier(codeVerifier: string): void {
    // The verifier belongs to the URL the user was shown: keep it while that login is pending.
    if (this.#waiting() && this.#codeVerifier) return;
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.#codeVerifier)
      throw new Error('no PKCE code verifier: the login was not started by this process');
    return this.#codeVerifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const store = this.#credentials();
    if (scope === 'all' || scope === 'tokens') {
      // Another process may have refreshed first (the old refresh token is then refused): its tokens are good.
      const stored = (await store.getTokens(this.resource, this.#issuer))?.tokens.refresh_token;
      if (scope === 'all' || this.#refused === undefined || stored === this.#refused) {
        await store.deleteTokens(this.resource, this.#issuer);
        this.#note('the authorization server refused the stored OAuth tokens; they were removed');
      }
    }
    if ((scope === 'all' || scope === 'client') && !this.#settings.clientId) {
      await store.deleteClients(this.resource, this.#issuer);
    }
    if (scope === 'all' || scope === 'verifier') this.#codeVerifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
  }

  // ---- internals ----

  /** Whether the user holds an authorization URL whose answer has not come back yet. */
  #waiting(): boolean {
    return this.#login !== undefined && !this.#login.settled;
  }

  #configuredClient(): StoredOAuthClientInformation | undefined {
    const { clientId, clientSecret } = this.#settings;
    if (!clientId) return undefined;
    return { client_id: clientId, ...(clientSecret ? { client_secret: clientSecret } : {}) };
  }

  async #usableTokens(issuer: string | undefined): Promise<OAuthTokenRecord | undefined> {
    if (this.#options.forceLogin && !this.#saved) return undefined;
    return this.#credentials().getTokens(this.resource, issuer);
  }

  #requireLogin(): TackError {
    // The server answered 401 Unauthorized; whether it speaks OAuth is only known once a login is tried, and a
    // server that wants a fixed token says 401 too: the message names both ways out.
    this.#loginRequired ??= new TackError(
      'AUTH_REQUIRED',
      `server "${this.server}" answered 401 Unauthorized: it needs an OAuth login (or a token)`,
      {
        subject: { server: this.server },
        hint: `Run \`tack auth ${this.server}\` to log in; tack keeps the tokens in its store and refreshes them. If the server expects a fixed token instead, set "headers": {"Authorization": "Bearer \${TOKEN}"} in its entry.`,
      },
    );
    return this.#loginRequired;
  }

  #bind(): Promise<LoopbackListener> {
    this.#binding ??= LoopbackListener.open(this.server, this.#settings.callbackPort ?? 0, (params) =>
      this.#onCallback(params),
    ).then(
      (listener) => {
        this.#listener = listener;
        return listener;
      },
      (error: unknown) => {
        this.#binding = undefined;
        throw error;
      },
    );
    return this.#binding;
  }

  async #closeListener(): Promise<void> {
    const listener = this.#listener;
    this.#listener = undefined;
    this.#binding = undefined;
    await listener?.close();
  }

  /**
   * One refresh per refresh token. Requests that meet the expired token together (the listen stream, parallel
   * listings) each run the SDK's flow; refresh tokens are single-use where the server rotates them, so the
   * second refresh would be refused and the SDK would throw the new tokens away. The later ones get the first
   * one's answer instead, also for a while after it arrived (they may have read the old token before it did).
   */
  async #refreshOnce(refreshToken: string, run: () => Promise<Response>): Promise<Response> {
    let shared = this.#refreshes.get(refreshToken);
    if (!shared) {
      shared = run();
      this.#refreshes.set(refreshToken, shared);
      const forget = () => this.#refreshes.delete(refreshToken);
      shared.then((response) => {
        if (!response.ok) {
          forget(); // a refusal or an outage is not replayed: the next attempt asks again
          if (response.status === 400) this.#refused = refreshToken;
        } else setTimeout(forget, 60_000).unref();
      }, forget);
    }
    return (await shared).clone();
  }

  /** The browser came back: redeem the code through the SDK (transport.finishAuth) and say how it went. */
  #onCallback(params: URLSearchParams): Promise<CallbackOutcome> {
    const login = this.#login;
    if (!login || login.settled || params.get('state') !== this.#state) {
      return Promise.resolve({
        status: 400,
        title: 'Not this login',
        text: `tack is not waiting for this login (an old link?). Run \`tack auth ${this.server}\` to start again.`,
      });
    }
    login.finishing ??= (async () => {
      try {
        if (!this.#finishAuth) throw new Error('no transport to finish the login with');
        await this.#finishAuth(params);
        login.resolve();
        return {
          status: 200,
          title: 'Logged in',
          text: `tack is logged in to "${this.server}". You can close this tab.`,
        };
      } catch (error) {
        const reason = errorMessage(error);
        login.reject(
          new TackError('AUTH_FAILED', `server "${this.server}": the OAuth login failed: ${reason}`, {
            subject: { server: this.server },
            hint: `Run \`tack auth ${this.server}\` to try again.`,
            cause: error,
          }),
        );
        return {
          status: 400,
          title: 'Login failed',
          text: `The login to "${this.server}" failed: ${reason}`,
        };
      }
    })();
    return login.finishing;
  }
}

/** The refresh token of a token request with `grant_type=refresh_token` (the SDK sends a URLSearchParams body). */
function refreshGrantOf(init: RequestInit | undefined): string | undefined {
  const body = init?.body;
  const params =
    body instanceof URLSearchParams ? body : typeof body === 'string' ? new URLSearchParams(body) : undefined;
  if (params?.get('grant_type') !== 'refresh_token') return undefined;
  return params.get('refresh_token') ?? undefined;
}

/** Whether a request carries an access token (the SDK sets `Authorization: Bearer` on MCP requests). */
function bearerOf(init: RequestInit | undefined): boolean {
  return /^bearer\s/i.test(new Headers(init?.headers).get('authorization') ?? '');
}

function pendingLogin(): PendingLogin {
  let settle!: { resolve: () => void; reject: (error: TackError) => void };
  const promise = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const login: PendingLogin = {
    promise,
    resolve: () => {
      login.settled = true;
      settle.resolve();
    },
    reject: (error) => {
      login.settled = true;
      settle.reject(error);
    },
    finishing: undefined,
    settled: false,
  };
  return login;
}

function showOnStderr(request: OAuthLoginRequest): void {
  process.stderr.write(
    `tack: server "${request.server}" needs a login. Open this URL in a browser:\n  ${request.url.href}\n`,
  );
}

/**
 * The RFC 8252 loopback redirect: an HTTP listener on 127.0.0.1 that takes `GET /callback?code=...&state=...`
 * and answers the browser with how the login went. Unref'd, so a listener left behind never holds a process open.
 */
class LoopbackListener {
  readonly url: string;
  readonly #server: Server;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  static async open(
    serverName: string,
    port: number,
    onCallback: (params: URLSearchParams) => Promise<CallbackOutcome>,
  ): Promise<LoopbackListener> {
    const server = createServer((req, res) => void handle(req, res, onCallback));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      throw new TackError(
        'AUTH_FAILED',
        `server "${serverName}": cannot listen on 127.0.0.1:${port} for the OAuth redirect (${errorMessage(error)})`,
        {
          subject: { server: serverName },
          hint: `Free the port, or set mcpServers.${serverName}.oauth.callbackPort to another one.`,
          cause: error,
        },
      );
    }
    server.unref();
    const { port: bound } = server.address() as AddressInfo;
    return new LoopbackListener(server, `http://127.0.0.1:${bound}${CALLBACK_PATH}`);
  }

  /** Lets an answer being written reach the browser (it says `Connection: close`), then stops. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeIdleConnections();
      setTimeout(() => this.#server.closeAllConnections(), 1000).unref();
    });
  }
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  onCallback: (params: URLSearchParams) => Promise<CallbackOutcome>,
): Promise<void> {
  const url = requestTarget(req.url);
  if (req.method !== 'GET' || url?.pathname !== CALLBACK_PATH) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
    return;
  }
  const outcome = await onCallback(url.searchParams);
  res
    .writeHead(outcome.status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'close',
      // The page is tack's own words and the server's error text, never script.
      'content-security-policy': "default-src 'none'",
    })
    .end(
      `<!doctype html><meta charset="utf-8"><title>tack: ${escapeHtml(outcome.title)}</title>` +
        `<h1>${escapeHtml(outcome.title)}</h1><p>${escapeHtml(outcome.text)}</p>`,
    );
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}
