import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTranscript } from '../../src/agent/transcript.js';
import { BIN, ptyTack, tack } from '../helpers/cli.js';
import { providerEnv, toolResults } from '../helpers/fake-provider.js';
import { REPO, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const ACME = join(REPO, 'test', 'fixtures', 'okf', 'acme_retail');
const MODEL = ['--model', 'anthropic:claude-sonnet-4-5'];

const scope = testScope();
const { cleanups, fake } = scope;

function project(config: Record<string, unknown> = {}): TempProject {
  const p = scope.project('tack-run-');
  p.write('tack.json', config);
  return p;
}

/** Every transcript file under the project's state directory. */
function transcripts(p: TempProject): string[] {
  const root = join(p.home, 'state', 'sessions');
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => join(root, f));
}

describe('tack run', () => {
  it('an OpenAI-compatible base URL without /v1 fails with the URL to set', async () => {
    const p = project();
    const provider = await fake([{ text: 'never sent' }]);
    const bare = provider.url.replace(/\/v1$/, '');
    const run = await tack(['run', 'hello', '--model', 'openai-compatible:llama3'], {
      cwd: p.dir,
      env: { ...p.env, OPENAI_BASE_URL: bare, OPENAI_API_KEY: undefined },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${bare}/chat/completions answered 404`);
    expect(run.stderr).toContain(`set OPENAI_BASE_URL to ${bare}/v1`);
    expect(provider.requests).toHaveLength(0);
  });

  it('without a model says how to set one', async () => {
    const p = project();
    const run = await tack(['run', 'hello'], { cwd: p.dir, env: { ...p.env, ANTHROPIC_API_KEY: undefined } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('error: no model configured');
    expect(run.stderr).toContain('--model anthropic:<id>');
    const keyless = await tack(['run', 'hello', ...MODEL], {
      cwd: p.dir,
      env: { ...p.env, ANTHROPIC_API_KEY: undefined },
    });
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain('ANTHROPIC_API_KEY is not set');
  });

  it('streams the answer to stdout, or the whole event stream as JSON lines', async () => {
    const p = project();
    const provider = await fake([{ text: 'Hello from the model.' }, { text: 'Again.' }]);
    const env = { ...p.env, ...providerEnv(provider) };
    const run = await tack(['run', 'say hello', ...MODEL], { cwd: p.dir, env });
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe('Hello from the model.');
    expect(run.stderr).toMatch(/\[completed\] answered after 1 step/);
    const json = await tack(['run', 'again', ...MODEL, '--json'], { cwd: p.dir, env });
    const events = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(events[0]!.type).toBe('session-start');
    expect(events.at(-1)).toMatchObject({ type: 'session-end', reason: 'completed', answer: 'Again.' });
    expect(events.some((e) => e.type === 'text-delta')).toBe(true);
  });

  it('exits 3 when a limit ends the run', async () => {
    const p = project({ knowledge: { bundles: [ACME] } });
    const provider = await fake((_r, i) => ({
      toolCalls: [{ name: 'search_knowledge', input: { query: `q${i}` } }],
    }));
    const run = await tack(['run', 'loop', ...MODEL, '--max-steps', '2'], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('[max-steps] stopped after 2 steps');
  });

  it('survives a crash mid-run: --resume continues with nothing lost', async () => {
    const p = project({ knowledge: { bundles: [ACME] } });
    const provider = await fake((_request, i) => {
      if (i === 0) return { toolCalls: [{ name: 'search_knowledge', input: { query: 'gross margin' } }] };
      if (i === 1) return { text: 'never seen', delayMs: 60_000 }; // the process is killed while it waits
      return { text: 'Resumed: gross margin is defined in metrics/gross-margin.' };
    });
    const env = { ...p.env, ...providerEnv(provider) };
    const child = spawn(process.execPath, [BIN, 'run', 'find gross margin', ...MODEL], {
      cwd: p.dir,
      env,
      stdio: 'ignore',
    });
    cleanups.push(() => {
      child.kill('SIGKILL');
    });
    // Wait until the tool result is on disk and the second model call is in flight, then kill without warning.
    const deadline = Date.now() + 20_000;
    while (provider.requests.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(provider.requests).toHaveLength(2);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const [file] = transcripts(p);
    expect(file).toBeDefined();
    const before = readTranscript(file!).events;
    expect(before.map((e) => e.type)).toContain('tool-result');
    expect(before.map((e) => e.type)).not.toContain('session-end');
    const id = before[0]!.type === 'session-start' ? before[0]!.sessionId : '';

    const resumed = await tack(['run', '--resume', id.split('-').at(-1)!, ...MODEL], { cwd: p.dir, env });
    expect(resumed.stderr).toContain('[completed]');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Resumed: gross margin');
    // The resumed call carried the whole history: the task, the tool call and its result, then the nudge.
    const request = provider.requests[2]!;
    const history = JSON.stringify(request.messages);
    expect(history).toContain('find gross margin');
    expect(toolResults(request).at(-1)!.content).toContain('okf://acme_retail/metrics/gross-margin');
    expect(history).toContain('Continue where you left off.');
    // One file for the session: both runs, the second marked as a resume.
    expect(transcripts(p)).toEqual([file]);
    const after = readTranscript(file!).events;
    expect(after.filter((e) => e.type === 'session-start').at(-1)).toMatchObject({ resumedFrom: id });
    expect(after.at(-1)).toMatchObject({ type: 'session-end', reason: 'completed' });
    expect(readFileSync(file!, 'utf8').split('\n').filter(Boolean).length).toBe(after.length);
  });
});

describe('tack eval', () => {
  it('runs each prompt in a fresh session and records the outputs with the guidelines hash', async () => {
    const p = project();
    p.write('AGENTS.md', 'Answer in one word.');
    p.write(
      'prompts.jsonl',
      '{"id": "greet", "prompt": "say hi", "expect": "hi"}\n{"id": "num", "prompt": "a number", "expect": "/^\\\\d+$/"}\n',
    );
    const provider = await fake([{ text: 'hi' }, { text: 'seven' }]);
    const run = await tack(['eval', 'prompts.jsonl', ...MODEL], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('greet: completed pass');
    expect(run.stderr).toContain('num: completed FAIL');
    const out = /in (\S+\.jsonl)$/m.exec(run.stdout)![1]!;
    const records = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => [r.id, r.answer, r.pass])).toEqual([
      ['greet', 'hi', true],
      ['num', 'seven', false],
    ]);
    expect(records[0]!.guidelinesHash).toMatch(/^[0-9a-f]{64}$/);
    expect(records[0]!.guidelinesHash).toBe(records[1]!.guidelinesHash);
    // Each prompt ran alone: the second request holds one user message.
    expect(provider.requests[1]!.messages).toHaveLength(1);
    expect(provider.requests[0]!.system).toContain('Answer in one word.');
  });

  it('prints each answer on lines of its own, apart from the next case and the summary', async () => {
    const p = project();
    p.write('prompts.jsonl', '{"id": "a", "prompt": "one"}\n{"id": "b", "prompt": "two"}\n');
    const provider = await fake([{ text: 'first answer' }, { text: 'second answer' }]);
    const run = await tack(['eval', 'prompts.jsonl', ...MODEL], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines).toContain('first answer');
    expect(lines).toContain('second answer');
    expect(lines.indexOf('second answer')).toBeGreaterThan(lines.indexOf('first answer'));
    expect(lines.some((l) => l.startsWith('2 prompts, 0 failed'))).toBe(true);
    expect(run.stdout.endsWith('\n')).toBe(true);
  });

  it('names a missing prompts file in one line, without a stack trace (exit 2)', async () => {
    const p = project();
    const run = await tack(['eval', 'nosuch.jsonl', ...MODEL], { cwd: p.dir, env: p.env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: .*nosuch\.jsonl.*not found/m);
    expect(run.stderr).toMatch(/^hint: .*prompt/m);
    expect(run.stderr).not.toContain('unexpected failure');
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('tack chat', () => {
  it('talks in a terminal: answers stream, /cost and /tools work, /exit leaves', async () => {
    const p = project({ knowledge: { bundles: [ACME] } });
    const provider = await fake([{ text: 'Hello there.' }, { text: 'Second answer.' }]);
    const env = { ...p.env, ...providerEnv(provider) };
    // `script` gives tack a real pseudo-terminal, as a person's shell would.
    // --plain: the line mode this test is about (the full-screen chat has its own tests, test/tui/).
    const chat = ptyTack(['chat', '--plain', ...MODEL], {
      cwd: p.dir,
      env,
      onStart: (kill) => cleanups.push(kill),
    });
    await chat.waitFor('> ');
    chat.type('hello');
    await chat.waitFor('Hello there.');
    chat.type('/cost');
    await chat.waitFor('input tokens');
    chat.type('/tools');
    await chat.waitFor('search_knowledge');
    chat.type('again');
    await chat.waitFor('Second answer.');
    chat.type('/exit');
    expect(await chat.exited()).toBe(0);
    // The second turn carried the first: one session, one history.
    expect(provider.requests[1]!.messages).toHaveLength(3);
  });
  it('--plain: /resume lists and continues an earlier session, /model switches the model for the next turn', async () => {
    const p = project();
    const provider = await fake([{ text: 'Alpha noted.' }, { text: 'You said alpha.' }]);
    const env = { ...p.env, ...providerEnv(provider) };
    const first = ptyTack(['chat', '--plain', ...MODEL], {
      cwd: p.dir,
      env,
      onStart: (kill) => cleanups.push(kill),
    });
    await first.waitFor('> ');
    first.type('remember alpha');
    await first.waitFor('Alpha noted.');
    first.type('/exit');
    expect(await first.exited()).toBe(0);

    const chat = ptyTack(['chat', '--plain', ...MODEL], {
      cwd: p.dir,
      env,
      onStart: (kill) => cleanups.push(kill),
    });
    await chat.waitFor('/resume /model');
    chat.type('/resume');
    await chat.waitFor(/1\. \S+ .* completed +1 steps .*remember alpha/);
    // A number past the list is never read as an id prefix (a session id may well start with 7).
    chat.type('/resume 7');
    await chat.waitFor('/resume 7: the list has entries 1 to 1');
    chat.type('/resume zzzz');
    await chat.waitFor(/cannot open session zzzz: no session matches[\s\S]*0 earlier message/);
    // Back in the session it was on, with no note about that session "not ending".
    expect(chat.output).not.toContain('did not end');
    chat.type('/resume 1');
    await chat.waitFor('1 earlier message(s)');
    chat.type('/model nosuch:model');
    await chat.waitFor('/model nosuch:model:');
    chat.type('/model anthropic:claude-haiku-4-5');
    await chat.waitFor('anthropic:claude-haiku-4-5; 1 earlier message(s)');
    chat.type('what did I say?');
    await chat.waitFor('You said alpha.');
    chat.type('/exit');
    expect(await chat.exited()).toBe(0);
    // The turn went to the new model with the resumed session's history.
    const last = provider.requests.at(-1)!;
    expect(last.model).toBe('claude-haiku-4-5');
    expect(JSON.stringify(last.messages)).toContain('remember alpha');
    expect(last.messages).toHaveLength(3);
  }, 60_000);
});

describe('tack context', () => {
  it('prints each part of the next turn with its token count, for the examples', async () => {
    // A tack home of its own (token counts and the store stay with the test): the user's is shared by every
    // worker and every run.
    const p = project();
    const run = await tack(['context', '--config', 'examples/tack.json'], {
      cwd: REPO,
      env: { ...process.env, TACK_HOME: p.home },
    });
    expect(run.code).toBe(0);
    for (const part of [
      'system: harness rules',
      'system: skills index',
      'system: server instructions',
      'tools: notes',
      'tools: weather',
      'tools: docs',
      'total',
    ])
      expect(run.stdout).toMatch(new RegExp(`^${part.replace(/[.:]/g, '\\$&')} +\\d+`, 'm'));
  });

  it('prices each server’s tools as `tack tools` does, and says what it counts', async () => {
    const config = ['--config', join(REPO, 'examples', 'tack.json')];
    const p = project();
    const at = { cwd: p.dir, env: p.env };
    // One after another: they share the project's store.
    const context = await tack(['context', ...config, '--json'], at);
    const tools = await tack(['tools', ...config, '--json'], at);
    const contextText = await tack(['context', ...config], at);
    const toolsText = await tack(['tools', ...config], at);
    const parts = (JSON.parse(context.stdout) as { parts: Array<{ part: string; tokens: number }> }).parts;
    const servers = (JSON.parse(tools.stdout) as { totals: { servers: Record<string, { tokens: number }> } })
      .totals.servers;
    for (const server of ['notes', 'weather', 'docs'])
      expect(parts.find((p) => p.part === `tools: ${server}`)?.tokens).toBe(servers[server]!.tokens);
    // The examples name no model: the one estimate, said as such.
    for (const out of [contextText.stdout, toolsText.stdout])
      expect(out).toMatch(/^TOKENS \(estimated: .*\): .*tool definition as the model is sent it/m);
  }, 60_000); // four CLI runs
});
