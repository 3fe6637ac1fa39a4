import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ptyTack } from '../helpers/cli.js';
import { providerEnv } from '../helpers/fake-provider.js';
import type { TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

/**
 * A chat writes its `session-end` however it is left: /exit before the first message, SIGINT or SIGTERM at the
 * prompt, SIGTERM while the model is answering. Without it the transcript and the index (and the console) showed
 * the session running forever. The real binary in a pseudo-terminal, signalled by the pid its transcript records.
 */
const scope = testScope();
const MODEL = ['--model', 'anthropic:claude-sonnet-4-5'];

interface Line {
  type: string;
  reason?: string;
  detail?: string;
  pid?: number;
  hostname?: string;
}

function transcript(p: TempProject): Line[] {
  const root = join(p.home, 'state', 'sessions');
  if (!existsSync(root)) return [];
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
  if (files.length !== 1) return [];
  return readFileSync(join(root, files[0]!), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
}

async function chat(script: Parameters<typeof scope.fake>[0] = [{ text: 'Hi.' }]) {
  const p = scope.project('tack-session-end-');
  p.write('tack.json', {});
  const provider = await scope.fake(script);
  const session = ptyTack(['chat', '--plain', ...MODEL], {
    cwd: p.dir,
    env: { ...p.env, ...providerEnv(provider) },
    onStart: (kill) => scope.defer(kill),
  });
  await session.waitFor('> ');
  const start = transcript(p).find((l) => l.type === 'session-start');
  expect(start?.pid).toBeGreaterThan(0);
  expect(start?.hostname).toBeTruthy();
  return { p, session, pid: start!.pid! };
}

function last(p: TempProject): Line | undefined {
  return transcript(p).at(-1);
}

describe('the end of a chat session', () => {
  it('is written when the chat is left before its first message', async () => {
    const { p, session } = await chat();
    session.type('/exit');
    expect(await session.exited()).toBe(0);
    expect(last(p)).toMatchObject({
      type: 'session-end',
      reason: 'aborted',
      detail: 'closed before its first task',
    });
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('is written when the process gets %s at the prompt', async (signal, code) => {
    const { p, session, pid } = await chat();
    process.kill(pid, signal);
    expect(await session.exited()).toBe(code);
    expect(last(p)).toMatchObject({
      type: 'session-end',
      reason: 'aborted',
      detail: `stopped by ${signal} before its first task`,
    });
  });

  it('is written when SIGTERM comes while the model is answering', async () => {
    let asked: () => void = () => {};
    const asking = new Promise<void>((resolve) => {
      asked = resolve;
    });
    // The model never answers: the run is in flight when the signal comes.
    const { p, session, pid } = await chat(async () => {
      asked();
      await new Promise(() => {});
      return { text: 'never' };
    });
    session.type('hello');
    await asking;
    process.kill(pid, 'SIGTERM');
    expect(await session.exited()).toBe(143);
    const ends = transcript(p).filter((l) => l.type === 'session-end');
    expect(ends).toEqual([
      expect.objectContaining({ reason: 'aborted', detail: 'stopped by SIGTERM while a task was running' }),
    ]);
  });
});
