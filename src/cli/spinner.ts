import yoctoSpinner from 'yocto-spinner';

export interface Progress {
  update(text: string): void;
  stop(): void;
}

/** A spinner on stderr while servers connect, only on a terminal: pipes and CI logs get no control codes. */
export function startProgress(text: string): Progress {
  if (!process.stderr.isTTY) return { update() {}, stop() {} };
  const spinner = yoctoSpinner({ text, stream: process.stderr, handleSignals: false }).start();
  return {
    update: (next) => {
      spinner.text = next;
    },
    stop: () => {
      spinner.stop();
    },
  };
}
