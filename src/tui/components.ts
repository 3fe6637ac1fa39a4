import { Box, Text } from 'ink';
import { createElement as h, type ReactNode, useMemo } from 'react';
import type { ApprovalRequest } from '../agent/approval.js';
import { type SessionRow, sessionSummary } from '../store/sessions.js';
import type { SecretMasker } from '../util/secrets.js';
import type { Dialog } from './dialogs.js';
import type { EditorState } from './editor.js';
import {
  argumentSummary,
  formatDuration,
  formatTokens,
  headLines,
  maskText,
  prettyArguments,
  printable,
  shortToolName,
} from './format.js';
import { renderStreamingMarkdown } from './markdown.js';
import type { StatusFigures, ToolCallView, ViewItem } from './transcript-view.js';

/** Colors, or none under NO_COLOR (https://no-color.org). */
export interface Theme {
  color(name: string): string | undefined;
}

export const theme = (noColor: boolean): Theme => ({ color: (name) => (noColor ? undefined : name) });

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
        { color: t.color(item.tone === 'held' ? 'yellow' : 'gray'), wrap: 'wrap' },
        `${item.tone === 'held' ? '⚠ ' : item.tone === 'compaction' ? '⇣ ' : 'ℹ '}${printable(item.text)}`,
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
 * The line under the transcript while the agent works: how long the turn has run and its tokens so far (as
 * Claude Code and Codex show them), or, for a message sent before the servers are up, that it waits for them.
 */
export function RunningLine({
  progress,
  waiting,
  theme: t,
}: {
  progress: { seconds: number; tokens: number } | undefined;
  /** The session is still starting: the message is sent once it is ready. */
  waiting: boolean;
  theme: Theme;
}): ReactNode {
  const text = waiting
    ? `⋯ waiting for the servers to connect${progress ? ` ${progress.seconds}s` : ''} · Esc cancels`
    : progress
      ? `⋯ working ${progress.seconds}s · ${formatTokens(progress.tokens)} tokens · Esc interrupts`
      : '⋯ working…';
  return h(Text, { color: t.color('blue'), wrap: 'truncate-end' }, text);
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

export function StatusLine({
  figures,
  window,
  extra,
  running,
  theme: t,
}: {
  figures: StatusFigures;
  window: number;
  extra: { tools: string; servers: string };
  running: boolean;
  theme: Theme;
}): ReactNode {
  const percent = window > 0 ? Math.round((figures.contextTokens / window) * 100) : 0;
  const parts = [
    figures.model,
    `ctx ${formatTokens(figures.contextTokens)}/${formatTokens(window)} (${percent}%)`,
    `$${figures.costUsd.toFixed(4)}`,
    extra.tools,
    extra.servers,
    figures.activeSkills.length > 0 ? `skills: ${figures.activeSkills.join(', ')}` : '',
  ].filter((p) => p !== '');
  // Parts wrap whole onto a second line in a narrow terminal rather than being cut.
  const color = t.color(running ? 'blue' : 'gray');
  return h(
    Box,
    { flexWrap: 'wrap' },
    ...parts.map((part, i) =>
      h(
        Text,
        { key: i, color },
        `${i === 0 && running ? '● ' : ''}${part}${i < parts.length - 1 ? ' │ ' : ''}`,
      ),
    ),
  );
}

/** The input box: the text with a block cursor; a hint when empty. */
export function InputBox({
  editor,
  active,
  hint,
  completions,
  theme: t,
}: {
  editor: EditorState;
  active: boolean;
  hint: string;
  completions: readonly string[];
  theme: Theme;
}): ReactNode {
  const before = editor.text.slice(0, editor.cursor);
  const at = editor.text.slice(editor.cursor, editor.cursor + 1);
  const after = editor.text.slice(editor.cursor + 1);
  const cursorChar = at === '' || at === '\n' ? ' ' : at;
  return h(
    Box,
    { flexDirection: 'column' },
    h(
      Box,
      { borderStyle: 'round', borderColor: t.color(active ? 'cyan' : 'gray'), paddingX: 1 },
      h(Text, { color: t.color('cyan') }, '› '),
      editor.text === '' && !active
        ? h(Text, { color: t.color('gray') }, hint)
        : h(
            Text,
            { wrap: 'wrap' },
            before,
            active ? h(Text, { inverse: true }, cursorChar) : cursorChar,
            at === '\n' ? '\n' : '',
            after,
            editor.text === '' ? h(Text, { color: t.color('gray') }, ` ${hint}`) : '',
          ),
    ),
    completions.length > 0
      ? h(
          Text,
          { color: t.color('gray'), wrap: 'truncate-end' },
          printable(completions.slice(0, 12).join('  ')),
        )
      : null,
  );
}

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

function labels(request: ApprovalRequest): string[] {
  return [
    ...request.capabilities.map((l) => `${l.capability} (${l.source}: ${l.why})`),
    ...(request.ruledOut ?? []).map((l) => `no ${l.capability} (${l.source}: ${l.why})`),
  ];
}

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
