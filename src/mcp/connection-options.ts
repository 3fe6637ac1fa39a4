import type { Client, ClientCapabilities, Implementation } from '@modelcontextprotocol/client';
import type { SandboxStatus } from '../sandbox/launch.js';
import type { EraCache } from '../store/era-cache.js';
import type { OAuthCredentials } from '../store/oauth-credentials.js';
import type { ServerConnection } from './connection.js';
import type { OAuthOptions } from './oauth.js';
import type { ResolvedPackage } from './package-resolve.js';
import type { ServerLogLimits } from './server-log.js';
import type { TransportKind } from './transport.js';

/** What a ServerConnection is given, what it reports, and the states it goes through. */

export type ConnectionStatus = 'idle' | 'connecting' | 'connected' | 'failed' | 'disabled' | 'closed';

/** How soon a crashed server is restarted: the first delay and the longest. */
export interface RestartPolicy {
  /** Delay before the first restart after a crash; doubled per consecutive failure, up to maxDelayMs. */
  initialDelayMs: number;
  /**
   * The longest wait between restarts. tack never gives up on a server that crashed after it worked: as long as
   * callers ask for it, it is restarted on their next use, at most this often (an HTTP server is retried in
   * the background at this pace too). A server that never started stays failed until restart().
   */
  maxDelayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
};

export interface ConnectionOptions {
  clientInfo: Implementation;
  eraCache?: EraCache | undefined;
  logDir?: string | undefined;
  /** The project whose logs `logDir` holds, written down in it (ServerLog); absent for a folder given explicitly. */
  logProject?: string | undefined;
  /** How large each server's log may grow; default the defaults of `limits.serverLogBytes` and `serverLogFiles`. */
  logLimits?: ServerLogLimits | undefined;
  restartPolicy?: RestartPolicy | undefined;
  maxMessageBytes?: number | undefined;
  /** The deepest JSON sent or taken in one message (limits.jsonDepth); default 64. */
  jsonDepth?: number | undefined;
  /** Capabilities to declare (elicitation, sampling, ...) when the matching handlers are registered. */
  capabilities?: ClientCapabilities | undefined;
  /** Called on every new SDK client before it connects: register request handlers here. */
  configureClient?: ((client: Client, server: string) => void) | undefined;
  /** OAuth for remote servers that ask for it; without it a 401 is just a failed start. */
  oauth?: { options: OAuthOptions; credentials: () => OAuthCredentials } | undefined;
  /** Called whenever state or a listing changes; `resource-updated` comes with the resource's URI. */
  onChange?: ((connection: ServerConnection, change: ConnectionChange, uri?: string) => void) | undefined;
}

export type ConnectionChange =
  | 'status'
  | 'tools'
  | 'resources'
  | 'prompts'
  | 'diagnostic'
  | 'resource-updated';

/** Everything `tack servers` shows about one server. */
export interface ServerStatus {
  name: string;
  transport: TransportKind;
  status: ConnectionStatus;
  /** Why tack switched a `disabled` server off (e.g. its project is not trusted); absent when its file did. */
  disabledReason?: string;
  era: 'modern' | 'legacy' | undefined;
  protocolVersion: string | undefined;
  serverInfo: Implementation | undefined;
  instructions: string | undefined;
  /** Whether the era came from tack's cache (one process) or a fresh probe. */
  eraSource: 'cache' | 'probe' | undefined;
  counts: { tools: number; resources: number; resourceTemplates: number; prompts: number };
  connectMs: number | undefined;
  restarts: number;
  error: { code: string; message: string; hint: string | undefined; details: readonly string[] } | undefined;
  /** When tack will try again on its own or on next use; absent when it is not waiting. */
  retryAt: number | undefined;
  diagnostics: readonly string[];
  logFile: string | undefined;
  /** The sandbox it runs in: none, configured (not started yet), enforced (with its guarantees) or unenforced. */
  sandbox: SandboxStatus;
  /** What a package runner command ran at the last start (see ServerConnection.package). */
  package?: ResolvedPackage;
}
