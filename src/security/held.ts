import type { HeldDefinition, PinKind } from './pins.js';

/**
 * One view of the definitions the guard holds back, for the harness and the gateway alike: one key format, one
 * lookup, and the words both say about a held definition.
 */

/** One held version of one definition (identity, kind, name, digest): announced and reviewed once each. */
export function heldKey(h: HeldDefinition): string {
  return `${h.identity}\0${h.kind}\0${h.name}\0${h.sha256}`;
}

/** The held definitions of one catalog, found by server, kind and the server's own name. */
export class HeldView {
  readonly all: readonly HeldDefinition[];
  readonly #byName = new Map<string, HeldDefinition>();

  constructor(held: readonly HeldDefinition[]) {
    this.all = held;
    for (const h of held) this.#byName.set(lookupKey(h.server, h.kind, h.name), h);
  }

  get size(): number {
    return this.all.length;
  }

  /** The held definition of `server`'s `kind` named `name` (empty for instructions), if it is held. */
  get(server: string, kind: PinKind, name: string): HeldDefinition | undefined {
    return this.#byName.get(lookupKey(server, kind, name));
  }

  has(server: string, kind: PinKind, name: string): boolean {
    return this.#byName.has(lookupKey(server, kind, name));
  }

  /** Whether `server`'s instructions are held (then nothing of them reaches a model). */
  instructionsHeld(server: string): boolean {
    return this.has(server, 'instructions', '');
  }
}

function lookupKey(server: string, kind: PinKind, name: string): string {
  return `${server}\0${kind}\0${name}`;
}

/**
 * Held versions already announced (or put to a reviewer): each once, however often catalogs are rebuilt. A
 * definition held with its server's package (`via`) is said by the package's own notice, never on its own.
 */
export class HeldOnce {
  readonly #seen = new Set<string>();

  /** True the first time `h` (this version of it) is seen; false for one held with another (`via`). */
  first(h: HeldDefinition): boolean {
    if (h.via) return false;
    const key = heldKey(h);
    if (this.#seen.has(key)) return false;
    this.#seen.add(key);
    return true;
  }
}

/** The notice or warning that a definition is held back, naming how to review and accept it. */
export function heldNotice(h: HeldDefinition): string {
  return `held back: ${h.reason} (server ${h.server}); review with \`tack pins diff ${h.server}\`, accept with \`tack pins accept ${h.server}\``;
}

/**
 * What a model reads when it calls a held tool by `name`. The harness's user reviews it in the session (a
 * short reason: the new text is untrusted); the gateway's client model is told the reason in full and that the
 * review happens on the gateway's machine.
 */
export function heldToolText(name: string, h: HeldDefinition, where: 'harness' | 'gateway'): string {
  if (where === 'gateway')
    return `${name} is unavailable: ${h.reason}. It is held back until the user reviews it on the gateway's machine (\`tack pins diff ${h.server}\`, \`tack pins accept ${h.server}\`).`;
  return `${name} is unavailable: ${heldWhy(h)}. It stays disabled until the user reviews it (\`tack pins diff ${h.server}\`). Do the task without it or tell the user.`;
}

/** Why a definition is held, in a few words that repeat none of its (untrusted) new text. */
export function heldWhy(h: Pick<HeldDefinition, 'why' | 'via'> & { kind?: PinKind }): string {
  if (h.via?.kind === 'package' || h.kind === 'package')
    return "its server's package (the code behind it) changed since the user approved it";
  return h.why === 'changed'
    ? 'its definition changed since the user approved it'
    : 'its definition was flagged by the security scan';
}
