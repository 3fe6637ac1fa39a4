import type { Client } from '@modelcontextprotocol/client';
import type { GatewayCall } from './interaction.js';

/**
 * The roots the gateway gives an upstream on nobody's behalf: outside any client's turn, for a client that
 * declared no roots or did not answer in time, and always to an upstream that does not follow roots/list_changed.
 * The gateway has none of its own, so a client's folders are never shown to a server for another client's sake.
 */
export const GATEWAY_ROOTS = Object.freeze({ roots: Object.freeze([]) });

/** Whose roots an upstream holds when they are the gateway's own. */
const GATEWAY: object = Object.freeze({ gateway: true });

/** After telling an upstream that roots changed, how long it has to ask for them again. */
export const ROOTS_ASK_WAIT_MS = 2_000;

/** How long the ping that follows an upstream's roots answer may take (roots.ts `answered`). */
const SETTLE_PING_MS = 5_000;

/** How long a client has to answer an upstream's roots/list before the upstream gets the gateway's roots. */
export const ROOTS_ANSWER_WAIT_MS = 10_000;

/**
 * How long a call waits for its turn on an upstream that asks for roots before it fails: one client's slow call
 * must not hold every other client's calls for as long.
 */
export const ROOTS_TURN_WAIT_MS = 60_000;

interface Waiter {
  call: GatewayCall;
  admit(): void;
}

/** Telling the upstream that roots changed, and giving it one client's (or the gateway's) when it asks. */
interface Switch {
  /** The waiter whose turn starts with it; undefined: the turn is over and the upstream gets the gateway's. */
  waiter: Waiter | undefined;
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

/** Whom the answer to one roots/list of the upstream is for, decided when it asks. */
export interface RootsAsk {
  /** The call whose client answers; undefined: the gateway answers (GATEWAY_ROOTS). */
  call: GatewayCall | undefined;
  switch: Switch | undefined;
  session: number;
}

/**
 * The roots one 2025-era upstream session holds. Such a server asks for roots on its connection, which names no
 * call, and may keep the answer for the session (server-everything does): given client A's roots, it would show
 * them to client B. So, once an upstream has asked for roots:
 * - it is first tried: told `notifications/roots/list_changed`, does it ask again within ROOTS_ASK_WAIT_MS? One
 *   that does not (an upstream that "does not follow") gets the gateway's roots from then on, whoever asks: it
 *   might keep one client's answer for the next. Until it has been tried, it gets the gateway's too;
 * - calls from different clients take turns on an upstream that follows (calls from one client run together),
 *   first come first served, a call waiting at most ROOTS_TURN_WAIT_MS for its turn;
 * - before a client's turn the upstream is told roots changed, and the call waits until it has asked again and been
 *   answered with that client's roots (within ROOTS_ANSWER_WAIT_MS, else the gateway's);
 * - when a turn ends the upstream is told again and given the gateway's roots, so between turns it holds no
 *   client's folders (its resource list, say, is shared by every client). An upstream that stops asking again
 *   while it holds a client's roots is disconnected: only a new session forgets them.
 * An answer is given only if the turn it was asked in still stands when the client answers; a late one is
 * dropped for the gateway's. An upstream that never asks for roots is never made to wait.
 */
export class UpstreamRoots {
  readonly #server: string;
  readonly #turnWaitMs: number;
  #client: Client | undefined;
  /** Counts upstream sessions: what was decided in one does not apply to the next. */
  #session = 0;
  /** The upstream has asked for roots in this session. */
  #asks = false;
  /** Whether it asks again when told that roots changed: unknown until tried. */
  #follows: 'unknown' | 'yes' | 'no' = 'unknown';
  /** The client (GatewayCall.owner) whose roots it was last given, or GATEWAY. */
  #holder: object = GATEWAY;
  #switch: Switch | undefined;
  /** Calls admitted and not yet ended, per client. */
  readonly #running = new Map<object, number>();
  readonly #queue: Waiter[] = [];

  constructor(server: string, turnWaitMs = ROOTS_TURN_WAIT_MS) {
    this.#server = server;
    this.#turnWaitMs = turnWaitMs;
  }

