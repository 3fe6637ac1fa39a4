import { Box, Text } from 'ink';
import { createElement as h, type ReactNode } from 'react';
import { formatTokens } from './format.js';
import type { Theme } from './theme.js';
import type { StatusFigures } from './transcript-view.js';

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

/** The last line: model, context used of the window, cost, tools, servers, active skills. */
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
  // The share of the session's input the provider served from its prompt cache, once it served any.
  const cached =
    figures.cachedInputTokens > 0 && figures.inputTokens > 0
      ? ` (${Math.round((Math.min(figures.cachedInputTokens, figures.inputTokens) / figures.inputTokens) * 100)}% cached)`
      : '';
  const parts = [
    figures.model,
    `ctx ${formatTokens(figures.contextTokens)}/${formatTokens(window)} (${percent}%)`,
    `$${figures.costUsd.toFixed(4)}${cached}`,
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
