import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so two equal values always serialize (and hash) the same.
 * Hand-written: it is a dozen lines, and the libraries for it (RFC 8785) also normalize numbers, which
 * tack does not need for digests of its own data.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

/** SHA-256 (hex) of the canonical JSON of `value`. */
export function digest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** SHA-256 (hex) of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
