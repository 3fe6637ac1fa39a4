import { createRequire } from 'node:module';

/**
 * tack's local error family. Every error says what it concerns (a file and JSON path, a server, a tool), what
 * went wrong and what to do next, so the CLI can print one readable line plus a hint and a library caller can
 * branch on `code`. Wire errors from servers stay the SDK's `ProtocolError`; tack wraps them only where it adds
 * the server or tool they came from.
 */

export type TackErrorCode =
  | 'CONFIG_INVALID'
  | 'CONFIG_UNREADABLE'
  | 'SERVER_START_FAILED'
  | 'SERVER_START_TIMEOUT'
  | 'SERVER_UNAVAILABLE'
  | 'SERVER_CRASHED'
  | 'SERVER_DISABLED'
  | 'AUTH_REQUIRED'
  | 'AUTH_FAILED'
  | 'UNKNOWN_SERVER'
  | 'UNKNOWN_TOOL'
  | 'UNKNOWN_RESOURCE'
  | 'UNKNOWN_PROMPT'
  | 'UNKNOWN_SKILL'
  | 'SKILL_FILE'
  | 'SKILL_SCRIPT'
  | 'KNOWLEDGE_BUNDLE'
  | 'MODEL_UNAVAILABLE'
  | 'MODEL_FAILED'
  | 'SESSION'
  | 'UNKNOWN_CONCEPT'
  | 'REQUEST_FAILED'
  | 'REQUEST_TIMEOUT'
  | 'REQUEST_ABORTED'
  | 'STORE_FAILED'
  | 'PROJECT_UNTRUSTED'
  | 'COMPUTATION_INPUT'
  | 'COMPUTATION_FAILED'
  | 'ATTESTATION_FAILED'
  | 'LIMIT_EXCEEDED'
  | 'DEFINITION_HELD'
  | 'SANDBOX_UNAVAILABLE'
  | 'SANDBOX_FAILED'
  | 'SANDBOX_REFUSED'
  | 'PACKAGE_MISSING'
  | 'USAGE';

/** What an error is about; every field is optional, but the CLI prints whichever are set. */
export interface ErrorSubject {
  file?: string;
  /** JSON path inside `file`, dotted (`mcpServers.docs.url`). */
  path?: string;
  server?: string;
  tool?: string;
  uri?: string;
}

const BRAND = Symbol.for('tack.error');

/** The error every layer throws: a code, what it is about, a hint and details. */
export class TackError extends Error {
  readonly code: TackErrorCode;
  readonly subject: ErrorSubject;
  readonly hint: string | undefined;
  /** Extra lines worth showing (the last stderr lines of a server, every issue of a config file). */
  readonly details: readonly string[];
  readonly [BRAND] = true;

  constructor(
    code: TackErrorCode,
    message: string,
    options: { subject?: ErrorSubject; hint?: string; details?: readonly string[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TackError';
    this.code = code;
    this.subject = options.subject ?? {};
    this.hint = options.hint;
    this.details = options.details ?? [];
  }

  /** Works across two copies of this module (a linked package and its dependent), unlike `instanceof`. */
  static isInstance(value: unknown): value is TackError {
    return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }
}

/** The message of anything thrown, for places that must report an unknown failure as text. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

const require = createRequire(import.meta.url);

function installed(name: string): boolean {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks that the optional packages `feature` needs are installed where tack loads them from (tack's peer
 * dependencies: the chat's Ink and React, the PostgreSQL driver, the OpenTelemetry SDK); else a PACKAGE_MISSING
 * error naming each missing one and the command that installs them. Loads nothing.
 */
export function requirePackages(feature: string, names: readonly string[]): void {
  const missing = names.filter((name) => !installed(name));
  if (missing.length === 0) return;
  const list = missing.length === 1 ? `the package ${missing[0]}` : `the packages ${missing.join(', ')}`;
  throw new TackError(
    'PACKAGE_MISSING',
    `${feature} needs ${list}, which ${missing.length === 1 ? 'is' : 'are'} not installed`,
    {
      hint: `Install ${missing.length === 1 ? 'it' : 'them'} where tack is installed: npm install ${missing.join(' ')} in its project, or npm install -g ${missing.join(' ')} for a global tack.`,
    },
  );
}

/** A CommonJS optional package, loaded synchronously once `requirePackages` found it. */
export function requireOptional<T>(feature: string, name: string): T {
  requirePackages(feature, [name]);
  return require(name) as T;
}
