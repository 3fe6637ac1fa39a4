import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type ModelMessage, modelMessageSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import type { AgentEvent, Usage } from '../../src/agent/events.js';
import {
  INTERRUPTED_TOOL_RESULT,
  newSessionId,
  openForResume,
  readTranscript,
  resumeState,
  Transcript,
  type TranscriptEvent,
  type TranscriptFailure,
} from '../../src/agent/transcript.js';
import { resolvePaths } from '../../src/config/paths.js';
import { TackError } from '../../src/errors.js';
import type { SessionRow } from '../../src/store/sessions.js';
import { TackStore } from '../../src/store/store.js';
import { REPO, tempProject } from '../helpers/project.js';

function setup() {
  const project = tempProject('tack-transcript-');
  const paths = resolvePaths(project.env);
  const store = TackStore.open(paths.storeFile);
  const dir = join(paths.stateDir, 'sessions');
  return {
    project,
    store,
    dir,
    storeFile: paths.storeFile,
    [Symbol.dispose]() {
      store.close();
      project[Symbol.dispose]();
    },
  };
}

const usage = (inputTokens: number, outputTokens: number, costUsd = 0): Usage => ({
  inputTokens,
  outputTokens,
  cachedInputTokens: 0,
  costUsd,
});

const start = (
  sessionId: string,
  extra: Partial<Extract<AgentEvent, { type: 'session-start' }>> = {},
): AgentEvent => ({
  type: 'session-start',
  sessionId,
  model: 'fake:model',
  cwd: '/work/project',
  guidelinesHash: 'a'.repeat(64),
  guidelinesSources: [],
  ...extra,
});

const user = (content: string): AgentEvent => ({ type: 'message', message: { role: 'user', content } });
const assistantText = (text: string): AgentEvent => ({
  type: 'message',
  message: { role: 'assistant', content: [{ type: 'text', text }] },
});
const assistantCalls = (...calls: Array<[id: string, name: string]>): AgentEvent => ({
  type: 'message',
  message: {
    role: 'assistant',
    content: calls.map(([toolCallId, toolName]) => ({
      type: 'tool-call',
      toolCallId,
      toolName,
      input: { q: toolCallId },
    })),
  },
});
const toolMessage = (...results: Array<[id: string, name: string, text: string]>): AgentEvent => ({
  type: 'message',
  message: {
    role: 'tool',
    content: results.map(([toolCallId, toolName, value]) => ({
      type: 'tool-result',
      toolCallId,
      toolName,
      output: { type: 'text', value },
    })),
  },
});

/** Events as stored: seq and at are added, nothing else changes. */
function stripped(events: readonly TranscriptEvent[]): AgentEvent[] {
  return events.map(({ seq: _seq, at: _at, ...event }) => event as AgentEvent);
}

function expectValidHistory(messages: ModelMessage[]): void {
  for (const message of messages) expect(modelMessageSchema.safeParse(message).success).toBe(true);
}

