import type { RunningAgent } from '../agent/agent.js';
import type { ResolvedModel } from '../agent/model.js';
import { errorText } from './format.js';
import type { TranscriptView } from './transcript-view.js';
import type { ChatExit } from './use-exit.js';
import type { ChatSession } from './use-session.js';

/**
 * How the chat moves to another session (/resume) or model (/model): the running session is closed and the target
 * one started the way `tack chat --resume <id>` starts it (its transcript reopened, its history and usage carried
 * on), with the same event and dialog routing. A session's model is fixed when it starts, so a new model is the
 * current session resumed under it.
 */
export interface SessionSwitch {
  /** The model the first session runs on (a failed switch comes back to the session on it). */
  model: ResolvedModel;
  /** `provider:id` to a model, throwing a clear error for one tack cannot reach; called before anything closes. */
  resolveModel(spec: string): ResolvedModel;
  /** Starts session `resume` (an id or prefix) on `model`. */
  start(target: { resume: string; model: ResolvedModel }): Promise<RunningAgent>;
  /** Told each time the chat runs on another agent (whoever started the first one closes the last one). */
  onAgent?(agent: RunningAgent): void;
}

/** What a switch acts on in the chat. */
export interface SwitchContext {
  switcher: SessionSwitch | undefined;
  session: ChatSession;
  view: TranscriptView;
  /** The running line, shown while the sessions close and open. */
  setRunning(running: boolean): void;
  /** The turns on screen go to the scrollback. */
  commit(): void;
  exit: ChatExit;
}

/**
 * Continues session `resume` (possibly the current one) on `modelSpec` (default: the current model). An unknown
 * model changes nothing; a session that cannot be opened brings the chat back to the one it was on.
 */
export async function switchSession(ctx: SwitchContext, resume: string, modelSpec?: string): Promise<void> {
  const { switcher, session, view } = ctx;
  if (!switcher || !session.model()) {
    view.output(modelSpec ? '/model' : '/resume', 'not available here: this chat cannot start sessions');
    return;
  }
  const old = await session.wait();
  if (!old) return;
  const oldModel = session.model()!;
  let model = oldModel;
  try {
    if (modelSpec) model = switcher.resolveModel(modelSpec);
  } catch (error) {
    view.apply({ type: 'error', message: `/model ${modelSpec}: ${errorText(error)}` });
    return;
  }
  try {
    // An ambiguous prefix is told before anything closes (an unknown one is found out by opening it: the index
    // is a cache, the transcript files decide).
    await old.store?.sessions.findByPrefix(resume);
  } catch (error) {
    view.apply({ type: 'error', message: `/resume ${resume}: ${errorText(error)}` });
    return;
  }
  ctx.setRunning(true);
  const opened = await open(ctx, switcher, old, { resume, model, oldModel });
  if (!opened) return;
  const { next } = opened;
  model = opened.model;
  if (ctx.exit.exiting()) {
    // The user left while it opened: nobody would close it.
    await next.close();
    return;
  }
  session.adopt(next, model);
  switcher.onAgent?.(next);
  if (next.session.id !== old.session.id || resume !== old.session.id) {
    // The turns on screen belong to the other session: they go to the scrollback, this one's are shown.
    ctx.commit();
    view.notice(`resumed session ${next.session.id}`);
    view.history(next.session.messages, next.session.usage);
  } else if (modelSpec)
    view.notice(`model ${model.spec} from the next turn; session ${next.session.id} continues`);
  for (const note of next.resumed?.notes ?? []) view.notice(`resume: ${note}`);
  ctx.setRunning(false);
}

/**
 * Closes `old` and opens the target, or `old` again on its model if the target cannot be opened. Undefined when
 * not even that could be: the chat has said why and is leaving.
 */
async function open(
  ctx: SwitchContext,
  switcher: SessionSwitch,
  old: RunningAgent,
  target: { resume: string; model: ResolvedModel; oldModel: ResolvedModel },
): Promise<{ next: RunningAgent; model: ResolvedModel } | undefined> {
  const { view } = ctx;
  try {
    // The same transcript must not have two writers: the running session closes before it is reopened.
    await old.close();
    try {
      return {
        next: await switcher.start({ resume: target.resume, model: target.model }),
        model: target.model,
      };
    } catch (error) {
      view.apply({ type: 'error', message: `cannot open session ${target.resume}: ${errorText(error)}` });
      const next = await switcher.start({ resume: old.session.id, model: target.oldModel });
      view.notice(`back in session ${old.session.id}`);
      return { next, model: target.oldModel };
    }
  } catch (error) {
    view.apply({ type: 'error', message: `cannot reopen session ${old.session.id}: ${errorText(error)}` });
    ctx.setRunning(false);
    ctx.exit.exit();
    return undefined;
  }
}
