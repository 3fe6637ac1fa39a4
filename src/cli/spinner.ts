import yoctoSpinner from 'yocto-spinner';
import { printable } from '../util/printable.js';

export interface Progress {
  update(text: string): void;
  stop(): void;
}

/**
 * A spinner on stderr while servers connect: part of the output layer (output.ts), apart so that commands that
 * never connect do not load it. Only on a terminal that redraws (not TERM=dumb, not CI, where the spinner would
 * print each frame as a line): pipes and CI logs get no control codes. Its text is made printable like the rest.
 */
export function startProgress(text: string): Progress {
  const env = process.env;
  if (!process.stderr.isTTY || env.TERM === 'dumb' || 'CI' in env) return { update() {}, stop() {} };
  const spinner = yoctoSpinner({
    text: printable(text),
    stream: process.stderr,
    handleSignals: false,
  }).start();
  return {
    update: (next) => {
      spinner.text = printable(next);
    },
    stop: () => {
      spinner.stop();
    },
  };
}
