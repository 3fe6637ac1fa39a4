import { describe, expect, it } from 'vitest';
import { printable, printableJson } from '../../src/util/printable.js';

const HOSTILE =
  'a\u001b]52;c;SGVsbG8=\u0007b\u001b[2Jc\u009b2Jd\u009d0;t\u009ce\u007f\u0008f\r\ng\th' +
  '\u202eI\u2066J\u200fK\u061cL\u200bM\ufeffN\u2060O\u180eP\u2028Q\u2029R\u{e0041}S';

describe('printable', () => {
  it('removes every control character: no escape sequence can start, C1 ones included', () => {
    expect(printable('ok\u001b[2J\u001b]0;pwned\u0007\tdone\u009b31m\r\nnext')).toBe(
      'ok[2J]0;pwned  done31m\nnext',
    );
  });

  it('shows bidi controls and marks, invisible characters, separators and tag characters as \\u{…}', () => {
    expect(printable(HOSTILE)).toBe(
      'a]52;c;SGVsbG8=b[2Jc2Jd0;tef\ng  h' +
        '\\u{202E}I\\u{2066}J\\u{200F}K\\u{61C}L\\u{200B}M\\u{FEFF}N\\u{2060}O\\u{180E}P\\u{2028}Q\\u{2029}R\\u{E0041}S',
    );
  });

  it('keeps what scripts and emoji need: joiners, variation selectors, right-to-left letters', () => {
    const text = 'family 👨\u200d👩\u200d👧, heart ❤\ufe0f, می\u200cخواهم, שלום, 漢字';
    expect(printable(text)).toBe(text);
  });

  it('is idempotent, and keeps tabs when asked', () => {
    expect(printable(printable(HOSTILE))).toBe(printable(HOSTILE));
    expect(printable('--- a\tnow\u001b[2J', { keepTabs: true })).toBe('--- a\tnow[2J');
  });
});

describe('printableJson', () => {
  it('is the same value to a parser, with nothing a terminal acts on left raw', () => {
    const value = { [HOSTILE]: [HOSTILE, 1, null], nested: { text: HOSTILE } };
    for (const indent of [undefined, 2]) {
      const json = printableJson(value, indent);
      expect(JSON.parse(json)).toEqual(value);
      expect(printable(json)).toBe(json);
    }
    expect(printableJson('\u202e\u{e0041}')).toBe('"\\u202e\\udb40\\udc41"');
  });
});
