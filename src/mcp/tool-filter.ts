/**
 * `enabledTools` / `disabledTools` patterns: a tool name as the server reports it, where `*` matches any run
 * of characters (`github_*`). Hand-written: a glob library would also give `?`, braces and path semantics
 * that tool names do not have.
 */
export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => globToRegExp(pattern).test(name));
}

const cache = new Map<string, RegExp>();

function globToRegExp(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    const body = pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    re = new RegExp(`^${body}$`);
    cache.set(pattern, re);
  }
  return re;
}
