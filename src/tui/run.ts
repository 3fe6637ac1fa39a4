import { render } from 'ink';
import { createElement as h } from 'react';
import type { RunningAgent } from '../agent/agent.js';
import type { SecretMasker } from '../util/secrets.js';
import { ChatApp } from './app.js';
import type { ChatTui } from './chat-tui.js';
import type { SessionSwitch } from './session-switch.js';
import { theme } from './theme.js';

export { type ChatTui, createChatTui } from './chat-tui.js';

export interface RunChatOptions {
  cwd: string;
  window: number;
  masker?: SecretMasker;
  /** NO_COLOR: no colors at all. */
  noColor?: boolean;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  /** How /resume and /model start another session; without it they say they are not available. */
  switcher?: SessionSwitch;
}

export type { SessionSwitch };

/**
 * Runs the full-screen chat until the user leaves; resolves with the exit code. Given the session's start in
 * flight (startAgent's promise, with `tui.onHost` as its onHost), the chat is drawn at once: the working folder,
 * the input and the servers coming up; a start that fails ends the chat and rejects with its error.
 */
export async function runChatTui(
  agent: RunningAgent | Promise<RunningAgent>,
  tui: ChatTui,
  options: RunChatOptions,
): Promise<number> {
  let left = false;
  let startError: { error: unknown } | undefined;
  tui.view.intro(options.cwd);
  const instance = render(
    h(ChatApp, {
      agent,
      progress: tui.progress,
      onStartFailed: (error) => {
        startError = { error };
      },
      view: tui.view,
      dialogs: tui.dialogs,
      window: options.window,
      cwd: options.cwd,
      switcher: options.switcher,
      masker: options.masker,
      theme: theme(options.noColor === true),
      onExit: () => {
        left = true;
      },
    }),
    {
      exitOnCtrlC: false,
      patchConsole: true,
      // A keystroke is drawn within a frame of 16 ms rather than Ink's default 33 (bench/tui.ts).
      maxFps: 60,
      // Not Ink 6.8's incremental renderer: for a frame that ends in a newline (every frame shorter than the
      // screen) it moves the cursor up one row too few, so each changed line lands a row low and the frame creeps
      // down, pushing its own top (the input box's border, a running tool's line) into the scrollback. The
      // standard renderer erases the frame and writes it again, inside a synchronized update where the terminal
      // supports one; the live frame is kept short (answers show their last screenful) so that stays cheap.
      incrementalRendering: false,
      ...(options.stdin ? { stdin: options.stdin } : {}),
      ...(options.stdout ? { stdout: options.stdout } : {}),
    },
  );
  await instance.waitUntilExit();
  if (startError) throw startError.error;
  return left ? 0 : 1;
}
