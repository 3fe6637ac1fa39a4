import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_NEW_PART_BYTES, RequestRecorder, rebuildBody } from '../../src/agent/request-record.js';
import {
  readSessionSteps,
  rebuildStep,
  rebuildStepRequest,
  stepRequest,
  stepRequests,
} from '../../src/agent/session-requests.js';
import { readTranscript, Transcript, type TranscriptEvent } from '../../src/agent/transcript.js';
import { CACHE_SESSION_STEPS, cacheSessionCommand, cacheSessionTurn } from '../helpers/cache-session.js';
import { tack } from '../helpers/cli.js';
import { OVERLOADED, providerEnv } from '../helpers/fake-provider.js';
import { REPO, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

/** The events of the project's one transcript. */
function transcript(p: TempProject): { file: string; id: string; events: TranscriptEvent[] } {
  const root = join(p.home, 'state', 'sessions');
  const files = existsSync(root)
    ? readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'))
    : [];
  expect(files).toHaveLength(1);
  const file = join(root, files[0]!);
  return {
    file,
    id: file.slice(file.lastIndexOf('/') + 1, -'.jsonl'.length),
    events: readTranscript(file).events,
  };
}

describe('the exact request of any step', () => {
  it('rebuilds every step of a ten-step Anthropic session byte for byte, storing each message once', async () => {
    const p = scope.project('tack-requests-');
    const provider = await scope.fake((request) => cacheSessionTurn(request));
    const { args, cwd } = cacheSessionCommand(REPO, 'anthropic:claude-sonnet-4-5');
    const env = { ...p.env, ...providerEnv(provider) };
    const run = await tack(args, { cwd, env });
    expect(run.code, run.stderr).toBe(0);
    expect(provider.requests).toHaveLength(CACHE_SESSION_STEPS);
    const { id, events } = transcript(p);

    // Through the library: every step's rebuilt body is what the provider received, byte for byte.
    for (let n = 1; n <= CACHE_SESSION_STEPS; n++) {
      const rebuilt = rebuildStep(events, n);
      expect(rebuilt?.text, `step ${n}`).toBe(provider.requests[n - 1]!.body);
      expect(rebuilt?.exact).toBe(true);
    }
    // Each list element (a message, a tool definition, the system block) is stored once in the session, so the
    // transcript grows with what is new, not with the whole history every step.
    const records = events.filter((e) => e.type === 'request');
    const stored = records.flatMap((r) => Object.keys(r.parts));
    expect(new Set(stored).size).toBe(stored.length);
    const storedBytes = records.reduce(
      (sum, r) => sum + r.skeleton.length + Object.values(r.parts).join('').length,
      0,
    );
    const sentBytes = provider.requests.reduce((sum, r) => sum + r.body.length, 0);
    expect(storedBytes).toBeLessThan(sentBytes / 3);
    // One step alone (the console's detail) is that step as the whole list gives it.
    const all = await stepRequests(events);
    for (const n of [1, 10]) expect(await stepRequest(events, n)).toEqual({ step: all[n - 1], steps: 10 });
    expect((await stepRequest(events, 11)).step).toBeUndefined();

    // Through the binary: the folder's sessions, the session's steps, a step's parts, a step's body.
    const list = await tack(['sessions'], { cwd, env });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(id.slice(id.lastIndexOf('-') + 1));
    const show = await tack(['sessions', 'show', id], { cwd, env });
    expect(show.code, show.stderr).toBe(0);
    const rows = show.stdout.split('\n').filter((line) => /^\d+\s+1\.\d+\s+anthropic:/.test(line));
    expect(rows).toHaveLength(CACHE_SESSION_STEPS);
    // Every part of step 1 is new; each later step adds its call, its result and the unmarked last message.
    expect(rows[0]).toMatch(/\b(\d+) of \1$/);
    expect(rows.slice(1).every((row) => /\b3 of \d+$/.test(row))).toBe(true);
    // One prefix hash for all ten steps: the cacheable prefix never changed.
    const prefix = events.find((e) => e.type === 'step-start')!.prefixHash!;
    expect(rows.every((row) => row.includes(prefix))).toBe(true);

    const detail = await tack(['sessions', 'show', id.slice(-8), '--step', '10', '--json'], { cwd, env });
    expect(detail.code, detail.stderr).toBe(0);
    const step = JSON.parse(detail.stdout) as Awaited<ReturnType<typeof stepRequests>>[number];
    expect(step).toMatchObject({ number: 10, run: 1, runStep: 10, outcome: 'answered', missing: 0 });
    expect(step.usage?.cachedInputTokens).toBe(provider.requests[9]!.usage!.cacheRead);
    // New in step 10: the ninth call and its result, and the eighth result again, now without the breakpoint it
    // carried as step 9's last message; everything else was sent before.
    const fresh = step.parts.filter((part) => part.firstStep === 10);
    expect(fresh.map((part) => part.list)).toEqual(['messages', 'messages', 'messages']);
    expect(fresh.map((part) => part.breakpoint)).toEqual([false, false, true]);
    expect([step.newParts, step.partCount]).toEqual([3, step.parts.length]);
    expect(step.parts.filter((part) => part.breakpoint).map((part) => part.list)).toEqual([
      'system',
      'messages',
    ]);
    const sentTools = (provider.requests[9]!.raw as { tools: Array<{ name: string }> }).tools;
    expect(step.parts.filter((part) => part.list === 'tools').map((part) => part.label)).toEqual(
      sentTools.map((t) => `tool ${t.name}`),
    );
    expect(step.parts.every((part) => /^[0-9a-f]{16}$/.test(part.hash) && (part.tokens ?? 0) > 0)).toBe(true);

    for (const n of [1, 10]) {
      const body = await tack(['sessions', 'show', id, '--step', String(n), '--request'], { cwd, env });
      expect(body.code, body.stderr).toBe(0);
      expect(body.stdout).toBe(provider.requests[n - 1]!.body);
      expect(body.stderr).toContain('rebuilt byte for byte');
    }

    const beyond = await tack(['sessions', 'show', id, '--step', '11'], { cwd, env });
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toContain('--step 11: the session has steps 1 to 10');
  }, 120_000);

  it("records a failed call's body and the fallback's, each as its provider received it", async () => {
    const p = scope.project('tack-requests-');
    p.write('tack.json', {
      agent: {
        fallback: ['openai-compatible:local-model'],
        prices: { 'local-model': { input: 1, output: 2 } },
      },
    });
    const provider = await scope.fake((request) =>
      request.api === 'anthropic' ? OVERLOADED : { text: 'Hello.' },
    );
    const env = { ...p.env, ...providerEnv(provider) };
    const run = await tack(['run', 'hello', '--model', 'anthropic:claude-sonnet-4-5'], { cwd: p.dir, env });
    expect(run.code, run.stderr).toBe(0);
    const { id, file } = transcript(p);
    const steps = await readSessionSteps(file);
    expect(steps.map((s) => [s.model, s.outcome, s.runStep])).toEqual([
      ['anthropic:claude-sonnet-4-5', 'failed', 1],
      ['openai-compatible:local-model', 'answered', 1],
    ]);
    expect(steps[0]!.usage).toBeUndefined();
    const anthropic = provider.requests.filter((r) => r.api === 'anthropic');
    const openai = provider.requests.filter((r) => r.api === 'openai');
    expect(rebuildStepRequest(file, 1)?.text).toBe(anthropic.at(-1)!.body);
    expect(rebuildStepRequest(file, 2)?.text).toBe(openai[0]!.body);
    const body = await tack(['sessions', 'show', id, '--step', '2', '--request'], { cwd: p.dir, env });
    expect(body.stdout).toBe(openai[0]!.body);
  }, 60_000);

  it('says when a rebuild cannot be exact: a part over the size cap, a secret the transcript masked, damage', async () => {
    const recorder = new RequestRecorder();
    const big = 'x'.repeat(MAX_NEW_PART_BYTES + 1);
    const body = {
      model: 'm',
      messages: [
        { role: 'user', content: 'short' },
        { role: 'user', content: big },
      ],
    };
    const record = recorder.record(body);
    expect(record.unstored).toHaveLength(1);
    const rebuilt = rebuildBody(record, new Map(Object.entries(record.parts)));
    expect(rebuilt.exact).toBe(false);
    expect(rebuilt.missing).toEqual(record.unstored);
    // Stored once: the same message in the next body is named by hash only.
    expect(Object.keys(recorder.record(body).parts)).toEqual([]);

    const dir = mkdtempSync(join(tmpdir(), 'tack-requests-'));
    try {
      const file = Transcript.create({ dir, sessionId: 'masked' });
      const key = `sk-ant-api03-${'a'.repeat(40)}`;
      const sent = { model: 'm', messages: [{ role: 'user', content: `use ${key}` }] };
      file.append({
        type: 'request',
        step: 1,
        model: 'anthropic:m',
        outcome: 'answered',
        ...new RequestRecorder().record(sent),
      });
      // A transcript is a file anyone could edit: a record of another shape is skipped, a damaged part is missing.
      const damaged = { type: 'request', step: 2, model: 'm', outcome: 'answered', sha256: '0', bytes: 1 };
      file.append({
        ...damaged,
        skeleton: '{',
        lists: { messages: ['abc'] },
        parts: { abc: '{broken' },
      } as never);
      file.append({ ...damaged, skeleton: '{}', lists: 'nonsense', parts: {} } as never);
      file.close();
      const { events } = readTranscript(file.file);
      const again = rebuildStep(events, 1)!;
      expect(again.text).not.toContain(key);
      expect(again.exact).toBe(false);
      expect(again.missing).toEqual([]);
      expect((await stepRequests(events)).map((s) => s.missing)).toEqual([0, 0]);
      expect(rebuildStep(events, 2)).toMatchObject({
        text: '{"messages":[null]}',
        exact: false,
        missing: ['abc'],
      });
      expect(rebuildStep(events, 3)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