  /** A new connection to the upstream: a new session, which holds no one's roots and has asked for nothing. */
  attach(client: Client): void {
    this.#client = client;
    this.#session++;
    this.#asks = false;
    this.#follows = 'unknown';
    this.#holder = GATEWAY;
    if (this.#switch) this.#finish(this.#switch);
  }

  /** Waits for `call`'s turn; rejects when the call is aborted meanwhile, or waited ROOTS_TURN_WAIT_MS. */
  enter(call: GatewayCall): Promise<void> {
    if (!this.#takesTurns() && this.#queue.length === 0) {
      this.#count(call.owner, 1);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const signal = call.abort.signal;
      const leave = (reason: unknown) => {
        const index = this.#queue.indexOf(waiter);
        // Out of the queue already: admitted, or its turn is being switched to (which always ends in admitting).
        if (index < 0) return;
        this.#queue.splice(index, 1);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        reject(reason);
        this.#pumpSoon();
      };
      const onAbort = () => leave(signal.reason);
      const waiter: Waiter = {
        call,
        admit: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      if (signal.aborted) return reject(signal.reason);
      const timer = setTimeout(
        () =>
          leave(
            new Error(
              `"${this.#server}" asks clients for their roots, so it serves one client at a time, and another client's call has held it for over ${this.#turnWaitMs / 1000} s: try again later`,
            ),
          ),
        this.#turnWaitMs,
      );
      timer.unref();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      this.#pumpSoon();
    });
  }

  /** `call` (admitted by `enter`) has ended. */
  leave(call: GatewayCall): void {
    this.#count(call.owner, -1);
    this.#pumpSoon();
  }

  /** The upstream asks for roots: whose answer it gets, from the calls in flight to it. */
  ask(inFlight: readonly GatewayCall[]): RootsAsk {
    this.#asks = true;
    const session = this.#session;
    const current = this.#switch;
    if (current && !current.done) {
      clearTimeout(current.timer);
      current.timer = undefined;
      this.#follows = 'yes';
      return { call: current.waiter?.call, switch: current, session };
    }
    if (this.#follows !== 'yes') return { call: undefined, switch: undefined, session };
    // A turn: the calls in flight are one client's; any of them answers for it, one not waiting for another
    // answer first.
    const live = inFlight.filter((c) => !c.abort.signal.aborted && this.#running.has(c.owner));
    const owners = new Set(live.map((c) => c.owner));
    const call = owners.size === 1 ? (live.find((c) => !c.waiting) ?? live[0]) : undefined;
    return { call, switch: undefined, session };
  }

  /** Whether a client's answer to `asked` may still be given: the turn it was asked in still stands. */
  stands(asked: RootsAsk): boolean {
    if (asked.session !== this.#session || !asked.call || asked.call.abort.signal.aborted) return false;
    if (asked.switch) return asked.switch === this.#switch && !asked.switch.done;
    return this.#running.size === 1 && this.#running.has(asked.call.owner);
  }

  /** The upstream was given `call`'s client's roots (or, with undefined, the gateway's) for `asked`. */
  answered(asked: RootsAsk, call: GatewayCall | undefined): void {
    if (asked.session !== this.#session) return;
    this.#holder = call?.owner ?? GATEWAY;
    const current = asked.switch;
    if (!current) return;
    // The answer is sent once the handler's promise settles (before this timer fires). A server takes it in on
    // its own time (a continuation or two after the response arrives), so the call waits for a ping sent after
    // the answer: by the time the server answers that, it has taken in the roots.
    const client = this.#client;
    setImmediate(() => {
      if (!client) return this.#finish(current);
      void client
        .ping({ timeout: SETTLE_PING_MS })
        .catch(() => {})
        .finally(() => this.#finish(current));
    });
  }

  /** A client says its roots changed: an upstream in that client's turn is told, and asks that client again. */
  changed(owner: object): void {
    if (this.#holder === owner && !this.#switch && this.#running.has(owner)) this.#tell();
  }

  #takesTurns(): boolean {
    return this.#asks && this.#follows !== 'no';
  }

  #count(owner: object, by: number): void {
    const count = (this.#running.get(owner) ?? 0) + by;
    if (count > 0) this.#running.set(owner, count);
    else this.#running.delete(owner);
  }

  /** Admissions and switches are never made from inside another's callback (a switch ending admits and pumps). */
  #pumpSoon(): void {
    queueMicrotask(() => this.#pump());
  }

  #pump(): void {
    if (this.#switch) return;
    for (let next = this.#queue[0]; next; next = this.#queue[0]) {
      const owner = next.call.owner;
      const others = [...this.#running.keys()].some((o) => o !== owner);
      if (this.#takesTurns() && others) return;
      this.#queue.shift();
      this.#count(owner, 1);
      if (!this.#takesTurns() || this.#holder === owner) {
        next.admit();
        continue;
      }
      this.#switchTo(next);
      return;
    }
    // The turn is over: the upstream gets the gateway's roots back.
    if (this.#takesTurns() && this.#running.size === 0 && this.#holder !== GATEWAY) this.#switchTo(undefined);
  }

  /** Tells the upstream that roots changed; `ask` and `answered` take it from there, or the timer ends it. */
  #switchTo(waiter: Waiter | undefined): void {
    const current: Switch = { waiter, timer: undefined, done: false };
    this.#switch = current;
    current.timer = setTimeout(() => this.#finish(current, 'not asked'), ROOTS_ASK_WAIT_MS);
    current.timer.unref();
    this.#tell();
  }

  #finish(current: Switch, outcome?: 'not asked'): void {
    if (current.done) return;
    current.done = true;
    clearTimeout(current.timer);
    if (this.#switch === current) this.#switch = undefined;
    if (outcome === 'not asked') {
      // It does not follow (or stopped): from now on it gets the gateway's roots, and turns end. Holding a
      // client's roots, it is disconnected, so that the next session starts with none.
      this.#follows = 'no';
      if (this.#holder !== GATEWAY) {
        this.#holder = GATEWAY;
        void this.#client?.close().catch(() => {});
      }
    }
    current.waiter?.admit();
    this.#pumpSoon();
  }

  #tell(): void {
    void this.#client?.sendRootsListChanged().catch(() => {});
  }
}
