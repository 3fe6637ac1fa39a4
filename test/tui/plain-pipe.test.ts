import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tackPiped } from '../helpers/cli.js';
import { providerEnv } from '../helpers/fake-provider.js';
import { REPO } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const EXAMPLES = join(REPO, 'dist', 'examples', 'servers');
const MODEL = ['--model', 'anthropic:claude-sonnet-4-5'];
const scope = testScope();

const piped = (
  args: string[],
  input: string,
  options: { cwd: string; env: Record<string, string | undefined> },
) => tackPiped(args, input, { ...options, defer: scope.defer });

describe('tack chat with stdin piped', () => {
  it('--plain: one turn per line, answers as plain text on stdout, /exit leaves with 0', async () => {
    const p = scope.project('tack-chat-pipe-');
    p.write('tack.json', {
      mcpServers: { notes: { command: process.execPath, args: [join(EXAMPLES, 'notes.js')] } },
    });
    const provider = await scope.fake([{ text: 'First **answer**.' }, { text: 'You asked two things.' }]);
    const run = await piped(
      ['chat', '--plain', ...MODEL],
      'first question\n\nsecond question\n/exit\nnot sent\n',
      {
        cwd: p.dir,
        env: { ...p.env, ...providerEnv(provider) },
      },
    );
    expect(run.stderr).not.toContain('needs a terminal');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('First **answer**.\nYou asked two things.\n');
    // One session: the second turn carries the first; the line after /exit never reached the model.
    expect(provider.requests).toHaveLength(2);
    expect(JSON.stringify(provider.requests[1]!.messages)).toContain('first question');
    expect(JSON.stringify(provider.requests.at(-1)!.messages)).not.toContain('not sent');
    expect(run.stderr).toMatch(/session \S+ \(tack chat --resume/);
    // No prompt is written for a pipe.
    expect(run.stderr).not.toContain('> ');
  }, 60_000);

  it('without --plain too, and it ends at the end of input; /cost answers in between', async () => {
    const p = scope.project('tack-chat-pipe-');
    const provider = await scope.fake([{ text: 'Only answer.' }]);
    const run = await piped(['chat', ...MODEL], 'hello\n/cost\n', {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Only answer\.\n\d+ input tokens \(0 cached\), \d+ output, \$\d+\.\d{4}\n$/);
    expect(provider.requests).toHaveLength(1);
  }, 60_000);

  it('a turn that fails makes the exit code say so, as tack run would', async () => {
    const p = scope.project('tack-chat-pipe-');
    const provider = await scope.fake([{ error: { status: 400, message: 'bad request from the test' } }]);
    const run = await piped(['chat', '--plain', ...MODEL], 'will fail\n', {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('bad request from the test');
  }, 60_000);
});
