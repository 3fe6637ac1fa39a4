/**
 * A ten-step session over the example servers (examples/tack.json: notes, weather, docs, the skills and the
 * knowledge bundle), run by the real `tack` binary against the fake provider: nine steps that each call one
 * read-only tool, then an answer. The prompt-cache test and benchmark both run it.
 */
import { join } from 'node:path';
import { tack, tackPiped } from './cli.js';
import {
  type FakeProvider,
  type FakeToolCall,
  type FakeTurn,
  providerEnv,
  toolResults,
} from './fake-provider.js';
import { REPO } from './project.js';

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

export interface CacheSessionRun {
  code: number;
  stderr: string;
  /** The run's events, from `--json`. */
  events: Array<{ type: string; [field: string]: unknown }>;
}

const CONFIG = ['--config', join(REPO, 'examples', 'tack.json')];

/**
 * `tack chat --plain` with the examples' configuration and `lines` piped to its stdin (user messages, commands),
 * ended by the end of input; `kill` is called with a function that ends the process, for the test's cleanup.
 */
export function chatWithExamples(
  provider: FakeProvider,
  model: string,
  lines: string[],
  env: Record<string, string | undefined>,
  kill: (end: () => void) => void,
): ReturnType<typeof tackPiped> {
  return tackPiped(['chat', '--plain', ...CONFIG, '--model', model], `${lines.join('\n')}\n`, {
    cwd: join(REPO, 'examples'),
    env: { ...env, ...providerEnv(provider) },
    defer: kill,
  });
}

/** Runs the session through `tack run --json` with the examples' configuration and `model` (`provider:id`). */
export async function runCacheSession(
  provider: FakeProvider,
  model: string,
  env: Record<string, string | undefined>,
): Promise<CacheSessionRun> {
  const run = await tack(
    [
      'run',
      'Compare the weather of the cities, and check my notes and the docs.',
      ...CONFIG,
      '--model',
      model,
      '--approve',
      'auto-read-only',
      '--max-steps',
      String(CACHE_SESSION_STEPS + 2),
      '--json',
    ],
    { cwd: join(REPO, 'examples'), env: { ...env, ...providerEnv(provider) } },
  );
  const events = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as CacheSessionRun['events'][number]);
  return { code: run.code, stderr: run.stderr, events };
}
