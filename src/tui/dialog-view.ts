import { Box, Text } from 'ink';
import { createElement as h, type ReactNode } from 'react';
import type { ApprovalRequest } from '../agent/approval.js';
import type { SecretMasker } from '../util/secrets.js';
import type { Dialog } from './dialogs.js';
import type { EditorState } from './editor.js';
import { headLines, prettyArguments, printable, shortToolName } from './format.js';
import type { Theme } from './theme.js';

/** What the tool may do, and what was ruled out, with where each label comes from and why. */
function labels(request: ApprovalRequest): string[] {
  return [
    ...request.capabilities.map((l) => `${l.capability} (${l.source}: ${l.why})`),
    ...(request.ruledOut ?? []).map((l) => `no ${l.capability} (${l.source}: ${l.why})`),
  ];
}

/**
 * A question for the person at the terminal, in place of the input box: an approval (why it asks, the tool's
 * capabilities and arguments, secrets masked), a changed pinned definition as a diff, a server's confirmation or
 * question.
 */
export function DialogView({
  dialog,
  masker,
  answerText,
  theme: t,
}: {
  dialog: Dialog;
  masker: SecretMasker | undefined;
  answerText: EditorState;
  theme: Theme;
}): ReactNode {
  const frame = (color: string, ...children: ReactNode[]) =>
    h(
      Box,
      { flexDirection: 'column', borderStyle: 'double', borderColor: t.color(color), paddingX: 1 },
      ...children,
    );
  switch (dialog.kind) {
    case 'approval': {
      const r = dialog.request;
      const tool = shortToolName(r.tool, r.server);
      const caps = labels(r);
      return frame(
        'yellow',
        h(Text, { bold: true }, `Approve ${r.server ? `${r.server} › ${tool}` : tool}?`),
        h(Text, { wrap: 'wrap' }, `Why it asks: it ${r.why}.`),
        caps.length > 0
          ? h(Text, { wrap: 'wrap', color: t.color('gray') }, `capabilities: ${caps.join(', ')}`)
          : null,
        h(
          Text,
          { color: t.color('gray') },
          `description sha256:${r.descriptionSha256.slice(0, 12)}  (${r.tool})`,
        ),
        h(Text, { color: t.color('gray') }, 'arguments:'),
        h(Text, { wrap: 'wrap' }, headLines(printable(prettyArguments(r.arguments, masker)), 30)),
        h(
          Text,
          { bold: true },
          `[y] once  [s] this session${r.alwaysRule ? `  [a] always (saves ${r.alwaysRule} to the user config)` : ''}  [n] deny`,
        ),
      );
    }
    case 'definition': {
      const held = dialog.held;
      const high = held.findings.filter((f) => f.severity === 'high');
      return frame(
        'red',
        h(Text, { bold: true, wrap: 'wrap' }, printable(`${held.server}: ${held.reason}`)),
        h(DiffView, { diff: dialog.diff, theme: t }),
        ...high.map((f, i) =>
          h(Text, { key: i, color: t.color('red'), wrap: 'wrap' }, `${f.code}: ${f.message}`),
        ),
        h(Text, { bold: true }, `Accept this ${held.kind} and use it?  [y] accept  [n] keep it held`),
      );
    }
    case 'confirm':
      return frame(
        'yellow',
        h(Text, { bold: true, wrap: 'wrap' }, printable(dialog.title)),
        h(Text, { wrap: 'wrap' }, headLines(printable(dialog.body), 30)),
        h(Text, { bold: true }, '[y] yes  [n] no'),
      );
    case 'question':
      return frame(
        'yellow',
        h(Text, { bold: true, wrap: 'wrap' }, printable(dialog.title)),
        h(Text, null, `${dialog.prompt}: `, answerText.text, h(Text, { inverse: true }, ' ')),
        h(Text, { color: t.color('gray') }, 'Enter to answer, Esc to cancel'),
      );
  }
}

/** A unified diff with + and - lines colored. */
function DiffView({ diff, theme: t }: { diff: string; theme: Theme }): ReactNode {
  const lines = headLines(printable(diff), 40).split('\n');
  return h(
    Box,
    { flexDirection: 'column' },
    ...lines.map((line, i) =>
      h(
        Text,
        {
          key: i,
          wrap: 'wrap',
          color: t.color(line.startsWith('+') ? 'green' : line.startsWith('-') ? 'red' : 'gray'),
        },
        line,
      ),
    ),
  );
}
