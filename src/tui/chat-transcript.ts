import { Static } from 'ink';
import { Fragment, createElement as h, type ReactNode } from 'react';
import type { SecretMasker } from '../util/secrets.js';
import { ItemView } from './item-view.js';
import type { Theme } from './theme.js';
import type { ViewItem } from './transcript-view.js';
import type { Committed } from './use-scrollback.js';

/**
 * The transcript: earlier turns written once to the terminal's scrollback, the last turn drawn live (a streaming
 * answer shows only what fits above the input box and the status line).
 */
export function ChatTranscript({
  committed,
  items,
  width,
  rows,
  expanded,
  masker,
  theme,
}: {
  committed: Committed;
  items: readonly ViewItem[];
  width: number;
  /** The terminal's rows. */
  rows: number;
  /** Ctrl-O: the live turn's tool calls expanded. */
  expanded: boolean;
  masker: SecretMasker | undefined;
  theme: Theme;
}): ReactNode {
  return h(
    Fragment,
    null,
    // A new batch is a new Static: it writes its items once, then they live in the terminal's scrollback.
    h(Static<ViewItem>, {
      key: committed.batch,
      items: committed.items,
      // biome-ignore lint/correctness/noChildrenProp: Static's typed props take the render function as children.
      children: (item: ViewItem) =>
        h(ItemView, { key: item.id, item, width, expanded: false, masker, theme }),
    }),
    ...items.map((item) =>
      h(ItemView, { key: item.id, item, width, expanded, masker, theme, liveLines: Math.max(5, rows - 12) }),
    ),
  );
}
