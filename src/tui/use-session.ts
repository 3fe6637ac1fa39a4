import { useEffect, useRef, useState } from 'react';
import type { RunningAgent } from '../agent/agent.js';
import type { ResolvedModel } from '../agent/model.js';
import { watchListingFailures } from './chat-input.js';
import type { ServerProgress } from './startup.js';
import type { TranscriptView } from './transcript-view.js';

/** The session the chat runs on: the first one while it starts, then whichever /resume or /model moved to. */
export interface ChatSession {
  /** The session to draw; undefined while the first one starts. */
  agent: RunningAgent | undefined;
  /** The session now, for the key handler and work in flight (/resume and /model change it). */
  current(): RunningAgent | undefined;
  /** The model it runs on (the switcher's); undefined in a chat that cannot start sessions. */
  model(): ResolvedModel | undefined;
  /**
   * The session, waiting for it while it starts (a message sent before the servers are up waits for them: the
   * model is then offered every tool that came up, not whatever was ready at the time). Undefined if it never
   * started or the wait was aborted.
   */
  wait(signal?: AbortSignal): Promise<RunningAgent | undefined>;
  /** The chat runs on `next`, on `model`, from now on. */
  adopt(next: RunningAgent, model: ResolvedModel): void;
}

function isPromise(value: RunningAgent | Promise<RunningAgent>): value is Promise<RunningAgent> {
  return typeof (value as Promise<RunningAgent>).then === 'function';
}

export function useChatSession(options: {
  /** The session, or its start in flight. */
  agent: RunningAgent | Promise<RunningAgent>;
  /** The switcher's model, for /model. */
  model: ResolvedModel | undefined;
  progress: ServerProgress | undefined;
  view: TranscriptView;
  /** The first session has started and is drawn on. */
  onStarted(agent: RunningAgent): void;
  /** The first session could not start. */
  onStartFailed(error: unknown): void;
}): ChatSession {
  const { progress, view } = options;
  // Everything that acts on the session reads the ref. Undefined while it starts.
  const first = isPromise(options.agent) ? undefined : options.agent;
  const [agent, setAgent] = useState<RunningAgent | undefined>(first);
  const agentRef = useRef<RunningAgent | undefined>(first);
  /** The first session, once started; what a message or command sent while it starts waits for. */
  const ready = useRef<Promise<RunningAgent>>(
    isPromise(options.agent) ? options.agent : Promise.resolve(options.agent),
  );
  const modelRef = useRef(options.model);

  // The first session: drawn on (its earlier turns when resumed) once it has started.
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, for the session the chat was started with.
  useEffect(() => {
    let live = true;
    ready.current.then(
      (started) => {
        progress?.detach();
        view.started();
        if (!live) return;
        agentRef.current = started;
        setAgent(started);
        if (started.resumed) {
          view.history(started.session.messages, started.session.usage);
          for (const note of started.resumed.notes) view.notice(`resume: ${note}`);
        }
        options.onStarted(started);
      },
      (error: unknown) => {
        if (live) options.onStartFailed(error);
      },
    );
    return () => {
      live = false;
    };
  }, []);

  // A server whose prompts or resources could not be listed serves on without them: said once, in a line.
  useEffect(
    () => (agent ? watchListingFailures(agent, (text) => view.notice(text)) : undefined),
    [agent, view],
  );

  const wait = async (signal?: AbortSignal): Promise<RunningAgent | undefined> => {
    if (agentRef.current) return agentRef.current;
    const aborted = new Promise<undefined>((resolve) => {
      if (signal?.aborted) resolve(undefined);
      signal?.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    try {
      await Promise.race([ready.current, aborted]);
    } catch {
      return undefined; // the start failed: the chat is leaving and the caller says why
    }
    return agentRef.current;
  };

  const adopt = (next: RunningAgent, model: ResolvedModel) => {
    agentRef.current = next;
    modelRef.current = model;
    setAgent(next);
  };

  return { agent, current: () => agentRef.current, model: () => modelRef.current, wait, adopt };
}
