import type { Command } from 'commander';
import { TackError } from '../../errors.js';
import type { AgentCliOptions } from '../commands/agent.js';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, positive } from './options.js';

const chatCommand = lazy(() => import('../commands/agent.js'), 'chatCommand');
const contextCommand = lazy(() => import('../commands/agent.js'), 'contextCommand');
const evalCommand = lazy(() => import('../commands/agent.js'), 'evalCommand');
const runCommand = lazy(() => import('../commands/agent.js'), 'runCommand');
const sessionsListCommand = lazy(() => import('../commands/sessions.js'), 'sessionsListCommand');
const sessionShowCommand = lazy(() => import('../commands/sessions.js'), 'sessionShowCommand');

/** A cost limit: any number above 0 (a fraction of a dollar too). */
function positiveNumber(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0))
    throw new TackError('USAGE', `--${name} must be a positive number, got ${JSON.stringify(value)}`);
  return n;
}

/** `--fallback a,b`: the specs, in order; an empty value turns the configured fallback off. */
function fallbackList(value: string): string[] {
  return value
    .split(',')
    .map((spec) => spec.trim())
    .filter((spec) => spec !== '');
}

function agentOptions(cmd: Command): AgentCliOptions {
  const raw = cmd.optsWithGlobals<Record<string, unknown>>();
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const steps = positive('max-steps', raw.maxSteps);
  const cost = positiveNumber('max-cost', raw.maxCost);
  return {
    ...optionsOf(cmd),
    ...(text(raw.model) ? { model: text(raw.model) } : {}),
    ...(text(raw.fallback) !== undefined ? { fallback: fallbackList(text(raw.fallback) ?? '') } : {}),
    ...(text(raw.approve) ? { approve: text(raw.approve) } : {}),
    ...(steps ? { maxSteps: steps } : {}),
    ...(cost ? { maxCost: cost } : {}),
    ...(text(raw.resume) ? { resume: text(raw.resume) } : {}),
    ...(raw.plain === true ? { plain: true } : {}),
  };
}

const withAgentOptions = (cmd: Command) =>
  cmd
    .option(
      '--model <provider:id>',
      'anthropic:<id>, openai:<id> or openai-compatible:<id> (default: agent.model)',
    )
    .option(
      '--fallback <models>',
      'comma-separated provider:id models to go on with when the model is overloaded, rate limited or down (default: agent.fallback; "" for none)',
    )
    .option('--approve <mode>', 'ask | auto-read-only | never: calls that need approval (default ask)')
    .option('--max-steps <n>', 'model calls per run (default 50)')
    .option('--max-cost <usd>', 'stop past this cost in US dollars');

/** `tack sessions [list]` and `tack sessions show <session> [--step N [--request]]`: what past sessions sent. */
function registerSessions(program: Command, setExitCode: (code: number) => void): void {
  const sessions = program
    .command('sessions')
    .description(
      "past sessions: list this folder's, show one's steps, and the exact request of a step (`show S --step N --request`)",
    );
  sessions
    .command('list', { isDefault: true })
    .description("this folder's sessions, newest first (the default)")
    .option('--all', "every folder's sessions")
    .option('--limit <n>', 'how many (default 20)')
    .action(async (opts: { all?: boolean; limit?: string }, cmd: Command) =>
      setExitCode(
        await sessionsListCommand({
          ...optionsOf(cmd),
          ...(opts.all ? { all: true } : {}),
          ...(opts.limit ? { limit: opts.limit } : {}),
        }),
      ),
    );
  sessions
    .command('show')
    .description(
      "a session's steps (model, bytes, tokens, prefix hash); --step N: what that step sent, part by part with hashes and token counts; --request: its body byte for byte",
    )
    .argument('<session>', 'its id, or the last part of it')
    .option('--step <n>', 'one step, numbered across the session as `show` lists them')
    .option(
      '--request',
      "print the step's request body exactly as the provider received it (rebuilt from the transcript)",
    )
    .action(async (id: string, opts: { step?: string; request?: boolean }, cmd: Command) =>
      setExitCode(
        await sessionShowCommand(id, {
          ...optionsOf(cmd),
          ...(opts.step !== undefined ? { step: opts.step } : {}),
          ...(opts.request ? { request: true } : {}),
        }),
      ),
    );
}

/** `tack run`, `chat`, `context` and `eval`: the agent, headless, in a terminal, inspected and evaluated. */
export const registerAgent: Register = (program, { setExitCode }) => {
  withAgentOptions(
    program
      .command('run')
      .description(
        'run a task headless: the answer streams to stdout; exit 0 done, 4 done but calls were refused (nobody to ask), 3 a limit, 1 an error, 130 interrupted',
      )
      .argument('[task]', 'what to do (with --resume: optional, default "continue")')
      .option('--resume <session>', 'continue a session (its id, or the last part of it)'),
  ).action(async (task: string | undefined, _opts: unknown, cmd: Command) =>
    setExitCode(await runCommand(task, agentOptions(cmd))),
  );
  withAgentOptions(
    program
      .command('chat')
      .description(
        'talk with the agent in a full-screen terminal interface (/help for commands and keys); line mode when stdout is not a terminal, TERM=dumb, CI is set or --plain',
      )
      .option('--resume <session>', 'continue a session')
      .option('--plain', 'the line-based chat instead of the full-screen one'),
  ).action(async (_opts: unknown, cmd: Command) => setExitCode(await chatCommand(agentOptions(cmd))));
  withAgentOptions(
    program.command('context').description('what the next turn would send, part by part, with token counts'),
  ).action(async (_opts: unknown, cmd: Command) => setExitCode(await contextCommand(agentOptions(cmd))));
  withAgentOptions(
    program
      .command('eval')
      .description('run a prompt set with the current guidelines; outputs recorded with the guidelines hash')
      .argument('<prompts.jsonl>', 'one {"id", "prompt", "expect"?} per line'),
  ).action(async (file: string, _opts: unknown, cmd: Command) =>
    setExitCode(await evalCommand(file, agentOptions(cmd))),
  );
  registerSessions(program, setExitCode);
};
