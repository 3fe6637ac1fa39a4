/**
 * Array helpers for lists whose length an outsider decides (servers in a config, tools of a server, issues of a
 * file). Spreading such a list into a call (`push(...items)`, `Math.max(...values)`) puts every item on the
 * stack as an argument, and a few hundred thousand overflow it: test/hostile/spread.test.ts holds src/ to these.
 */

/** `target.push(...items)` without the spread. */
export function pushAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const item of items) target.push(item);
  return target;
}

/** `Math.max(floor, ...values)` without the spread. */
export function maxOf(values: Iterable<number>, floor = Number.NEGATIVE_INFINITY): number {
  let max = floor;
  for (const value of values) if (value > max) max = value;
  return max;
}

/** `Math.min(ceiling, ...values)` without the spread. */
export function minOf(values: Iterable<number>, ceiling = Number.POSITIVE_INFINITY): number {
  let min = ceiling;
  for (const value of values) if (value < min) min = value;
  return min;
}
