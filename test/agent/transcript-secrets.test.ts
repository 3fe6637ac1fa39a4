import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent } from '../../src/agent/agent.js';
import { readTranscript } from '../../src/agent/transcript.js';
import { MASK } from '../../src/util/secrets.js';
import { providerEnv, startFakeProvider, toolResults } from '../helpers/fake-provider.js';
import { fixtureEntry, tempProject } from '../helpers/project.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Given to the server in its configured env; the server returns it from its `status` tool. */
const TOKEN = 'vault-T0ken-5f1e9a7c';
/** The key shape the server returns too: nobody configured it (the fixture assembles it the same way). */
const OPENAI_KEY = `sk-proj-${'Qm4Lr8Tz'.repeat(4)}`;

describe('transcripts mask secrets', () => {
  it('a configured env value and a key-shaped string in a tool result never reach the JSONL file', async () => {
    const p = tempProject('tack-secrets-');
    cleanups.push(() => p[Symbol.dispose]());
    const provider = await startFakeProvider([
      { text: 'Checking the vault.', toolCalls: [{ name: 'mcp__vault__status', input: {} }] },
      { text: `It is connected (token ending ${TOKEN.slice(-8)}).` },
    ]);
    cleanups.push(() => provider.close());
    const config = p.config({
      vault: fixtureEntry('secret-server.js', [], { env: { SERVICE_TOKEN: TOKEN } }),
    });
    const agent = await startAgent({
      config,
      model: 'anthropic:claude-sonnet-4-5',
      env: { ...p.env, ...providerEnv(provider) },
      cwd: p.dir,
      trustProject: true,
      approver: async () => ({ decision: 'allow' }),
      session: { maxRetries: 0 },
    });
    cleanups.push(() => agent.close());
    const result = await agent.session.run(`Is the vault connected? Its token is ${TOKEN}.`);
    expect(result.reason).toBe('completed');

    // The model works with the real output: only what is written down is masked.
    const sent = toolResults(provider.requests[1]!)[0]!.content;
    expect(sent).toContain(TOKEN);
    expect(sent).toContain(OPENAI_KEY);

    const file = agent.transcript!.file;
    await agent.close();
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('Qm4Lr8Tz');
    expect(text).toContain(`connected to the backend with ${MASK}; also found sk-proj-${MASK} lying around`);
    expect(text).toContain(`Its token is ${MASK}.`);
    // Still a valid transcript: every line parses and the tool call and its result are there.
    const { events, problems } = readTranscript(file);
    expect(problems).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['tool-call', 'tool-result', 'session-end']),
    );
  });
});
