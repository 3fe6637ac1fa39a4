/**
 * Rank fusion and top-k selection, shared by the lexical index (several queries, query segments), the semantic
 * ranker and the benchmark.
 */

/** One ranked list to fuse: the ids in rank order, and how much this list counts (default 1). */
export interface RankedList<T> {
  items: readonly T[];
  weight?: number;
}

/**
 * Reciprocal rank fusion (Cormack, Clarke and Buettcher 2009): an item scores the sum over the lists of
 * weight / (k + rank). It needs no score calibration between lists, which is why several queries, a lexical
 * and a semantic ranking, can be merged at all; ties keep the order of first appearance. `mix` 1 is plain RRF
 * (the sum over lists); below 1, an item's best list counts fully and the others `mix` times: lists that answer
 * different needs (one per capability) should each get their best items near the top, and plain RRF lets an item
 * that is mediocre in every list outrank each list's best. Lists of one need (the lexical and the semantic
 * ranking of one query) agree for a reason, and are fused with mix 1.
 */
export function reciprocalRankFusion<T>(
  lists: readonly RankedList<T>[],
  k = 60,
  mix = 1,
): Array<{ item: T; score: number }> {
  const best = new Map<T, number>();
  const sum = new Map<T, number>();
  for (const { items, weight = 1 } of lists) {
    items.forEach((item, rank) => {
      const score = weight / (k + rank + 1);
      sum.set(item, (sum.get(item) ?? 0) + score);
      best.set(item, Math.max(best.get(item) ?? 0, score));
    });
  }
  return [...sum]
    .map(([item, total]) => {
      const top = best.get(item)!;
      return { item, score: top + mix * (total - top) };
    })
    .sort((a, b) => b.score - a.score);
}

/**
 * The `k` items with the highest score, best first, ties broken by `tie` ascending; linear in the input for a
 * small k (a heap), where sorting 10,000 matched tools for the best five would dominate a search.
 */
export function topK<T>(
  items: readonly T[],
  k: number,
  score: (item: T) => number,
  tie: (item: T) => number,
): T[] {
  if (k <= 0) return [];
  // Worse first: a min-heap on (score, -tie).
  const worse = (a: T, b: T) => {
    const d = score(a) - score(b);
    return d !== 0 ? d < 0 : tie(a) > tie(b);
  };
  const heap: T[] = [];
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!worse(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && worse(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      up(heap.length - 1);
    } else if (worse(heap[0]!, item)) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
}
