/**
 * A ten-step session over the example servers (examples/tack.json: notes, weather, docs, the skills and the
 * knowledge bundle), for the real `tack` binary against the fake provider: nine steps that each call one
 * read-only tool, then an answer. The prompt-cache test and benchmark both run it.
 */
import { join } from 'node:path';
import { type FakeToolCall, type FakeTurn, toolResults } from './fake-provider.js';

export const CACHE_SESSION_STEPS = 10;

const CALLS: FakeToolCall[] = [
  { name: 'mcp__weather__list_cities', input: {} },
  { name: 'mcp__weather__get_forecast', input: { city: 'Berlin' } },
  { name: 'mcp__weather__get_forecast', input: { city: 'Lisbon' } },
  { name: 'mcp__weather__get_forecast', input: { city: 'Tokyo' } },
  { name: 'mcp__notes__search_notes', input: { query: 'weather' } },
  { name: 'mcp__docs__search_docs', input: { query: 'prompt cache' } },
  { name: 'mcp__notes__search_notes', input: { query: 'travel' } },
  { name: 'mcp__docs__search_docs', input: { query: 'cost limit' } },
  { name: 'mcp__weather__get_forecast', input: { city: 'Berlin' } },
];

/** The model's side: one tool call per step until nine results are in, then the answer. */
export function cacheSessionTurn(request: Parameters<typeof toolResults>[0]): FakeTurn {
  const done = toolResults(request).length;
  const call = CALLS[done];
  return call ? { toolCalls: [call] } : { text: 'Berlin, Lisbon and Tokyo: forecasts compared.' };
}

/** `--config` with the examples' configuration, in the repository at `root`. */
export const examplesConfig = (root: string): string[] => ['--config', join(root, 'examples', 'tack.json')];

/** The arguments of `tack run --json` for the session with `model` (`provider:id`), and where to run it. */
export function cacheSessionCommand(root: string, model: string): { args: string[]; cwd: string } {
  return {
    args: [
      'run',
      'Compare the weather of the cities, and check my notes and the docs.',
      ...examplesConfig(root),
      '--model',
      model,
      '--approve',
      'auto-read-only',
      '--max-steps',
      String(CACHE_SESSION_STEPS + 2),
      '--json',
    ],
    cwd: join(root, 'examples'),
  };
}

export type SessionEvent = { type: string; [field: string]: unknown };

/** The events of a `--json` run's stdout. */
export function jsonEvents(stdout: string): SessionEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as SessionEvent);
}
