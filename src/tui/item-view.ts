import { Box, Text } from 'ink';
import { createElement as h, type ReactNode, useMemo } from 'react';
import type { SecretMasker } from '../util/secrets.js';
import {
  argumentSummary,
  formatDuration,
  headLines,
  maskText,
  prettyArguments,
  printable,
  shortToolName,
} from './format.js';
import { renderStreamingMarkdown } from './markdown.js';
import type { Theme } from './theme.js';
import type { ToolCallView, ViewItem } from './transcript-view.js';

/** Lines of a result shown expanded; the rest is counted, and the full output stays where the library saved it. */
const RESULT_LINES = 40;

interface ItemProps {
  item: ViewItem;
  /** How many lines of a streaming answer stay on screen (the terminal's rows less the input and status). */
  liveLines?: number;
  width: number;
  expanded: boolean;
  masker: SecretMasker | undefined;
  theme: Theme;
}

const NOTICE_MARKS = { held: '⚠ ', compaction: '⇣ ', fallback: '⇄ ', info: 'ℹ ' } as const;

/** One item of the transcript: a message, an answer, a tool call, a notice, an error, a command's output. */
export function ItemView({ item, width, expanded, masker, theme: t, liveLines = 20 }: ItemProps): ReactNode {
  switch (item.kind) {
    case 'user':
      return h(
        Box,
        { marginTop: 1 },
        h(Text, { color: t.color('cyan'), bold: true }, '› '),
        h(Text, { color: t.color('cyan') }, printable(item.text)),
      );
    case 'answer':
      return h(AnswerView, { text: item.text, done: item.done, width, liveLines });
    case 'tool':
      return h(ToolBlock, { call: item.call, width, expanded, masker, theme: t, depth: 0 });
    case 'notice':
      return h(
        Text,
        {
          color: t.color(item.tone === 'held' || item.tone === 'fallback' ? 'yellow' : 'gray'),
          wrap: 'wrap',
        },
        `${NOTICE_MARKS[item.tone]}${printable(item.text)}`,
      );
    case 'error':
      return h(Text, { color: t.color('red'), wrap: 'wrap' }, `✗ error: ${printable(item.text)}`);
    case 'end':
      return h(Text, { color: t.color('yellow') }, `■ ${item.reason}: ${item.detail}`);
    case 'output':
      return h(
        Box,
        { flexDirection: 'column', marginTop: 1 },
        h(Text, { color: t.color('magenta'), bold: true }, item.title),
        h(Text, { wrap: 'wrap' }, printable(item.text)),
      );
    case 'intro':
      return h(
        Box,
        { flexDirection: 'column' },
        h(
          Text,
          { wrap: 'truncate-middle' },
          h(Text, { bold: true }, 'tack chat'),
          ` in ${printable(item.folder)}`,
        ),
        h(
          Text,
          { color: t.color('gray'), wrap: 'wrap' },
          'Type a message and Enter; /help lists the commands and keys, @file attaches a file, Ctrl-D leaves.',
        ),
      );
    case 'notes':
      // One line, whatever the notes say: the first screen is for the input and the servers.
      return h(
        Text,
        { color: t.color('gray'), wrap: 'truncate-end' },
        `ℹ ${item.notes.length === 1 ? 'a note' : `${item.notes.length} notes`} at start (/status shows ${item.notes.length === 1 ? 'it' : 'them'}): ${printable(item.notes.join('; '))}`,
      );
  }
}

/**
 * An answer as terminal Markdown, rendered again only when its text, the width or its state changes (not on every
 * keystroke). While it streams only its last lines are live: a region taller than the screen would make every
 * frame a full repaint. The whole answer is drawn once it is complete.
 */
function AnswerView({
  text,
  done,
  width,
  liveLines,
}: {
  text: string;
  done: boolean;
  width: number;
  liveLines: number;
}): ReactNode {
  const shown = useMemo(() => {
    const rendered = renderStreamingMarkdown(printable(text), width - 1);
    const lines = rendered.split('\n');
    return !done && lines.length > liveLines
      ? `… ${lines.length - liveLines} lines above (shown when the answer is complete)\n${lines.slice(-liveLines).join('\n')}`
      : rendered;
  }, [text, done, width, liveLines]);
  return h(Box, { marginTop: 1 }, h(Text, null, shown));
}