describe('Transcript', () => {
  it('writes every event but text deltas as one JSON line, and keeps the index row current', async () => {
    using env = setup();
    const failures: TranscriptFailure[] = [];
    const transcript = Transcript.create({
      dir: env.dir,
      index: env.store.sessions,
      onError: (failure) => failures.push(failure),
    });
    const id = transcript.sessionId;
    expect(id).toMatch(/^\d{8}-\d{4}-[0-9a-f]{8}$/);
    // The day folder is the id's UTC day (taken from the id, not from a clock read again here: across midnight
    // the two differ).
    const day = `${id.slice(0, 4)}-${id.slice(4, 6)}-${id.slice(6, 8)}`;
    expect(transcript.file).toBe(join(env.dir, day, `${id}.jsonl`));

    const events: AgentEvent[] = [
      start(id),
      user(`  Summarise\nthe notes about ${'x'.repeat(100)}`),
      { type: 'step-start', step: 1, tools: 2 },
      { type: 'text-delta', text: 'Let me ' },
      assistantCalls(['call_1', 'mcp__notes__search_notes']),
      {
        type: 'tool-call',
        step: 1,
        callId: 'call_1',
        name: 'mcp__notes__search_notes',
        arguments: { q: 'x' },
        server: 'notes',
      },
      {
        type: 'approval',
        callId: 'call_1',
        name: 'mcp__notes__search_notes',
        decision: 'allow',
        by: 'policy',
        reason: 'read-only',
      },
      {
        type: 'tool-result',
        callId: 'call_1',
        name: 'mcp__notes__search_notes',
        isError: false,
        text: 'two notes',
        durationMs: 12,
      },
      toolMessage(['call_1', 'mcp__notes__search_notes', 'two notes']),
      { type: 'usage', step: 1, stepUsage: usage(100, 20, 0.01), total: usage(100, 20, 0.01) },
      { type: 'step-start', step: 2, tools: 2 },
      { type: 'text-delta', text: 'Done' },
      assistantText('Done.'),
      { type: 'usage', step: 2, stepUsage: usage(150, 5, 0.02), total: usage(250, 25, 0.03) },
    ];
    for (const event of events) transcript.append(event);

    const running = await env.store.sessions.get(id);
    expect(running).toMatchObject({
      id,
      status: 'running',
      cwd: '/work/project',
      model: 'fake:model',
      file: transcript.file,
      guidelinesHash: 'a'.repeat(64),
      steps: 2,
      inputTokens: 250,
      outputTokens: 25,
      costUsd: 0.03,
    });
    expect(running?.title).toBe(
      `Summarise the notes about ${'x'.repeat(80 - 'Summarise the notes about '.length - 1)}…`,
    );
    expect(running?.title).toHaveLength(80);

    const end: AgentEvent = {
      type: 'session-end',
      reason: 'completed',
      detail: 'answered',
      answer: 'Done.',
      total: usage(250, 25, 0.03),
      steps: 2,
    };
    transcript.append(end);
    transcript.close();

    const lines = readFileSync(transcript.file, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toMatch(/^\{"seq":1,"at":"\d{4}-\d\d-\d\dT[\d:.]+Z","type":"session-start",/);

    const { events: read, problems } = readTranscript(transcript.file);
    expect(problems).toEqual([]);
    expect(read.map((event) => event.seq)).toEqual(read.map((_, i) => i + 1));
    expect(stripped(read)).toEqual([...events.filter((event) => event.type !== 'text-delta'), end]);

    const row = await env.store.sessions.get(id);
    expect(row).toMatchObject({ status: 'completed', steps: 2, inputTokens: 250, outputTokens: 25 });
    expect(row?.startedAt).toBe(read[0]?.at);
    expect(row?.updatedAt).toBe(read.at(-1)?.at);
    expect(failures).toEqual([]);
    expect(() => transcript.append(user('late'))).toThrow(/closed/);
  });

  it('writes binary message content as base64, which the AI SDK reads back', async () => {
    using env = setup();
    using transcript = Transcript.create({ dir: env.dir });
    transcript.append(start(transcript.sessionId));
    const data = new Uint8Array([1, 2, 3, 250]);
    transcript.append({
      type: 'message',
      message: { role: 'user', content: [{ type: 'file', data, mediaType: 'application/octet-stream' }] },
    });
    const [, message] = readTranscript(transcript.file).events;
    expect(message).toMatchObject({ message: { content: [{ data: Buffer.from(data).toString('base64') }] } });
    expectValidHistory(resumeState(readTranscript(transcript.file).events).messages);
  });

  it('refuses to create over an existing transcript and checks explicit ids', async () => {
    using env = setup();
    Transcript.create({ dir: env.dir, sessionId: 'fixed-1' }).close();
    expect(() => Transcript.create({ dir: env.dir, sessionId: 'fixed-1' })).toThrow(/cannot create/);
    expect(() => Transcript.create({ dir: env.dir, sessionId: '../escape' })).toThrow(
      /not a valid session id/,
    );
  });

  it('survives its directory being removed: the file is recreated with everything written so far', async () => {
    using env = setup();
    const failures: TranscriptFailure[] = [];
    using transcript = Transcript.create({ dir: env.dir, onError: (failure) => failures.push(failure) });
    transcript.append(start(transcript.sessionId));
    transcript.append(user('hello'));
    rmSync(env.dir, { recursive: true });
    transcript.append(assistantText('hi'));
    transcript.append({ type: 'usage', step: 1, stepUsage: usage(1, 1), total: usage(1, 1) });
    transcript.append(assistantText('again'));
    expect(failures.map((failure) => failure.kind)).toEqual(['removed']);
    const { events, problems } = readTranscript(transcript.file);
    expect(problems).toEqual([]);
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it.runIf(process.platform === 'linux')(
    'reports a failing disk once and keeps the events for a retry',
    async () => {
      using env = setup();
      const failures: TranscriptFailure[] = [];
      // /dev/full answers every write with ENOSPC.
      using transcript = Transcript.reopen({
        file: '/dev/full',
        sessionId: 'full',
        nextSeq: 1,
        index: env.store.sessions,
        onError: (failure) => failures.push(failure),
      });
      for (const event of [start('full'), user('hello'), assistantText('hi')]) transcript.append(event);
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ kind: 'write', file: '/dev/full' });
      expect(failures[0]?.message).toMatch(/ENOSPC/);
      expect(transcript.health).toEqual({ pendingEvents: 3, droppedEvents: 0 });
      // The index does not depend on the file.
      expect(await env.store.sessions.get('full')).toMatchObject({ status: 'running', title: 'hello' });
      // Memory is bounded: past 16 MiB pending, new lines are given up on (and counted).
      for (let i = 0; i < 20; i++) transcript.append(assistantText('x'.repeat(1024 * 1024)));
      expect(transcript.health.pendingEvents).toBeLessThan(23);
      expect(transcript.health.droppedEvents).toBe(23 - transcript.health.pendingEvents);
      expect(failures).toHaveLength(1);
    },
  );
});

describe('SessionIndex', () => {
  const row = (id: string, startedAt: string, cwd = '/a'): SessionRow => ({
    id,
    startedAt,
    updatedAt: startedAt,
    cwd,
    model: 'm',
    status: 'completed',
    file: `/nowhere/${id}.jsonl`,
    steps: 1,
    inputTokens: 1,
    outputTokens: 1,
    costUsd: 0,
  });

  it('lists newest first, optionally for one directory, and finds sessions by id or prefix', async () => {
    using env = setup();
    const sessions = env.store.sessions;
    await sessions.upsert(row('20261130-0215-aaaa1111', '2026-11-30T02:15:00.000Z'));
    await sessions.upsert(row('20261130-0215-aaaa2222', '2026-11-30T02:15:30.000Z', '/b'));
    await sessions.upsert(row('20261130-0300-bbbb3333', '2026-11-30T03:00:00.000Z'));
    await sessions.upsert({ ...row('20261130-0300-bbbb3333', '2026-11-30T03:00:00.000Z'), title: 'updated' });

    expect((await sessions.list()).map((session) => session.id)).toEqual([
      '20261130-0300-bbbb3333',
      '20261130-0215-aaaa2222',
      '20261130-0215-aaaa1111',
    ]);
    expect(await sessions.list({ limit: 1 })).toHaveLength(1);
    expect((await sessions.list({ cwd: '/a' })).map((session) => session.id)).toEqual([
      '20261130-0300-bbbb3333',
      '20261130-0215-aaaa1111',
    ]);
    expect(await sessions.get('20261130-0300-bbbb3333')).toMatchObject({
      title: 'updated',
      parentId: undefined,
    });

    // Unique: by the random tail (what users copy), by the start of the id, or the whole id.
    expect((await sessions.findByPrefix('bbbb'))?.id).toBe('20261130-0300-bbbb3333');
    expect((await sessions.findByPrefix('aaaa1'))?.id).toBe('20261130-0215-aaaa1111');
    expect((await sessions.findByPrefix('20261130-03'))?.id).toBe('20261130-0300-bbbb3333');
    expect((await sessions.findByPrefix('20261130-0215-aaaa2222'))?.id).toBe('20261130-0215-aaaa2222');
    // None: the middle of an id is not a prefix, and LIKE wildcards are literal.
    expect(await sessions.findByPrefix('cccc')).toBeUndefined();
    expect(await sessions.findByPrefix('0215')).toBeUndefined();
    expect(await sessions.findByPrefix('%')).toBeUndefined();
    expect(await sessions.findByPrefix('____')).toBeUndefined();
    // Ambiguous: an error listing the candidates.
    for (const prefix of ['aaaa', '20261130']) {
      try {
        await sessions.findByPrefix(prefix);
        expect.unreachable();
      } catch (error) {
        expect(TackError.isInstance(error) && error.code).toBe('USAGE');
        expect((error as TackError).message).toMatch(/is ambiguous: \d sessions match/);
        expect((error as TackError).details.join('\n')).toContain('20261130-0215-aaaa1111');
        expect((error as TackError).details.join('\n')).toContain('20261130-0215-aaaa2222');
      }
    }
  });
});

describe('resume', () => {
  const CHILD = `
const [transcriptUrl, storeUrl, dir, storeFile, sessionId, steps] = process.argv.slice(1);
const { Transcript } = await import(transcriptUrl);
const { TackStore } = await import(storeUrl);
const store = TackStore.open(storeFile);
const t = Transcript.create({ dir, sessionId, index: store.sessions });
t.append({ type: 'session-start', sessionId, model: 'fake:model', cwd: '/w', guidelinesHash: 'h', guidelinesSources: [] });
t.append({ type: 'message', message: { role: 'user', content: 'count' } });
let total = 0;
for (let step = 1; step <= Number(steps); step++) {
  const callId = 'call_' + step;
  t.append({ type: 'step-start', step, tools: 1 });
  t.append({ type: 'text-delta', text: 'counting' });
  t.append({ type: 'message', message: { role: 'assistant', content: [{ type: 'tool-call', toolCallId: callId, toolName: 'count', input: { n: step } }] } });
  t.append({ type: 'tool-call', step, callId, name: 'count', arguments: { n: step } });
  t.append({ type: 'tool-result', callId, name: 'count', isError: false, text: String(step), durationMs: 1 });
  t.append({ type: 'message', message: { role: 'tool', content: [{ type: 'tool-result', toolCallId: callId, toolName: 'count', output: { type: 'text', value: String(step) } }] } });
  total += 10;
  const u = { inputTokens: total, outputTokens: step, cachedInputTokens: 0, costUsd: 0 };
  t.append({ type: 'usage', step, stepUsage: u, total: u });
}
t.append({ type: 'message', message: { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_last', toolName: 'count', input: { n: 0 } }] } });
t.append({ type: 'tool-call', step: Number(steps), callId: 'call_last', name: 'count', arguments: { n: 0 } });
process.kill(process.pid, 'SIGKILL');
`;

  it('loses nothing when the process is killed right after an append, and resumes into a valid history', async () => {
    using env = setup();
    const transcriptJs = join(REPO, 'dist', 'src', 'agent', 'transcript.js');
    const storeJs = join(REPO, 'dist', 'src', 'store', 'store.js');
    expect(existsSync(transcriptJs), `${transcriptJs} is missing: run \`npm run build\``).toBe(true);
    const sessionId = newSessionId();
    const steps = 150;
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        CHILD,
        pathToFileURL(transcriptJs).href,
        pathToFileURL(storeJs).href,
        env.dir,
        env.storeFile,
        sessionId,
        String(steps),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    );
    expect({ code, signal, stderr }).toEqual({ code: null, signal: 'SIGKILL', stderr: '' });

    // Users type the random tail; the index (written by the child) finds the file.
    const resumed = await openForResume(env.dir, sessionId.slice(-8), env.store.sessions);
    using transcript = resumed.transcript;
    const written = 2 + steps * 6 + 2;
    expect(resumed.problems).toEqual([]);
    const { events } = readTranscript(resumed.file);
    expect(events).toHaveLength(written);
    expect(events.at(-1)).toMatchObject({ seq: written, type: 'tool-call', callId: 'call_last' });

    const { state } = resumed;
    expect(state.sessionId).toBe(sessionId);
    expect(state.ended).toBe(false);
    expect(state.steps).toBe(steps);
    expect(state.usage).toMatchObject({ inputTokens: steps * 10, outputTokens: steps });
    // user + (assistant, tool) per step + the dangling call + its synthetic result
    expect(state.messages).toHaveLength(1 + steps * 2 + 2);
    expect(state.messages.at(-1)).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_last',
          toolName: 'count',
          output: { type: 'error-text', value: INTERRUPTED_TOOL_RESULT },
        },
      ],
    });
    expectValidHistory(state.messages);
    expect(state.notes.join('\n')).toMatch(/count \(call_last\): no result \(it had started\)/);
    expect(state.notes.join('\n')).toMatch(/did not end/);

    expect(await env.store.sessions.get(sessionId)).toMatchObject({
      status: 'running',
      title: 'count',
      steps,
      inputTokens: steps * 10,
    });

    // The resumed run appends to the same file and continues the numbering.
    expect(transcript.file).toBe(resumed.file);
    expect(transcript.nextSeq).toBe(written + 1);
    transcript.append(start(sessionId, { resumedFrom: sessionId }));
    transcript.append({
      type: 'session-end',
      reason: 'completed',
      detail: '',
      total: usage(5000, 200),
      steps: 151,
    });
    transcript.close();
    const again = readTranscript(resumed.file);
    expect(again.problems).toEqual([]);
    expect(again.events.at(-2)).toMatchObject({
      seq: written + 1,
      type: 'session-start',
      resumedFrom: sessionId,
    });
    expect(resumeState(again.events).ended).toBe(true);
    const row = await env.store.sessions.get(sessionId);
    expect(row).toMatchObject({ status: 'completed', steps: 151, inputTokens: 5000, title: 'count' });
    expect(row?.startedAt).toBe(events[0]?.at);
  });

  it('skips and reports a torn last line, and appends after it on a line of its own', async () => {
    using env = setup();
    const transcript = Transcript.create({ dir: env.dir, index: env.store.sessions });
    const id = transcript.sessionId;
    transcript.append(start(id));
    transcript.append(user('hello'));
    transcript.close();
    appendFileSync(transcript.file, '{"seq":3,"at":"2026-11-30T02:15:00.000Z","type":"mess');

    const torn = readTranscript(transcript.file);
    expect(torn.events).toHaveLength(2);
    expect(torn.problems).toEqual([
      'line 3: the last line is incomplete (the session stopped while writing it); skipped',
    ]);

    const resumed = await openForResume(env.dir, id, env.store.sessions);
    expect(resumed.problems).toEqual(torn.problems);
    expect(resumed.state.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(resumed.state.notes).toContain('the last user message has no answer yet');
    resumed.transcript.append(assistantText('hi'));
    resumed.transcript.close();

    const after = readTranscript(transcript.file);
    expect(after.events.map((event) => event.seq)).toEqual([1, 2, 3]);
    expect(after.events.at(-1)).toMatchObject({ type: 'message', message: { role: 'assistant' } });
    expect(after.problems).toEqual(['line 3: not valid JSON (a write cut short?); skipped']);
  });

  it('keeps lines of unknown event types and reports malformed ones and gaps', async () => {
    using env = setup();
    const file = join(env.project.dir, 'odd.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({ seq: 1, at: 'now', ...start('odd') }),
        JSON.stringify({ seq: 2, at: 'now', type: 'from-the-future', payload: 1 }),
        '[1, 2]',
        JSON.stringify({ seq: 5, at: 'now', ...user('hi') }),
        '',
      ].join('\n'),
    );
    const { events, problems } = readTranscript(file);
    expect(events.map((event) => event.type)).toEqual(['session-start', 'from-the-future', 'message']);
    expect(problems).toEqual([
      'line 3: not a transcript event (no type, seq or at); skipped',
      'line 4: seq jumps from 2 to 5: 2 events are missing',
    ]);
    expect(resumeState(events).messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('says a session did not end only when it had started work: a chat opened and left lost nothing', () => {
    const stamp = (events: AgentEvent[]) => events.map((event, i) => ({ seq: i + 1, at: 'now', ...event }));
    expect(resumeState(stamp([start('idle')])).notes).toEqual([]);
    expect(resumeState(stamp([start('busy'), user('hi')])).notes).toContain(
      'the session did not end: it crashed, was killed, or is still running',
    );
  });

  it('gives every tool call left without a result one: the recorded result if there is one, else unknown', async () => {
    const events: AgentEvent[] = [
      start('s'),
      user('go'),
      assistantCalls(['a', 'read'], ['b', 'write'], ['c', 'delete']),
      { type: 'tool-call', step: 1, callId: 'a', name: 'read', arguments: {} },
      { type: 'tool-call', step: 1, callId: 'b', name: 'write', arguments: {} },
      {
        type: 'tool-result',
        callId: 'b',
        name: 'write',
        isError: true,
        text: 'permission denied',
        durationMs: 3,
      },
      // Only a's result made it into a message before the crash; c never started.
      toolMessage(['a', 'read', 'content']),
      user('are you there?'),
    ];
    const stored = events.map((event, i) => ({ ...event, seq: i + 1, at: 'now' }) as TranscriptEvent);
    const state = resumeState(stored);
    expect(state.sessionId).toBe('s');
    expect(state.messages).toHaveLength(4);
    expect(state.messages[2]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'a',
          toolName: 'read',
          output: { type: 'text', value: 'content' },
        },
        {
          type: 'tool-result',
          toolCallId: 'b',
          toolName: 'write',
          output: { type: 'error-text', value: 'permission denied' },
        },
        {
          type: 'tool-result',
          toolCallId: 'c',
          toolName: 'delete',
          output: { type: 'error-text', value: INTERRUPTED_TOOL_RESULT },
        },
      ],
    });
    expect(state.messages[3]).toEqual({ role: 'user', content: 'are you there?' });
    expectValidHistory(state.messages);
    expect(state.notes).toEqual([
      'write (b): its result was recorded but not the message carrying it; restored it',
      'delete (c): no result (no sign it started); told the model its outcome is unknown',
      'the session did not end: it crashed, was killed, or is still running',
      'the last user message has no answer yet',
    ]);

    // Without any tool message after the call, the results get one of their own right after it.
    const bare = resumeState(stored.slice(0, 3));
    expect(bare.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expectValidHistory(bare.messages);
  });

  it('starts from the last compaction and the messages after it', async () => {
    using env = setup();
    const transcript = Transcript.create({ dir: env.dir, index: env.store.sessions });
    const summary: ModelMessage[] = [
      { role: 'user', content: 'Summary of the conversation so far: counted to 2.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Understood.' }] },
    ];
    const events: AgentEvent[] = [
      start(transcript.sessionId),
      user('count'),
      assistantText('1'),
      {
        type: 'compaction',
        tokensBefore: 1000,
        tokensAfter: 100,
        elidedToolResults: 0,
        summarizedMessages: 2,
        messages: [{ role: 'user', content: 'old summary' }],
      },
      user('more'),
      assistantText('2'),
      {
        type: 'compaction',
        tokensBefore: 900,
        tokensAfter: 90,
        elidedToolResults: 1,
        summarizedMessages: 3,
        messages: summary,
      },
      user('continue'),
      assistantText('3'),
      { type: 'session-end', reason: 'max-steps', detail: 'step limit', total: usage(10, 2), steps: 3 },
    ];
    for (const event of events) transcript.append(event);
    transcript.close();

    const resumed = await openForResume(env.dir, transcript.sessionId, env.store.sessions);
    resumed.transcript.close();
    expect(resumed.state.messages).toEqual([
      ...summary,
      { role: 'user', content: 'continue' },
      { role: 'assistant', content: [{ type: 'text', text: '3' }] },
    ]);
    expect(resumed.state).toMatchObject({
      ended: true,
      steps: 3,
      lastEnd: { reason: 'max-steps' },
      notes: [],
    });
    expect(await env.store.sessions.get(transcript.sessionId)).toMatchObject({
      status: 'max-steps',
      title: 'count',
    });
  });

  it('finds transcripts the index does not know, and reports unknown and ambiguous ids', async () => {
    using env = setup();
    const ids = ['20261130-0215-aaaa1111', '20261130-0215-aaaa2222'];
    for (const sessionId of ids) {
      using transcript = Transcript.create({ dir: env.dir, sessionId });
      transcript.append(start(sessionId));
      transcript.append(user(`I am ${sessionId}`));
    }
    // No index at all, then an empty index: the files decide.
    const scanned = await openForResume(env.dir, 'aaaa2', undefined);
    scanned.transcript.close();
    expect(scanned.state.sessionId).toBe(ids[1]);
    const indexed = await openForResume(env.dir, 'aaaa1', env.store.sessions);
    indexed.transcript.close();
    expect(indexed.state.sessionId).toBe(ids[0]);
    // Resuming rebuilt the missing index row from the file.
    expect(await env.store.sessions.get(ids[0]!)).toMatchObject({
      title: `I am ${ids[0]}`,
      status: 'running',
    });

    await expect(openForResume(env.dir, 'zzzz', env.store.sessions)).rejects.toThrow(
      /no session matches 'zzzz'/,
    );
    // One candidate is indexed, the other only on disk: the scan still sees both.
    await env.store.sessions.upsert({
      ...(await env.store.sessions.get(ids[0]!))!,
      id: 'elsewhere-0000',
      file: '/gone.jsonl',
    });
    await expect(openForResume(env.dir, 'aaaa', undefined)).rejects.toThrow(/is ambiguous: 2 sessions match/);
    await expect(openForResume(env.dir, 'elsewhere', env.store.sessions)).rejects.toThrow(
      /transcript of session .* is gone/,
    );
  });
});
