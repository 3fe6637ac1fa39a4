import { APICallError, RetryError } from 'ai';
import { sha256Hex } from '../util/canonical-json.js';

/**
 * The exact request of every model call, kept in the transcript so that `tack sessions show S --step N
 * --request` can print what the provider received, byte for byte, long after the session ended.
 *
 * What is recorded is the body the AI SDK provider reports it sent (`request.body` of the call, or
 * `requestBodyValues` of the error when the call failed), which it serializes with one `JSON.stringify`. A body
 * resends the whole history every step, so storing it whole would grow a transcript with the square of its
 * steps. Instead each top-level list of the body (`messages`, `tools`, `system` blocks, `input`...) is split into
 * its elements, each kept once per session under its hash; a step records its skeleton (the body with those lists
 * emptied, keys in their order) and the hashes of its lists. `JSON.stringify` of the skeleton with its lists put
 * back gives the same bytes as the body (JSON data survives parse and stringify unchanged), and the SHA-256 of the
 * whole body, taken when it was sent, proves it on every rebuild.
 *
 * Limits: a step stores at most MAX_NEW_PART_BYTES of elements not stored before; the rest are named by hash
 * only (a later step stores them if it can), and a rebuild needing one says which. The transcript masks secrets
 * in every line, so a body that carried one (a key pasted into a message) rebuilds with `••••` in its place, and
 * the hash check says it differs.
 */

/** New list elements a step's record stores at most; beyond it they are named by hash only. */
export const MAX_NEW_PART_BYTES = 4 * 1024 * 1024;

/** What a `request` event records of one body (see the module comment). */
export interface RecordedBody {
  /** SHA-256 (hex) of the body as sent. */
  sha256: string;
  /** Its length in UTF-8 bytes. */
  bytes: number;
  /** The body as JSON with every top-level list emptied. */
  skeleton: string;
  /** The hashes of each emptied list's elements, in order, by key. */
  lists: Record<string, string[]>;
  /** The elements not stored by an earlier step of the session, as JSON, by hash. */
  parts: Record<string, string>;
  /** Hashes of new elements left out for the size cap. */
  unstored?: string[];
}

/** The hash a list element is kept under: the first 16 hex digits of its JSON's SHA-256. */
export function partHash(json: string): string {
  return sha256Hex(json).slice(0, 16);
}

/** Records bodies for one session, storing each list element the first time a step sends it. */
export class RequestRecorder {
  readonly #stored = new Set<string>();

  record(body: unknown): RecordedBody {
    const text = JSON.stringify(body) ?? 'null';
    const recorded: RecordedBody = {
      sha256: sha256Hex(text),
      bytes: Buffer.byteLength(text),
      skeleton: text,
      lists: {},
      parts: {},
    };
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return recorded;
    const skeleton: Record<string, unknown> = {};
    let budget = MAX_NEW_PART_BYTES;
    const unstored: string[] = [];
    for (const [key, value] of Object.entries(body)) {
      if (!Array.isArray(value)) {
        skeleton[key] = value;
        continue;
      }
      skeleton[key] = [];
      recorded.lists[key] = value.map((element: unknown) => {
        // JSON.stringify writes `null` for an undefined element of an array.
        const json = JSON.stringify(element) ?? 'null';
        const hash = partHash(json);
        if (this.#stored.has(hash) || hash in recorded.parts) return hash;
        if (json.length > budget) {
          unstored.push(hash);
          return hash;
        }
        budget -= json.length;
        recorded.parts[hash] = json;
        this.#stored.add(hash);
        return hash;
      });
    }
    recorded.skeleton = JSON.stringify(skeleton);
    if (unstored.length > 0) recorded.unstored = unstored;
    return recorded;
  }
}

/**
 * The body of a model call that failed: the provider's error carries what it sent (`requestBodyValues`), also
 * when the retries gave up (the last attempt's).
 */
export function failedRequestBody(error: unknown): unknown {
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  return APICallError.isInstance(cause) ? cause.requestBodyValues : undefined;
}

/** A body rebuilt from its record and the parts the session stored. */
export interface RebuiltBody {
  /** The body's text; parts that were not stored stand as `null`. */
  text: string;
  /** Byte for byte what was sent: its SHA-256 equals the one taken when it was sent. */
  exact: boolean;
  /** Hashes of the parts the transcript does not have (left out for the size cap). */
  missing: string[];
}

/** Puts a record's lists back into its skeleton, from `parts` (every part the session stored, by hash). */
export function rebuildBody(
  record: Pick<RecordedBody, 'sha256' | 'skeleton' | 'lists'>,
  parts: ReadonlyMap<string, string>,
): RebuiltBody {
  const keys = Object.keys(record.lists);
  const missing: string[] = [];
  if (keys.length === 0)
    return { text: record.skeleton, exact: sha256Hex(record.skeleton) === record.sha256, missing };
  // A record read back from a file may be damaged: what does not parse stands as null and is missing.
  const parse = (json: string): unknown => {
    try {
      return JSON.parse(json) as unknown;
    } catch {
      return undefined;
    }
  };
  const parsed = parse(record.skeleton);
  const body: Record<string, unknown> =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  for (const key of keys) {
    body[key] = (record.lists[key] ?? []).map((hash) => {
      const json = parts.get(hash);
      const value = json === undefined ? undefined : parse(json);
      if (value === undefined) {
        missing.push(hash);
        return null;
      }
      return value;
    });
  }
  const text = JSON.stringify(body);
  return { text, exact: missing.length === 0 && sha256Hex(text) === record.sha256, missing };
}
