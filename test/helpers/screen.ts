import { type ChildProcess, spawn } from 'node:child_process';
import xterm from '@xterm/headless';
import { expect } from 'vitest';
import { BIN } from './cli.js';

/**
 * The real `tack` in a real pseudo-terminal (`script`) of a given size, its output fed to a terminal emulator
 * (@xterm/headless), so a test reads the screen a person would see: cursor moves, redraws and wraps applied.
 */
export interface ScreenSession {
  child: ChildProcess;
  /** The visible screen, one string per row, trailing blanks trimmed. */
  rows(): string[];
  screen(): string;
  /**
   * Everything the terminal holds, the scrollback above the screen and the screen, one string per line, trailing
   * blanks trimmed (the emulator keeps `scrollback` lines, 10,000 by default here).
   */
  lines(): string[];
  /** Every byte tack wrote, escape sequences included. */
  raw(): string;
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Sends raw keys (`\r` is Enter, `\u001b` Esc, `\u000f` Ctrl-O). */
  keys(data: string): void;
  exited(): Promise<number | null>;
}

export function screenTack(
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string | undefined>;
    cols: number;
    rows: number;
    /** Lines kept above the screen (default 10,000, enough for any test's whole conversation). */
    scrollback?: number;
    onStart?: (kill: () => void) => void;
  },
): ScreenSession {
  const tack = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  // The pty's size is set inside it, before tack starts, so tack reads it as a terminal would tell it.
  const command = `stty cols ${options.cols} rows ${options.rows}; exec ${tack}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: options.cwd,
    // A CI variable or a TERM=dumb inherited from the test runner would turn the full screen into the line mode
    // (as for a user): the terminal is the xterm emulator below, whatever the runner's own is.
    env: { ...options.env, TERM: 'xterm-256color', CI: undefined, CONTINUOUS_INTEGRATION: undefined },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  options.onStart?.(() => child.kill('SIGKILL'));
  const term = new xterm.Terminal({
    cols: options.cols,
    rows: options.rows,
    scrollback: options.scrollback ?? 10_000,
    allowProposedApi: true,
  });
  let raw = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    raw += chunk.toString();
    term.write(chunk);
  });
  const rows = () => {
    const buffer = term.buffer.active;
    const out: string[] = [];
    for (let i = 0; i < options.rows; i++)
      out.push(buffer.getLine(buffer.viewportY + i)?.translateToString(true) ?? '');
    return out;
  };
  const screen = () => rows().join('\n');
  const lines = () => {
    const buffer = term.buffer.active;
    const out: string[] = [];
    for (let i = 0; i < buffer.length; i++) out.push(buffer.getLine(i)?.translateToString(true) ?? '');
    return out;
  };
  return {
    child,
    rows,
    screen,
    lines,
    raw: () => raw,
    async waitFor(text, timeoutMs = 20_000) {
      const seen = () => (typeof text === 'string' ? screen().includes(text) : text.test(screen()));
      const deadline = Date.now() + timeoutMs;
      while (!seen() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(screen()).toMatch(text);
    },
    keys(data) {
      child.stdin?.write(data);
    },
    exited: () => exit,
  };
}