const STATUS_ICON: Record<ToolCallView['status'], string> = {
  running: '⋯',
  waiting: '?',
  ok: '✓',
  error: '✗',
  denied: '⊘',
};

const STATUS_COLOR: Record<ToolCallView['status'], string> = {
  running: 'blue',
  waiting: 'yellow',
  ok: 'green',
  error: 'red',
  denied: 'red',
};

interface ToolBlockProps {
  call: ToolCallView;
  width: number;
  expanded: boolean;
  masker: SecretMasker | undefined;
  theme: Theme;
  depth: number;
}

/** A tool call, folded to one line: server › tool, arguments, status, duration; expanded: arguments and result. */
export function ToolBlock({ call, width, expanded, masker, theme: t, depth }: ToolBlockProps): ReactNode {
  const tool = shortToolName(call.name, call.server);
  const where = call.server ? `${call.server} › ${tool}` : tool;
  const timing =
    call.durationMs !== undefined && call.status !== 'denied'
      ? ` ${formatDuration(call.durationMs)}${call.waitMs !== undefined ? ` (+${formatDuration(call.waitMs)} approving)` : ''}`
      : call.status === 'waiting'
        ? ' waiting for approval'
        : '';
  const summaryRoom = Math.max(10, width - where.length - timing.length - 8 - depth * 2);
  const children: ReactNode[] = [
    h(
      Box,
      { key: 'head' },
      h(Text, { color: t.color(STATUS_COLOR[call.status]) }, `${STATUS_ICON[call.status]} `),
      h(Text, { bold: true }, where),
      h(Text, { color: t.color('gray') }, ` ${argumentSummary(call.arguments, masker, summaryRoom)}`),
      h(Text, { color: t.color(STATUS_COLOR[call.status]) }, timing),
    ),
  ];
  if (call.status === 'denied' && call.why)
    children.push(h(Text, { key: 'why', color: t.color('red'), wrap: 'wrap' }, `  not run: ${call.why}`));
  if (call.subagent) {
    const sub = call.subagent;
    children.push(
      h(
        Box,
        {
          key: 'sub',
          flexDirection: 'column',
          marginLeft: 2,
          borderStyle: 'single',
          borderLeft: true,
          borderTop: false,
          borderRight: false,
          borderBottom: false,
          paddingLeft: 1,
        },
        h(Text, { color: t.color('magenta') }, `sub-agent: ${printable(sub.description)}`),
        ...sub.items.map((item) =>
          item.kind === 'tool'
            ? h(ToolBlock, {
                key: item.id,
                call: item.call,
                width: width - 4,
                expanded,
                masker,
                theme: t,
                depth: depth + 1,
              })
            : h(ItemView, { key: item.id, item, width: width - 4, expanded, masker, theme: t }),
        ),
        sub.reason ? h(Text, { color: t.color('gray') }, `${sub.reason}: ${sub.detail ?? ''}`) : null,
      ),
    );
  }
  if (expanded) {
    children.push(
      h(
        Box,
        { key: 'body', flexDirection: 'column', marginLeft: 2 },
        h(Text, { color: t.color('gray') }, 'arguments:'),
        h(Text, { wrap: 'wrap' }, prettyArguments(call.arguments, masker)),
        call.result !== undefined ? h(Text, { color: t.color('gray') }, 'result:') : null,
        call.result !== undefined
          ? h(Text, { wrap: 'wrap' }, headLines(printable(maskText(call.result, masker)), RESULT_LINES))
          : null,
        call.savedTo ? h(Text, { color: t.color('gray') }, `full output: ${call.savedTo}`) : null,
      ),
    );
  }
  return h(Box, { flexDirection: 'column' }, ...children);
}
