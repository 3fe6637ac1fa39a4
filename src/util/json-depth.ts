/**
 * How deeply a JSON value nests, measured without recursion. JSON.parse is iterative in V8, but JSON.stringify,
 * structuredClone, schema validators and most code that walks a value recurse: at a few thousand levels they
 * overflow the stack. Whatever tack takes from a client, a server or a model is measured with these before
 * anything recursive touches it.
 *
 * Depth counts containers: a scalar is 0, `[]` and `{}` are 1, `{"a": [1]}` is 2.
 */

/** The depth of `value`, or `limit + 1` as soon as it is known to be deeper than `limit`. */
export function jsonDepth(value: unknown, limit: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  // Shared or cyclic references (possible in values a library caller builds, never in parsed JSON) are walked
  // once, so the walk ends and costs at most one visit per object.
  const seen = new WeakSet<object>();
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    if (depth > deepest) {
      deepest = depth;
      if (deepest > limit) return limit + 1;
    }
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children)
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * The depth of JSON text, read in one pass over its characters without parsing: brackets outside strings.
 * Text that is not JSON gets the depth its brackets reach (parsing it is someone else's error to report).
 */
export function jsonTextDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return limit + 1;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * The JSON-RPC error a request nested past `limit` gets, in the same words on every transport (a gateway POST over
 * HTTP, `tack serve` on stdio): -32600 Invalid Request.
 */
export function depthRefusalError(limit: number): { code: -32600; message: string } {
  return {
    code: -32600,
    message: `Invalid Request: JSON nested deeper than ${limit} levels (limits.jsonDepth)`,
  };
}
