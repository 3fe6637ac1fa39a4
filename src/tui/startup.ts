import type { McpHost } from '../mcp/host.js';

/** One configured server as the status line shows it while the chat starts. */
export interface ServerProgressRow {
  name: string;
  status: string;
}

/**
 * The MCP servers coming up while the session starts: the chat is drawn at once and this says, live, which
 * servers are connected and which are still starting. It is fed the host as soon as startAgent makes it (onHost)
 * and follows the host's status events; until then the session is opening its store and records.
 */
export class ServerProgress {
  #host: McpHost | undefined;
  #off: (() => void) | undefined;
  readonly #listeners = new Set<() => void>();

  get host(): McpHost | undefined {
    return this.#host;
  }

  attach(host: McpHost): void {
    this.#off?.();
    this.#host = host;
    this.#off = host.on((event) => {
      if (event.type === 'status') this.#changed();
    });
    this.#changed();
  }

  /** The host is the session's from now on (it is closed with it): stop following it. */
  detach(): void {
    this.#off?.();
    this.#off = undefined;
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  rows(): ServerProgressRow[] {
    return (this.#host?.servers() ?? []).map((s) => ({ name: s.name, status: s.status }));
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}

const MARK: Record<string, string> = { connected: '✓', failed: '✗', disabled: '-', closed: '✗' };

/**
 * The status line's servers part while the session starts: `connecting 2/3: notes ✓ weather ✓ cat …`, each
 * server marked as it settles (✓ up, ✗ failed, - disabled, … still starting); `starting…` before the host exists.
 */
export function connectingText(rows: readonly ServerProgressRow[]): string {
  if (rows.length === 0) return 'starting…';
  const settled = rows.filter((r) => r.status !== 'connecting' && r.status !== 'idle').length;
  const marks = rows.map((r) => `${r.name} ${MARK[r.status] ?? '…'}`).join(' ');
  return `connecting ${settled}/${rows.length}: ${marks}`;
}
