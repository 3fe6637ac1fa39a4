/**
 * The texts of a tool's input schema that the poisoning scanner (scan.ts) reads, walked within fixed bounds: the
 * schema comes from a server that may be hostile, and is as large and as deep as that server likes.
 */

/**
 * The most of one input schema that is read: strings scanned, values visited (objects, arrays and strings under
 * a text key), and how deep. Past any of them the rest is not scanned and the tool gets a high `oversized`
 * finding; no honest schema comes near.
 */
export const MAX_SCHEMA_TEXTS = 2000;
export const MAX_SCHEMA_NODES = 20_000;
export const MAX_SCHEMA_DEPTH = 64;

/** Keys whose values the model reads as text: poisoning often sits in a parameter's description. */
const SCHEMA_TEXT_KEYS = new Set([
  'description',
  'title',
  'default',
  'examples',
  'enum',
  'const',
  'example',
  '$comment',
]);

/**
 * Keys whose string values are structure, not text: every other string in a schema is read too (`x-instructions`,
 * `markdownDescription`, `errorMessage`), since the model sees the whole schema and a server may put words anywhere.
 */
const STRUCTURAL_KEYS = new Set([
  'type',
  'format',
  'pattern',
  '$ref',
  '$schema',
  '$id',
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  'contentMediaType',
  'contentEncoding',
]);

export interface SchemaTexts {
  texts: { path: string; text: string }[];
  /** Whether some of the schema was not visited (past MAX_SCHEMA_TEXTS, MAX_SCHEMA_NODES or MAX_SCHEMA_DEPTH). */
  cut: boolean;
}

/**
 * The strings inside a JSON Schema that the model reads, in document order. Depth first with a stack of the
 * objects and arrays being walked (their next key), not by recursion: a schema nested 20,000 levels deep cannot
 * overflow it. Bounded in values looked at, depth and strings, whatever the schema's size.
 */
export function schemaTexts(schema: unknown, root = 'inputSchema'): SchemaTexts {
  interface Frame {
    value: Record<string, unknown> | unknown[];
    /** An object's own keys; undefined for an array. */
    keys: string[] | undefined;
    next: number;
    path: string;
    depth: number;
    /** Under a text key: every string below is read. */
    text: boolean;
  }
  const texts: SchemaTexts['texts'] = [];
  const frames: Frame[] = [];
  let cut = false;
  let looked = 0;
  const visit = (value: unknown, path: string, depth: number, text: boolean): void => {
    const object = value !== null && typeof value === 'object';
    if (!object && !(text && typeof value === 'string')) return;
    if (depth > MAX_SCHEMA_DEPTH) cut = true;
    else if (!object) {
      if (texts.length < MAX_SCHEMA_TEXTS) texts.push({ path, text: value as string });
      else cut = true;
    } else {
      const keys = Array.isArray(value) ? undefined : Object.keys(value);
      frames.push({ value: value as Frame['value'], keys, next: 0, path, depth, text });
    }
  };
  visit(schema, root, 0, false);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]!;
    const length = frame.keys ? frame.keys.length : (frame.value as unknown[]).length;
    if (frame.next >= length) {
      frames.pop();
      continue;
    }
    // Every value looked at counts, whatever it is: an object of a million keys costs the cap, not a million.
    if (++looked > MAX_SCHEMA_NODES) {
      cut = true;
      break;
    }
    const at = frame.next++;
    if (frame.keys) {
      const key = frame.keys[at]!;
      const child = (frame.value as Record<string, unknown>)[key];
      const text =
        frame.text ||
        SCHEMA_TEXT_KEYS.has(key) ||
        (typeof child === 'string' && !STRUCTURAL_KEYS.has(key) && frame.path.slice(-11) !== '.properties');
      if (text || typeof child === 'object') visit(child, `${frame.path}.${key}`, frame.depth + 1, text);
    } else {
      visit((frame.value as unknown[])[at], `${frame.path}[${at}]`, frame.depth + 1, frame.text);
    }
  }
  return { texts, cut };
}
