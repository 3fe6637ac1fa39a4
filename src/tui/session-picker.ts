import { Box, Text } from 'ink';
import { createElement as h, type ReactNode } from 'react';
import { type SessionRow, sessionSummary } from '../store/sessions.js';
import type { Theme } from './theme.js';

/**
 * The /resume picker: the folder's earlier sessions, newest first (when, status, steps, cost, first message), the
 * one under the cursor marked; a window of `lines` rows follows the cursor through a longer list.
 */
export function SessionPicker({
  rows,
  index,
  lines,
  theme: t,
}: {
  rows: readonly SessionRow[];
  index: number;
  lines: number;
  theme: Theme;
}): ReactNode {
  const start = Math.max(0, Math.min(index - Math.floor(lines / 2), rows.length - lines));
  const shown = rows.slice(start, start + lines);
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'double', borderColor: t.color('cyan'), paddingX: 1 },
    h(Text, { bold: true }, `Resume a session (${rows.length} in this folder)`),
    ...shown.map((row, i) => {
      const at = start + i === index;
      const line = `${at ? '›' : ' '} ${sessionSummary(row)}`;
      return h(
        Text,
        { key: row.id, wrap: 'truncate-end', inverse: at, color: at ? undefined : t.color('white') },
        line,
      );
    }),
    h(Text, { color: t.color('gray') }, '↑/↓ choose  Enter resume  Esc cancel'),
  );
}
