/**
 * `text` in at most `max` characters: whole when it fits, else cut at the last word boundary with an ellipsis
 * (the ellipsis counts). A single word longer than most of the room is cut inside it rather than leaving almost
 * nothing; a surrogate pair is never split. `cut` says whether anything was left out, so the page can offer the
 * whole text (a title tooltip).
 */
export function cutAtWord(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  const room = Math.max(0, max - 1);
  let end = room;
  const space = lastSpace(text, room);
  if (space > room * 0.6) end = space;
  // A high surrogate left at the end would be half a character.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  const head = text.slice(0, end).replace(/[\s,;:\-–—]+$/u, '');
  return { text: `${head}…`, cut: true };
}

/** The index of the last whitespace at or before `limit` (the character after the kept text), or -1. */
function lastSpace(text: string, limit: number): number {
  for (let i = Math.min(limit, text.length - 1); i >= 0; i--) if (/\s/.test(text[i]!)) return i;
  return -1;
}
