import { render } from 'ink';
import { createElement as h } from 'react';
import type { RunningAgent } from '../agent/agent.js';
import type { Approver } from '../agent/approval.js';
import type { AgentEvent } from '../agent/events.js';
import type { DefinitionReviewer } from '../agent/held.js';
import type { AgentInteraction } from '../agent/interaction.js';
import type { SecretMasker } from '../util/secrets.js';
import { ChatApp } from './app.js';
import { theme } from './components.js';
import { DialogQueue } from './dialogs.js';
import { TranscriptView } from './transcript-view.js';

/** What the session is started with so the TUI sees its events and answers its questions. */
export interface ChatTui {
  view: TranscriptView;
  dialogs: DialogQueue;
  onEvent(event: AgentEvent): void;
  approver: Approver;
  reviewer: DefinitionReviewer;
  interaction: AgentInteraction;
}

/** Made before the session starts: the events of its start (notices, held definitions) are shown too. */
export function createChatTui(): ChatTui {
  const view = new TranscriptView();
  const dialogs = new DialogQueue();
  return {
    view,
    dialogs,
    onEvent: (event) => view.apply(event),
    approver: dialogs.approver,
    reviewer: dialogs.reviewer,
    interaction: dialogs.interaction,
  };
}

export interface RunChatOptions {
  cwd: string;
  window: number;
  masker?: SecretMasker;
  /** NO_COLOR: no colors at all. */
  noColor?: boolean;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
}

/** Runs the full-screen chat until the user leaves; resolves with the exit code. */
export async function runChatTui(
  agent: RunningAgent,
  tui: ChatTui,
  options: RunChatOptions,
): Promise<number> {
  let left = false;
  const instance = render(
    h(ChatApp, {
      agent,
      view: tui.view,
      dialogs: tui.dialogs,
      window: options.window,
      cwd: options.cwd,
      history: agent.store?.inputHistory,
      masker: options.masker,
      theme: theme(options.noColor === true),
      onExit: () => {
        left = true;
      },
    }),
    {
      exitOnCtrlC: false,
      patchConsole: true,
      // A keystroke is drawn within a frame of 16 ms rather than Ink's default 33; only changed lines are
      // rewritten, so a streaming answer costs the lines it adds (bench/tui.ts).
      maxFps: 60,
      incrementalRendering: true,
      ...(options.stdin ? { stdin: options.stdin } : {}),
      ...(options.stdout ? { stdout: options.stdout } : {}),
    },
  );
  await instance.waitUntilExit();
  return left ? 0 : 1;
}
