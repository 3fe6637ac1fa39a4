import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { resolveModel } from '../../src/agent/model.js';
import { type AgentOptions, AgentSession } from '../../src/agent/session.js';
import { nativeAgentTools } from '../../src/agent/toolset.js';
import { KnowledgeBase } from '../../src/knowledge/knowledge.js';
import { knowledgeTools } from '../../src/knowledge/tools.js';
import { SkillLibrary } from '../../src/skills/library.js';
import { skillTools } from '../../src/skills/tools.js';
import type { NativeTool } from '../../src/tools/native.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { providerEnv } from '../helpers/fake-provider.js';
import { REPO, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const SKILLS = join(REPO, 'examples', 'skills', 'team');
const ACME = join(REPO, 'test', 'fixtures', 'okf', 'acme_retail');

const scope = testScope();
const { fake } = scope;

async function session(
  provider: FakeProvider,
  p: TempProject,
  options: Partial<AgentOptions> = {},
): Promise<{ session: AgentSession; events: AgentEvent[] }> {
  const events: AgentEvent[] = [];
  const s = await AgentSession.create({
    model: resolveModel('anthropic:claude-sonnet-4-5', providerEnv(provider)),
    cwd: p.dir,
    env: p.env,
    transcript: false,
    maxRetries: 0,
    onEvent: (e) => events.push(e),
    ...options,
  });
  return { session: s, events };
}

/** A native tool that asks before every call and runs at once. */
const writeThing: NativeTool = {
  name: 'write_thing',
  description: 'Writes a thing.',
  inputSchema: { type: 'object', properties: { x: { type: 'number' } } },
  alwaysAsk: true,
  execute: async () => ({ text: 'written' }),
};

describe('session events', () => {
  it('announce the approval prompt, and time the wait for a person apart from the run', async () => {
    const p = scope.project('tack-events-');
    const provider = await fake([
      { toolCalls: [{ id: 'w1', name: 'write_thing', input: { x: 1 } }] },
      { text: 'done' },
    ]);
    // The tool's own time lies between the person's answer and the result: measured here around it, so a
    // loaded machine that is slow to run the tool cannot fail the check (a fixed bound once could).
    let answeredAt = 0;
    let resultAt = 0;
    const events: AgentEvent[] = [];
    const { session: s } = await session(provider, p, {
      tools: [writeThing],
      onEvent: (e) => {
        if (e.type === 'tool-result') resultAt = performance.now();
        events.push(e);
      },
      approvals: {
        approver: async () => {
          await sleep(300);
          answeredAt = performance.now();
          return { decision: 'allow' };
        },
      },
    });
    await s.run('write it');
    const call = events.filter((e) =>
      ['tool-call', 'approval-request', 'approval', 'tool-result'].includes(e.type),
    );
    expect(call.map((e) => e.type)).toEqual(['tool-call', 'approval-request', 'approval', 'tool-result']);
    expect(call[1]).toMatchObject({ callId: 'w1', name: 'write_thing', why: 'runs code on this machine' });
    const approval = call[2] as Extract<AgentEvent, { type: 'approval' }>;
    const result = call[3] as Extract<AgentEvent, { type: 'tool-result' }>;
    expect(approval).toMatchObject({ decision: 'allow', by: 'user' });
    expect(approval.waitMs).toBeGreaterThanOrEqual(250);
    expect(result.waitMs).toBe(approval.waitMs);
    // The run itself is immediate: the person's 300 ms are not the tool's.
    expect(result.durationMs).toBeLessThanOrEqual(Math.ceil(resultAt - answeredAt));
  });

  it('carry no wait when nobody was asked', async () => {
    const p = scope.project('tack-events-');
    const provider = await fake([
      { toolCalls: [{ id: 'w1', name: 'write_thing', input: { x: 1 } }] },
      { text: 'denied' },
    ]);
    const { session: s, events } = await session(provider, p, {
      tools: [writeThing],
      approvals: { mode: 'never' },
    });
    await s.run('write it');
    expect(events.map((e) => e.type)).not.toContain('approval-request');
    const result = events.find((e) => e.type === 'tool-result');
    expect(result).toMatchObject({ isError: true, durationMs: 0 });
    expect(result).not.toHaveProperty('waitMs');
  });

  it('nest a sub-agent’s work under the task call that started it', async () => {
    const p = scope.project('tack-events-');
    const knowledge = await KnowledgeBase.load([ACME]);
    const provider = await fake((_request, i) => {
      if (i === 0)
        return {
          toolCalls: [
            {
              id: 't1',
              name: 'task',
              input: { description: 'find the policy', prompt: 'Find it.', tools: ['search_knowledge'] },
            },
          ],
        };
      if (i === 1)
        return { toolCalls: [{ id: 's1', name: 'search_knowledge', input: { query: 'revenue' } }] };
      if (i === 2) return { text: 'Found it.' };
      return { text: 'The sub-agent found it.' };
    });
    const { session: s, events } = await session(provider, p, { knowledge });
    await s.run('use a sub-agent');
    const start = events.findIndex((e) => e.type === 'subagent-start');
    const end = events.findIndex((e) => e.type === 'subagent-end');
    expect(events[start]).toMatchObject({
      callId: 't1',
      description: 'find the policy',
      tools: ['search_knowledge'],
      maxSteps: 20,
    });
    expect(events[end]).toMatchObject({ callId: 't1', reason: 'completed', steps: 2 });
    const nested = events.slice(start + 1, end);
    expect(nested.every((e) => e.type === 'subagent' && e.callId === 't1')).toBe(true);
    const inner = nested.flatMap((e) => (e.type === 'subagent' ? [e.event] : []));
    expect(inner.map((e) => e.type)).toEqual(
      expect.arrayContaining(['step-start', 'tool-call', 'tool-result', 'usage']),
    );
    expect(inner.find((e) => e.type === 'tool-call')).toMatchObject({
      callId: 's1',
      name: 'search_knowledge',
    });
    // Only the parent's own calls are top-level; the task's result follows its sub-agent's end.
    expect(events.filter((e) => e.type === 'tool-call').map((e) => e.type === 'tool-call' && e.name)).toEqual(
      ['task'],
    );
    expect(events.findIndex((e) => e.type === 'tool-result')).toBeGreaterThan(end);
  });
});

describe('tack’s own tools', () => {
  it('carry the labels they declare, less what an enforced sandbox rules out', async () => {
    const skills = await SkillLibrary.discover({ home: '/nonexistent', configFolders: [SKILLS] });
    const tools = nativeAgentTools(skillTools(skills));
    const script = tools.find((t) => t.name === 'run_skill_script')!;
    expect(script.alwaysAsk).toBe(true);
    expect(script.readOnlyHint).toBe(false);
    expect(script.capabilities?.map((l) => `${l.capability}:${l.source}:${l.why}`)).toEqual([
      'egress:default:runs code on this machine',
      'destructive:default:runs code on this machine',
    ]);
    expect(tools.find((t) => t.name === 'activate_skill')).toMatchObject({
      capabilities: [],
      alwaysAsk: false,
    });

    const sandboxed = nativeAgentTools(skillTools(skills), {
      skillScripts: { noNetwork: true, noPrivateFiles: true, network: 'no network', files: 'no home' },
    }).find((t) => t.name === 'run_skill_script')!;
    expect(sandboxed.capabilities?.map((l) => l.capability)).toEqual(['destructive']);
    expect(sandboxed.ruledOut?.map((l) => `${l.capability}:${l.source}`)).toEqual(['egress:sandbox']);

    const knowledge = nativeAgentTools(knowledgeTools(await KnowledgeBase.load([ACME])));
    for (const tool of knowledge)
      expect(tool.capabilities?.map((l) => `${l.capability}:${l.source}`)).toEqual(['private-data:default']);
  });
});
