import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { resolveModel } from '../../src/agent/model.js';
import { AgentSession } from '../../src/agent/session.js';
import { providerEnv, toolResults } from '../helpers/fake-provider.js';
import { fixtureEntry, startHost } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

describe('interrupting a run while a tool runs', () => {
  it('ends the run as aborted, answers the call, and the next run sends a valid history', async () => {
    const p = scope.project('tack-interrupt-');
    const host = await startHost(p, { cat: fixtureEntry('stdio-server.js') });
    scope.defer(() => host.close());
    const provider = await scope.fake([
      { toolCalls: [{ id: 's1', name: 'mcp__cat__slow', input: { steps: 200, delayMs: 50 } }] },
      { text: 'Carrying on.' },
    ]);
    const events: AgentEvent[] = [];
    const session = await AgentSession.create({
      model: resolveModel('anthropic:claude-sonnet-4-5', providerEnv(provider)),
      cwd: p.dir,
      env: p.env,
      host,
      transcript: false,
      maxRetries: 0,
      approvals: { mode: 'ask', approver: async () => ({ decision: 'allow' }) },
      onEvent: (event) => {
        events.push(event);
      },
    });
    const controller = new AbortController();
    const running = session.run('be slow', { signal: controller.signal });
    while (!events.some((e) => e.type === 'approval' && e.decision === 'allow'))
      await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    const result = await running;
    expect(result.reason).toBe('aborted');
    const ended = events.find((e) => e.type === 'tool-result' && e.callId === 's1');
    expect(ended).toMatchObject({ isError: true, text: expect.stringContaining('Interrupted by the user') });

    const next = await session.run('go on');
    expect(next.answer).toBe('Carrying on.');
    // The interrupted call was answered in the history the model got next.
    expect(toolResults(provider.requests[1]!).map((r) => r.toolCallId)).toEqual(['s1']);
  });
});
