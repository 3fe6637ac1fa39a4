import type { Client } from '@modelcontextprotocol/client';
import type { TackOAuthProvider } from './oauth.js';

/** A connected client and the attempt that reached it. */
export interface Link {
  client: Client;
  attempt: Attempt;
}

/** How a stdio server's process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export function describeExit(exit: ProcessExit): string {
  return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

/**
 * One try at a link to a server, from its start until the connection moves on: how its process and transport
 * ended, and what stops the work still running for it. What an older attempt reports is ignored through `over`.
 */
export class Attempt {
  exit: ProcessExit | undefined;
  transportError: string | undefined;
  /** The opener calls it when the connected client's link closes, whoever closed it; `closed` settles then. */
  linkClosed: () => void = () => {};
  readonly closed = new Promise<void>((resolve) => {
    this.linkClosed = resolve;
  });
  readonly #ended = new AbortController();
  readonly #stops = new Set<() => Promise<unknown>>();

  /** Whether the connection has moved on from this attempt. */
  get over(): boolean {
    return this.#ended.signal.aborted;
  }

  /** `stop` runs (and is waited for) when the attempt ends, until the returned function takes it back. */
  onEnd(stop: () => Promise<unknown>): () => void {
    this.#stops.add(stop);
    return () => this.#stops.delete(stop);
  }

  /** Ends the attempt; settles once what was still running for it has stopped. */
  end(): Promise<void> {
    this.#ended.abort();
    const stops = [...this.#stops];
    this.#stops.clear();
    return Promise.all(stops.map((stop) => stop())).then(
      () => undefined,
      () => undefined,
    );
  }

  /** Whether the process ended by itself: a failing exit code or a signal tack did not send. */
  get exitedOnItsOwn(): boolean {
    const exit = this.exit;
    return exit !== undefined && (exit.signal ? exit.signal !== 'SIGTERM' : exit.code !== 0);
  }

  /**
   * Why the link broke, in the server's terms: its own exit (a crash) comes first; a clean exit or our SIGTERM
   * after a transport error (a message over the size limit) means the transport error is the story.
   * `fallback` when neither the process nor the transport said anything.
   */
  crashReason<T extends string | undefined>(fallback: T): string | T {
    const exit = this.exit && describeExit(this.exit);
    if (this.exitedOnItsOwn) return `${exit}${this.transportError ? ` (${this.transportError})` : ''}`;
    if (this.transportError) return `was disconnected: ${this.transportError}`;
    return exit ?? fallback;
  }

  /** The login the SDK started, finished in the browser; the end of the attempt during the wait stops it. */
  async awaitLogin(oauth: TackOAuthProvider): Promise<void> {
    const taken = this.onEnd(() => oauth.close());
    try {
      await oauth.completeLogin();
    } finally {
      taken();
    }
  }
}
