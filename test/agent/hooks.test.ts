import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type HooksConfig, runHooks } from '../../src/agent/hooks.js';
import { HooksSchema } from '../../src/config/schema.js';
import { TackError } from '../../src/errors.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A project folder with .git and a hooks/ folder of real shell scripts. */
function project() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'tack-hooks-')));
  dirs.push(dir);
  mkdirSync(join(dir, '.git'));
  mkdirSync(join(dir, 'hooks'));
  const script = (name: string, body: string) => {
    const path = join(dir, 'hooks', name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
    return `./hooks/${name}`;
  };
  return { dir, script };
}

const toolCall = {
  session_id: 'sess-1',
  tool_name: 'mcp__github__create_issue',
  tool_input: { title: 'bug', body: 'it broke' },
  tool_use_id: 'call-7',
};

describe('runHooks', () => {
  it('blocks on exit code 2 with stderr as the reason', async () => {
    const p = project();
    const hooks: HooksConfig = {
      PreToolUse: [{ command: p.script('block.sh', 'echo "no issues on Fridays" >&2\nexit 2') }],
    };
    const result = await runHooks(hooks, 'PreToolUse', toolCall, { cwd: p.dir });
    expect(result).toEqual({
      decision: 'deny',
      reason: 'no issues on Fridays',
      additionalContext: [],
      warnings: [],
    });
  });

  it('denies through JSON, in both the newer and the older form', async () => {
    const p = project();
    const newer = p.script(
      'deny.sh',
      `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"read-only today"}}'`,
    );
    const older = p.script('block-json.sh', `echo '{"decision":"block","reason":"legacy says no"}'`);
    expect(
      await runHooks({ PreToolUse: [{ command: newer }] }, 'PreToolUse', toolCall, { cwd: p.dir }),
    ).toEqual({ decision: 'deny', reason: 'read-only today', additionalContext: [], warnings: [] });
    expect(
      await runHooks({ PreToolUse: [{ command: older }] }, 'PreToolUse', toolCall, { cwd: p.dir }),
    ).toEqual({ decision: 'deny', reason: 'legacy says no', additionalContext: [], warnings: [] });
  });

  it('allows, and says nothing when a hook prints nothing', async () => {
    const p = project();
    const allow = p.script(
      'allow.sh',
      `echo '{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"trusted repo"}}'`,
    );
    const approve = p.script('approve.sh', `echo '{"decision":"approve"}'`);
    const silent = p.script('silent.sh', 'exit 0');
    expect(
      await runHooks({ PreToolUse: [{ command: allow }] }, 'PreToolUse', toolCall, { cwd: p.dir }),
    ).toEqual({
      decision: 'allow',
      reason: 'trusted repo',
      additionalContext: [],
      warnings: [],
    });
    expect(
      (await runHooks({ PreToolUse: [{ command: approve }] }, 'PreToolUse', toolCall, { cwd: p.dir }))
        .decision,
    ).toBe('allow');
    expect(
      await runHooks({ PreToolUse: [{ command: silent }] }, 'PreToolUse', toolCall, { cwd: p.dir }),
    ).toEqual({
      additionalContext: [],
      warnings: [],
    });
  });

  it('runs only the hooks whose matcher fits the whole tool name', async () => {
    const p = project();
    const log = join(p.dir, 'ran.log');
    const hook = (name: string, matcher?: string) => ({
      ...(matcher === undefined ? {} : { matcher }),
      command: p.script(`${name}.sh`, `echo ${name} >> "${log}"`),
    });
    const hooks: HooksConfig = {
      PreToolUse: [
        hook('github', 'mcp__github__.*'),
        hook('prefix_only', 'mcp__github'),
        hook('other_server', 'mcp__notes__.*'),
        hook('alternation', 'mcp__notes__read|mcp__github__create_issue'),
        hook('star', '*'),
        hook('all'),
      ],
    };
    await runHooks(hooks, 'PreToolUse', toolCall, { cwd: p.dir });
    const ran = readFileSync(log, 'utf8').trim().split('\n').sort();
    expect(ran).toEqual(['all', 'alternation', 'github', 'star']);
  });

  it('hands the hook the payload on stdin, with Claude Code field names, and its environment', async () => {
    const p = project();
    const sub = join(p.dir, 'sub');
    mkdirSync(sub);
    const command = p.script(
      'record.sh',
      [
        `cat > "${join(p.dir, 'payload.json')}"`,
        `env > "${join(p.dir, 'env.txt')}"`,
        `pwd > "${join(p.dir, 'pwd.txt')}"`,
      ].join('\n'),
    );
    process.env.HOOK_TEST_SECRET = 'leak-me-not';
    try {
      await runHooks(
        // Relative to the working directory, as a user writes it in the project's tack.json.
        { PostToolUse: [{ command: `.${command}` }] },
        'PostToolUse',
        { ...toolCall, tool_response: { content: [{ type: 'text', text: 'created #12' }] } },
        { cwd: sub, env: { EXTRA: 'given' } },
      );
    } finally {
      delete process.env.HOOK_TEST_SECRET;
    }
    expect(JSON.parse(readFileSync(join(p.dir, 'payload.json'), 'utf8'))).toEqual({
      hook_event_name: 'PostToolUse',
      session_id: 'sess-1',
      cwd: sub,
      tool_name: 'mcp__github__create_issue',
      tool_input: { title: 'bug', body: 'it broke' },
      tool_use_id: 'call-7',
      tool_response: { content: [{ type: 'text', text: 'created #12' }] },
    });
    const env = readFileSync(join(p.dir, 'env.txt'), 'utf8');
    expect(env).toContain('TACK_SESSION_ID=sess-1\n');
    expect(env).toContain(`TACK_PROJECT_DIR=${p.dir}\n`);
    expect(env).toContain(`CLAUDE_PROJECT_DIR=${p.dir}\n`);
    expect(env).toContain('EXTRA=given\n');
    expect(env).not.toContain('leak-me-not');
    expect(readFileSync(join(p.dir, 'pwd.txt'), 'utf8').trim()).toBe(sub);
  });

  it('kills a hook and what it started when it times out, and warns', async () => {
    const p = project();
    const pidFile = join(p.dir, 'child.pid');
    const command = p.script('slow.sh', `sleep 30 &\necho $! > "${pidFile}"\nwait`);
    const started = Date.now();
    // 1 s, not less: the hook must have started its child and written the pid file before the kill, and a
    // shell's start on a loaded CI box can take a few hundred ms.
    const result = await runHooks({ PreToolUse: [{ command, timeoutMs: 1_000 }] }, 'PreToolUse', toolCall, {
      cwd: p.dir,
    });
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(result.decision).toBeUndefined();
    expect(result.warnings).toEqual([`PreToolUse hook '${command}' timed out after 1000 ms and was killed`]);
    const child = Number(readFileSync(pidFile, 'utf8'));
    await expect.poll(() => alive(child), { timeout: 5_000 }).toBe(false);
  });

  it('treats a crashing hook as a warning, not a block', async () => {
    const p = project();
    const crash = p.script('crash.sh', 'echo "line one" >&2\necho "jq: command not found" >&2\nexit 127');
    const result = await runHooks({ PreToolUse: [{ command: crash }] }, 'PreToolUse', toolCall, {
      cwd: p.dir,
    });
    expect(result.decision).toBeUndefined();
    expect(result.warnings).toEqual([
      `PreToolUse hook '${crash}' exited with code 127: line one | jq: command not found`,
    ]);
    const missing = await runHooks(
      { PreToolUse: [{ command: './hooks/not-there.sh' }] },
      'PreToolUse',
      toolCall,
      { cwd: p.dir },
    );
    expect(missing.decision).toBeUndefined();
    expect(missing.warnings).toHaveLength(1);
  });

  it('warns about JSON it cannot read and decisions it does not know', async () => {
    const p = project();
    const broken = p.script('broken.sh', `echo '{"decision": '`);
    const unknown = p.script('unknown.sh', `echo '{"hookSpecificOutput":{"permissionDecision":"defer"}}'`);
    const result = await runHooks(
      { PreToolUse: [{ command: broken }, { command: unknown }] },
      'PreToolUse',
      toolCall,
      { cwd: p.dir },
    );
    expect(result.decision).toBeUndefined();
    expect(result.warnings).toEqual([
      `PreToolUse hook '${broken}' printed output that is not valid JSON`,
      `PreToolUse hook '${unknown}' gave an unknown decision "defer"; ignored`,
    ]);
  });

  it('lets deny win over ask over allow, whatever the order', async () => {
    const p = project();
    const say = (decision: string) =>
      p.script(
        `${decision}.sh`,
        `echo '{"hookSpecificOutput":{"permissionDecision":"${decision}","permissionDecisionReason":"${decision} because"}}'`,
      );
    const allow = { command: say('allow') };
    const ask = { command: say('ask') };
    const deny = { command: say('deny') };
    const run = (PreToolUse: HooksConfig['PreToolUse']) =>
      runHooks({ PreToolUse }, 'PreToolUse', toolCall, { cwd: p.dir });

    expect(await run([allow, ask])).toMatchObject({ decision: 'ask', reason: 'ask because' });
    expect(await run([ask, allow])).toMatchObject({ decision: 'ask', reason: 'ask because' });
    expect(await run([deny, ask, allow])).toMatchObject({ decision: 'deny', reason: 'deny because' });
    expect(await run([allow, ask, deny])).toMatchObject({ decision: 'deny', reason: 'deny because' });
    // An exit-2 block is a deny like any other, and both reasons are kept.
    const exit2 = { command: p.script('exit2.sh', 'echo "policy" >&2; exit 2') };
    expect(await run([allow, exit2, deny])).toMatchObject({
      decision: 'deny',
      reason: 'policy\ndeny because',
    });
  });

  it('collects additionalContext, including a SessionStart hook’s plain stdout', async () => {
    const p = project();
    const post = p.script(
      'post.sh',
      `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"issue #12 is a duplicate"}}'`,
    );
    const post2 = p.script(
      'post2.sh',
      `echo '{"hookSpecificOutput":{"additionalContext":"ping the owner"}}'`,
    );
    const after = await runHooks(
      { PostToolUse: [{ command: post }, { command: post2 }] },
      'PostToolUse',
      { ...toolCall, tool_response: 'ok' },
      { cwd: p.dir },
    );
    expect(after).toEqual({
      additionalContext: ['issue #12 is a duplicate', 'ping the owner'],
      warnings: [],
    });

    const json = p.script(
      'start-json.sh',
      `echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"branch: main"}}'`,
    );
    const plain = p.script('start-plain.sh', 'echo "3 uncommitted files"');
    const resumeOnly = p.script('resume.sh', 'echo "resumed"');
    const start = await runHooks(
      {
        SessionStart: [{ command: json }, { command: plain }, { matcher: 'resume', command: resumeOnly }],
      },
      'SessionStart',
      { session_id: 'sess-1', source: 'startup' },
      { cwd: p.dir },
    );
    expect(start).toEqual({ additionalContext: ['branch: main', '3 uncommitted files'], warnings: [] });
  });

  it('passes a hook’s systemMessage to the user and honours continue: false as a deny', async () => {
    const p = project();
    const stop = p.script(
      'stop.sh',
      `echo '{"continue":false,"stopReason":"budget spent","systemMessage":"stopping the session"}'`,
    );
    const result = await runHooks({ Stop: [{ command: stop }] }, 'Stop', { session_id: 's' }, { cwd: p.dir });
    expect(result).toEqual({
      decision: 'deny',
      reason: 'budget spent',
      additionalContext: [],
      warnings: [`Stop hook '${stop}': stopping the session`],
    });
  });

  it('throws when aborted, and kills the running hooks', async () => {
    const p = project();
    const command = p.script('wait.sh', 'sleep 30');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await runHooks({ PreToolUse: [{ command }] }, 'PreToolUse', toolCall, {
      cwd: p.dir,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(TackError.isInstance(error) && error.code).toBe('REQUEST_ABORTED');
  });

  it('does nothing without hooks for the event', async () => {
    expect(await runHooks(undefined, 'Stop', { session_id: 's' }, { cwd: tmpdir() })).toEqual({
      additionalContext: [],
      warnings: [],
    });
  });
});

describe('HooksSchema', () => {
  it('accepts the documented shape and rejects typos and bad regular expressions', () => {
    expect(
      HooksSchema.safeParse({
        PreToolUse: [{ matcher: 'mcp__github__.*', command: './check.sh', timeoutMs: 10_000 }],
        PostToolUse: [{ command: 'true' }],
        SessionStart: [{ matcher: '*', command: 'git status' }],
        Stop: [],
      }).success,
    ).toBe(true);
    expect(HooksSchema.safeParse({ PreToolUse: [{ command: 'x', timeout: 5 }] }).success).toBe(false);
    expect(HooksSchema.safeParse({ PreToolUse: [{ matcher: '(', command: 'x' }] }).success).toBe(false);
    expect(HooksSchema.safeParse({ BeforeTool: [] }).success).toBe(false);
    expect(HooksSchema.safeParse({ Stop: [{ command: '' }] }).success).toBe(false);
  });
});

/** A zombie (killed, not yet reaped by whoever inherited it) counts as gone. */
function alive(pid: number): boolean {
  if (existsSync('/proc/self/stat')) {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
