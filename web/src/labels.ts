/** A rectangle in the graph's model coordinates (Cytoscape's bounding boxes). */
export interface Box {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

export interface LabelCandidate {
  id: string;
  /** Where the node's label would be drawn. */
  label: Box;
  /** The node itself. */
  body: Box;
  /** Higher first: the best-linked concepts (and the selected one) keep their labels. */
  rank: number;
}

function overlap(a: Box, b: Box, gap: number): boolean {
  return a.x1 < b.x2 + gap && b.x1 < a.x2 + gap && a.y1 < b.y2 + gap && b.y1 < a.y2 + gap;
}

/**
 * The nodes whose labels are drawn: in rank order (ties by id, so the same graph gets the same labels), each label
 * that overlaps no label kept before it and no other node. The others show theirs under the pointer.
 */
export function labelsToShow(candidates: readonly LabelCandidate[], gap = 2): Set<string> {
  const order = [...candidates].sort((a, b) => b.rank - a.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const kept: Box[] = [];
  const shown = new Set<string>();
  for (const candidate of order) {
    if (kept.some((box) => overlap(candidate.label, box, gap))) continue;
    if (candidates.some((other) => other.id !== candidate.id && overlap(candidate.label, other.body, 0)))
      continue;
    kept.push(candidate.label);
    shown.add(candidate.id);
  }
  return shown;
}
