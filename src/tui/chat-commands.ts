import { isUserCommand, userCommandHelp } from './chat-input.js';
import { costText, helpText, serversText, skillsText, toolsText } from './commands.js';
import { connectingText, type ServerProgress } from './startup.js';
import { statusText } from './status.js';
import type { TranscriptView } from './transcript-view.js';
import type { ChatSession } from './use-session.js';

/** What the chat answers while the session starts; every other command waits for it. */
const STARTING_COMMANDS = new Set(['/exit', '/quit', '/help', '/status', '/servers', '/clear']);

/** What the slash commands act on in the chat. */
export interface CommandContext {
  view: TranscriptView;
  cwd: string;
  progress: ServerProgress | undefined;
  session: ChatSession;
  exit(): void;
  /** /clear: the screen and the scrollback. */
  clear(): void;
  /** /resume <id> and /model <provider:id>. */
  switchSession(resume: string, modelSpec?: string): Promise<void>;
  /** /resume without an id. */
  openPicker(): Promise<void>;
  setRunning(running: boolean): void;
  /** A server's prompt or a skill: sent as a turn. */
  send(text: string): Promise<void>;
}

/** Runs a slash command line (`/name args`); its answer is written to the transcript. */
export async function runCommand(line: string, ctx: CommandContext): Promise<void> {
  const { view, progress, session } = ctx;
  const [name, ...args] = line.split(/\s+/);
  const arg = args.join(' ').trim();
  if (!session.current() && !STARTING_COMMANDS.has(name ?? '')) {
    // Everything else asks the session: it answers once the servers are up.
    view.notice(`${name} answers once the session has started (${connectingText(progress?.rows() ?? [])})`);
    if (!(await session.wait())) return;
  }
  const agent = session.current();
  switch (name) {
    case '/exit':
    case '/quit':
      ctx.exit();
      return;
    case '/help':
      view.output('/help', helpText(agent ? userCommandHelp(agent) : []));
      return;
    case '/status':
      view.output('/status', statusText({ view, agent, cwd: ctx.cwd, progress: progress?.rows() ?? [] }));
      return;
    case '/tools':
      if (agent) view.output('/tools', toolsText(agent));
      return;
    case '/skills':
      if (agent) view.output('/skills', skillsText(agent, view.status.activeSkills));
      return;
    case '/servers':
      view.output('/servers', agent ? serversText(agent) : connectingText(progress?.rows() ?? []));
      return;
    case '/cost':
      if (agent) view.output('/cost', costText(agent));
      return;
    case '/clear':
      ctx.clear();
      return;
    case '/resume':
      if (arg !== '') await ctx.switchSession(arg);
      else await ctx.openPicker();
      return;
    case '/model':
      if (arg === '')
        view.output(
          '/model',
          `${session.model()?.spec ?? view.status.model} (switch with /model <provider:id>, e.g. /model openai:gpt-5)`,
        );
      else if (agent) await ctx.switchSession(agent.session.id, arg);
      return;
    case '/compact':
      await compact(ctx);
      return;
    default:
      // Before the session is up, a command that is not built in may be a server's prompt or a skill: the
      // turn waits for the session and says so if it is neither.
      if (name && (!session.current() || isUserCommand(session.current()!, name))) await ctx.send(line);
      else view.output(name ?? line, `unknown command ${name}: type /help for the list`);
  }
}

/** /compact: the history compacted now, the running line shown meanwhile. */
async function compact(ctx: CommandContext): Promise<void> {
  const agent = ctx.session.current();
  if (!agent) return;
  ctx.setRunning(true);
  try {
    const done = await agent.session.compact();
    if (!done) ctx.view.notice('nothing to compact');
  } catch (error) {
    ctx.view.apply({ type: 'error', message: `compaction failed: ${(error as Error).message}` });
  } finally {
    ctx.setRunning(false);
  }
}
