import type { ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/client';
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { ServerContext } from '@modelcontextprotocol/server';

/**
 * Everything tack does to the MCP SDK beyond its public API, in one place. Each function below leans on a part
 * the SDK does not promise to keep; test/mcp/sdk-internals.test.ts pins the versions these were written for and
 * checks every part's shape, so an upgrade that moves one fails there first. docs/sdk-gaps.md says what each
 * works around and the public API that would replace it.
 */

/** The installed SDK versions these patches were written and checked against. */
export const SDK_VERSIONS = {
  '@modelcontextprotocol/client': '2.4.0',
  '@modelcontextprotocol/server': '2.4.0',
} as const;

/** What tack's replacement must offer in place of the stdio transport's `_readBuffer` (read-buffer.ts). */
export interface StdioReadBuffer {
  append(chunk: Buffer): void;
  readMessage(): unknown;
  clear(): void;
}

/**
 * Replaces a stdio transport's private read buffer. When `_readBuffer` does not have the expected shape (an
 * SDK that renamed or reshaped it), the SDK's own buffer is kept and false returned: slower, still correct.
 */
export function replaceStdioReadBuffer(transport: StdioClientTransport, buffer: StdioReadBuffer): boolean {
  const holder = transport as unknown as { _readBuffer?: { append?: unknown; readMessage?: unknown } };
  if (
    typeof holder._readBuffer?.append !== 'function' ||
    typeof holder._readBuffer.readMessage !== 'function'
  )
    return false;
  (holder as { _readBuffer: StdioReadBuffer })._readBuffer = buffer;
  return true;
}

/**
 * The child process a started stdio transport spawned (its private `_process`); undefined before `start()`,
 * and on an SDK that renamed it (tack then loses its exit and stdout diagnostics but keeps working).
 */
export function stdioChildProcess(transport: StdioClientTransport): ChildProcess | undefined {
  const child = (transport as unknown as { _process?: unknown })._process;
  return typeof child === 'object' && child !== null && 'pid' in child ? (child as ChildProcess) : undefined;
}

type MessageHandler = NonNullable<Transport['onmessage']>;

/**
 * Puts `intercept` in front of whatever handler the SDK assigns to `transport.onmessage`, before or after this
 * call; `intercept` gets each message and a getter of the SDK's handler as it is when called (it can be
 * reassigned while a message waits, e.g. by the era probe).
 * The SDK installs its handler by assigning the property (and keeps the exact class of a stdio transport: it
 * probes eras on a sibling of that class), so this is an accessor on the one instance, not a wrapper object.
 */
export function interceptOnMessage(
  transport: Transport,
  intercept: (
    message: Parameters<MessageHandler>[0],
    extra: Parameters<MessageHandler>[1],
    handler: () => Transport['onmessage'],
  ) => void,
): void {
  let handler: Transport['onmessage'];
  const wrapped: MessageHandler = (message, extra) => intercept(message, extra, () => handler);
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => (handler ? wrapped : undefined),
    set: (value: Transport['onmessage']) => {
      handler = value;
    },
  });
}

/** The parts of the SDK's request context a gateway call uses (servers/gateway/interaction.ts). */
export const SERVED_REQUEST_KEYS = [
  'signal',
  '_meta',
  'envelope',
  'inputResponses',
  'requestState',
  'notify',
  'elicitInput',
  'requestSampling',
  'send',
] as const satisfies ReadonlyArray<keyof ServerContext['mcpReq']>;

export type ServedRequest = Pick<ServerContext['mcpReq'], (typeof SERVED_REQUEST_KEYS)[number]>;

/**
 * A request context built without an SDK instance (the HTTP fast path answers a request the SDK never saw). The
 * SDK exports no constructor for one and its method types are generic over schemas, so the parts are checked
 * by name here and by the contract test at run time, not by the compiler.
 */
export function servedRequestContext(parts: { [K in keyof ServedRequest]: unknown }): {
  mcpReq: ServedRequest;
} {
  return { mcpReq: parts as unknown as ServedRequest };
}
