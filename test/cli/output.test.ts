import { afterEach, describe, expect, it, vi } from 'vitest';
import { print, printErr, printJson, style, table, warn } from '../../src/cli/output.js';

/** What `fn` wrote to stdout and stderr. */
function captured(fn: () => void): { stdout: string; stderr: string } {
  const out = { stdout: '', stderr: '' };
  const spy = (stream: 'stdout' | 'stderr') =>
    vi.spyOn(process[stream], 'write').mockImplementation((chunk: string | Uint8Array) => {
      out[stream] += String(chunk);
      return true;
    });
  const spies = [spy('stdout'), spy('stderr')];
  try {
    fn();
  } finally {
    for (const s of spies) s.mockRestore();
  }
  return out;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the output layer', () => {
  it('makes every string printable, whoever wrote it', () => {
    const { stdout, stderr } = captured(() => {
      print('tool said: ', 'evil\u001b]52;c;SGVsbG8=\u0007\u001b[2J\u202eok');
      printErr('progress: \u009b2J50%');
      print('--- a.md\tnow');
    });
    expect(stdout).toBe('tool said: evil]52;c;SGVsbG8=[2J\\u{202E}ok\n--- a.md\tnow\n');
    expect(stderr).toBe('progress: 2J50%\n');
  });

  it("adds tack's own styles only where colours are wanted, around printable text", () => {
    vi.stubEnv('NO_COLOR', '1');
    vi.stubEnv('FORCE_COLOR', undefined);
    expect(captured(() => warn('x\u001b[31my')).stderr).toBe('warning: x[31my\n');
    vi.stubEnv('FORCE_COLOR', '1');
    expect(captured(() => print(style.red('BLOCK'), ' a/b')).stdout).toBe('\u001b[31mBLOCK\u001b[39m a/b\n');
    expect(captured(() => print(style.yellow('\u001b[2Jx'))).stdout).toBe('\u001b[33m[2Jx\u001b[39m\n');
    vi.stubEnv('FORCE_COLOR', '0');
    vi.stubEnv('NO_COLOR', undefined);
    expect(captured(() => print(style.bold('b'))).stdout).toBe('b\n');
  });

  it('keeps JSON data parseable, with C1 and bidi escaped as JSON.stringify leaves them raw', () => {
    const value = { name: 'a\u009b2J\u202e\u001b[31m' };
    const { stdout } = captured(() => printJson(value));
    expect(stdout).toBe('{\n  "name": "a\\u009b2J\\u202e\\u001b[31m"\n}\n');
    expect(JSON.parse(stdout)).toEqual(value);
  });

  it('measures table cells after making them printable and one line', () => {
    expect(
      table(
        ['NAME', 'VERSION'],
        [
          ['a\u001b[2J', '1\nfake row'],
          ['\u202eb', '2'],
        ],
      ),
    ).toBe('NAME       VERSION\na[2J       1 fake row\n\\u{202E}b  2');
  });
});
