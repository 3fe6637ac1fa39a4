import type { ServeConfig } from '../config/load.js';
import { TackError } from '../errors.js';
import type { HttpOptions } from '../servers/serve.js';

/** `--http 8080`, `--http 127.0.0.1:8080`, `--http [::1]:8080`. */
export function parseListen(value: string): HttpOptions {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65_535) {
    throw new TackError('USAGE', `--http expects [host:]port, got ${JSON.stringify(value)}`, {
      hint: 'For example --http 127.0.0.1:8080 (0 picks a free port).',
    });
  }
  const host = match[1]?.replace(/^\[(.*)\]$/, '$1') ?? '127.0.0.1';
  return { host, port };
}

/** `--http` of a tack server command, with the configuration's token and allowed hosts; undefined for stdio. */
export function httpFromOptions(
  listen: string | undefined,
  serve: Pick<ServeConfig, 'token' | 'allowedHosts'>,
): HttpOptions | undefined {
  if (listen === undefined) return undefined;
  return { ...parseListen(listen), token: serve.token, allowedHosts: serve.allowedHosts };
}

/**
 * Keeps a server command running until it should stop: SIGINT/SIGTERM, or for a stdio server the end of
 * stdin (the host closed the pipe).
 */
export function untilStopped(http: boolean): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (!http) process.stdin.once('end', stop).once('close', stop);
  });
}
