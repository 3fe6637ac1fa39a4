import { DEFAULT_LIMITS, type Limits } from '../../config/limits.js';
import { TackError } from '../../errors.js';

/**
 * The caps of one docs library, named as under `limits` in tack.json (so `config.limits` can be passed as is):
 * a folder of documents is input like any other, and one huge, deep or endless tree must not take the server's
 * memory, time or file handles. docs/security.md ("Limits") lists them.
 */
export type DocsLimits = Pick<Limits, 'docsFileBytes' | 'docsDepth' | 'docsFiles' | 'docsTotalBytes'>;

/** The given caps over the defaults; an undefined value keeps the default. */
export function docsLimits(given: Partial<DocsLimits> = {}): DocsLimits {
  return {
    docsFileBytes: given.docsFileBytes ?? DEFAULT_LIMITS.docsFileBytes,
    docsDepth: given.docsDepth ?? DEFAULT_LIMITS.docsDepth,
    docsFiles: given.docsFiles ?? DEFAULT_LIMITS.docsFiles,
    docsTotalBytes: given.docsTotalBytes ?? DEFAULT_LIMITS.docsTotalBytes,
  };
}

/** A document over `limits.docsFileBytes`: refused before it is read. */
export function docTooLarge(file: string, bytes: number, cap: number): TackError {
  let [size, limit] = [formatBytes(bytes), formatBytes(cap)];
  // Rounded alike ("2.0 KiB, over the 2.0 KiB cap"), the two are given to the byte.
  if (size === limit) [size, limit] = [exactBytes(bytes), exactBytes(cap)];
  return new TackError('LIMIT_EXCEEDED', `${file}: ${size}, over the ${limit} cap on one document`, {
    subject: { file },
    hint: 'Raise limits.docsFileBytes in tack.json to serve it.',
  });
}

/** How a skipped document is reported: what, why, and the key that would let it in. */
export function skipWarning(error: TackError): string {
  return `skipped ${error.message}${error.hint ? `. ${error.hint}` : ''}`;
}

/** `1000 bytes`, `1.5 KiB`, `10 MiB`. */
export function formatBytes(bytes: number): string {
  const units: Array<[number, string]> = [
    [1024 ** 3, 'GiB'],
    [1024 ** 2, 'MiB'],
    [1024, 'KiB'],
  ];
  for (const [size, unit] of units) {
    if (bytes >= size) {
      const value = bytes / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
    }
  }
  return exactBytes(bytes);
}

function exactBytes(bytes: number): string {
  return `${bytes.toLocaleString('en-US')} byte${bytes === 1 ? '' : 's'}`;
}

/** Most warnings shown by name from one scan or re-index; the rest are counted, so a million bad files cost one line. */
const MAX_NAMED_WARNINGS = 20;

/** Warnings from one scan or one re-index, a bounded number of them by name. */
export class Warnings {
  readonly #messages: string[] = [];
  #more = 0;

  add(message: string): void {
    if (this.#messages.length < MAX_NAMED_WARNINGS) this.#messages.push(message);
    else this.#more++;
  }

  list(): string[] {
    return this.#more > 0
      ? [...this.#messages, `... and ${this.#more} more warning${this.#more === 1 ? '' : 's'} like these`]
      : [...this.#messages];
  }
}
