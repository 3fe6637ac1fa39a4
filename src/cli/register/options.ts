import type { Command } from 'commander';
import { TackError } from '../../errors.js';

/** The options every command's entry point takes, wherever on the line they were given. */
export interface CliOptions {
  config?: string;
  json?: boolean;
  server?: string;
  trustProject?: boolean;
  allowChanged?: boolean;
}

/** optsWithGlobals() merges the options given before the command (the program's) with its own. */
export function optionsOf(cmd: Command): CliOptions {
  const raw = cmd.optsWithGlobals<Record<string, unknown>>();
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    ...(text(raw.config) ? { config: text(raw.config) } : {}),
    ...(raw.json === true ? { json: true } : {}),
    ...(text(raw.server) ? { server: text(raw.server) } : {}),
    ...(raw.trustProject === true ? { trustProject: true } : {}),
    ...(raw.allowChanged === true ? { allowChanged: true } : {}),
  };
}

/** An integer option's value: undefined when not given, a usage error (exit 2) unless it is above 0. */
export function positive(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new TackError('USAGE', `--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

/** The parser of an option given once per value (`-e A=1 -e B=2`); its default is `[]`. */
export const repeated = (value: string, previous: string[]): string[] => [...previous, value];

export const withAllowChanged = (cmd: Command): Command =>
  cmd.option(
    '--allow-changed',
    'use it even when its definition is held back (changed since approved, or flagged by the scan), this once',
  );

export const withServerFilter = (cmd: Command): Command => cmd.option('--server <name>', 'only this server');

export const withHttp = (cmd: Command): Command =>
  cmd.option(
    '--http <[host:]port>',
    'serve Streamable HTTP on this address instead of stdio (host defaults to 127.0.0.1)',
  );
