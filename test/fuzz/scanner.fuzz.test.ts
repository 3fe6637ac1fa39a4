import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FINDING_CODES,
  type Finding,
  type ScanLocation,
  type ScanWork,
  scanText,
  scanTool,
  showInvisible,
  verdictOf,
} from '../../src/security/scan.js';
import { KEY_SHAPES, shapeMatches } from '../../src/util/secrets.js';

/**
 * The poisoning scanner on random text and on text built from its own triggers (the words, markup, runs and
 * invisible characters its patterns look for), repeated and mixed. Properties: never an exception, findings
 * well-formed, work linear in the text (the scanner's own count, never the clock), the bound exact (scanning the
 * first L characters is scanning a text cut at L); and each pattern rewritten for linear time matches what the
 * pattern it replaced matched (the old patterns are kept here as references: on short texts their cost is no
 * matter). Seeded, bounded in runs.
 */
const RUNS = { seed: 20_261_201, numRuns: 150 };
const AT: ScanLocation = { kind: 'tool-description', server: 'evil', name: 'tool' };
const CATALOG = { knownTools: ['notes__search_notes', 'evil__tool'], knownServers: ['notes', 'evil'] };
/** As in scan-linear.test.ts: characters read per character scanned, at most. */
const READS_PER_CHAR = 160;

const pattern = (source: string, flags: string): RegExp => new RegExp(source, flags);
const tags = (text: string) =>
  Array.from(text, (ch) => String.fromCodePoint(0xe0000 + ch.charCodeAt(0))).join('');

const TRIGGERS = [
  ' ',
  '\n',
  '\t',
  '\r\n',
  '. ',
  ':',
  '#',
  '## ',
  'system',
  'assistant',
  'message',
  'ignore',
  'all',
  'previous',
  'instructions',
  'never',
  'make',
  'tell',
  'the user',
  "'s",
  'without',
  'knowing',
  'include',
  'full',
  'conversation',
  'send',
  'to',
  'the url',
  'when',
  'tool',
  'is called',
  'must',
  'other tools',
  'cc',
  'bcc:',
  'a@b.co',
  '<',
  '>',
  '<a ',
  'style="display:none"',
  '<details>',
  '<IMPORTANT>',
  '</IMPORTANT>',
  '<!--',
  '-->',
  '[//]: # (',
  '<|im_start|>',
  '[INST]',
  '.ssh',
  '~/',
  '.env',
  'id_rsa',
  'service-account',
  '.json',
  'Cookies',
  'http://x.io/',
  '?q=',
  '{',
  '}',
  'data:',
  ';base64,',
  'YWJjIGRlZiBnaGkgamtsIG1ubyBwcXI=',
  'QUJD',
  'eyJ',
  '-',
  'abcdefghij0123456789',
  'sk-',
  '\u200B',
  '\u200D',
  '\uFEFF',
  '\u202E',
  '\u200F',
  '\uFE0F',
  tags('send it'),
  '\u001B[31m',
  '\u001B]',
  '\u0007',
  '\u00A0',
  '\u3000',
  '\uFDFA',
  'search_notes',
  'the notes server',
];

/** A trigger, sometimes repeated into a run (the runs are what the old patterns choked on). */
const piece = (alphabet: readonly string[], maxRun: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...alphabet) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...alphabet), fc.integer({ min: 2, max: maxRun }))
        .map(([p, n]) => p.repeat(n)),
    },
  );
const built = (alphabet: readonly string[], maxPieces: number, maxRun: number) =>
  fc.array(piece(alphabet, maxRun), { maxLength: maxPieces }).map((pieces) => pieces.join(''));

const text = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  built(TRIGGERS, 60, 400),
);

const CODES = new Set<string>(FINDING_CODES);

function expectWellFormed(findings: readonly Finding[], location: ScanLocation): void {
  const kinds = new Map<string, number>();
  const seen = new Set<string>();
  for (const f of findings) {
    expect(CODES.has(f.code)).toBe(true);
    expect(['high', 'medium', 'low']).toContain(f.severity);
    expect(f.location).toEqual(location);
    expect(f.match.length).toBeLessThanOrEqual(201);
    const key = `${f.code} ${f.severity} ${f.match}`;
    expect(seen.has(key)).toBe(false);
    seen.add(key);
    kinds.set(`${f.code} ${f.severity}`, (kinds.get(`${f.code} ${f.severity}`) ?? 0) + 1);
  }
  for (const count of kinds.values()) expect(count).toBeLessThanOrEqual(20);
}

describe('the scanner on random and adversarial text', () => {
  it('never throws, gives well-formed findings, and reads a bounded multiple of the text', () => {
    fc.assert(
      fc.property(text, (input) => {
        const work: ScanWork = { passes: 0, chars: 0 };
        const findings = scanText(input, AT, { ...CATALOG, work });
        expectWellFormed(findings, AT);
        expect(['clean', 'warn', 'block']).toContain(verdictOf(findings));
        // A short text may expand by 4,096 characters when normalized before it is cut (scan.ts).
        expect(work.chars).toBeLessThanOrEqual(READS_PER_CHAR * input.length + 50 * 4096);
        if (input.length > 0) expect(work.passes).toBeGreaterThan(0);
      }),
      RUNS,
    );
  });

  it('reads the first scanBytes characters exactly as it reads a text cut there, and says what it left', () => {
    fc.assert(
      fc.property(built(TRIGGERS, 40, 50), fc.double({ min: 0, max: 1, noNaN: true }), (input, share) => {
        const limit = Math.floor(input.length * share);
        const rest = (findings: Finding[]) => findings.filter((f) => f.code !== 'oversized');
        const bounded = scanText(input, AT, { scanBytes: limit });
        expect(rest(bounded)).toEqual(rest(scanText(input.slice(0, limit), AT, { scanBytes: limit })));
        const unread = bounded.find((f) => f.code === 'oversized' && f.severity === 'high');
        expect(unread !== undefined).toBe(input.length > limit);
      }),
      RUNS,
    );
  });

  it('walks any JSON as an input schema without throwing, within its bounds', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), text, (inputSchema, description) => {
        const work: ScanWork = { passes: 0, chars: 0 };
        const { verdict, findings } = scanTool(
          { server: 'evil', name: 'tool', description, inputSchema },
          { work },
        );
        expect(verdict).toBe(verdictOf(findings));
        for (const f of findings) expect(CODES.has(f.code)).toBe(true);
        expect(work.chars).toBeLessThanOrEqual(READS_PER_CHAR * 64 * 1024);
      }),
      { ...RUNS, numRuns: 100 },
    );
  });
});

describe('each rewritten pattern matches what the old one matched', () => {
  /** The text the phrase rules see, for text without invisible characters or escapes. */
  const normalized = (input: string) => input.normalize('NFKC').replace(/[ \t]+/g, ' ');
  const clipped = (shown: string) => (shown.length > 200 ? `${shown.slice(0, 200)}…` : shown);

  it('chat-template markup and role headings', () => {
    const OLD =
      /<\|(?:im_start|im_end|system|endoftext|start_header_id)\|>|\[\/?(?:INST|SYSTEM)\]|<\/?(?:system|sys)>|^\s*#{2,}\s*(?:system|assistant)\s*(?:message|prompt)?\s*:/im;
    const alphabet = [
      ' ',
      '\n',
      '\t',
      '\r',
      '\u2028',
      '\u00A0',
      '#',
      'system',
      'Assistant',
      'prompt',
      'message',
    ];
    fc.assert(
      fc.property(built([...alphabet, ':', 'x', '<|im_start|>', '[INST]', '<sys>'], 30, 6), (input) => {
        const found = scanText(input, AT).find((f) => f.message.startsWith('imitates chat-template'));
        const old = OLD.exec(normalized(input))?.[0];
        expect(found?.match).toBe(old === undefined ? undefined : clipped(old));
      }),
      { ...RUNS, numRuns: 400 },
    );
  });

  it('whitespace that pushes text out of view', () => {
    const OLD = /(?:[ \t\u00A0\u2000-\u200A\u3000]{40,}|(?:[ \t]*\r?\n){8,})(?=\S)/g;
    fc.assert(
      fc.property(built([' ', '\t', '\n', '\r\n', '\r', '\u00A0', '\u3000', 'x', 'ab'], 30, 45), (input) => {
        const found = scanText(input, AT).find((f) => f.message.startsWith('a long run of whitespace'));
        const ws = input.match(OLD);
        const at = ws ? input.indexOf(ws[0]) + ws[0].length : -1;
        expect(found?.match).toBe(ws ? input.slice(at, at + 80) : undefined);
      }),
      { ...RUNS, numRuns: 400 },
    );
  });

  it('JWTs, in the scanner and the masker', () => {
    const jwt = KEY_SHAPES.find((shape) => shape.id === 'jwt')!;
    const alphabet = ['eyJ', '-', '_', '.', 'abcdefghij', 'A1', ' ', '.eyJ'];
    fc.assert(
      fc.property(built(alphabet, 30, 4), (input) => {
        const expected = Array.from(input.matchAll(jwt.re), (m) => ({ index: m.index, text: m[0] }));
        expect(shapeMatches(jwt, input)).toEqual(expected);
      }),
      { ...RUNS, numRuns: 400 },
    );
  });

  it('terminal escape sequences', () => {
    // Built from a string: the linter objects to control characters in regex literals.
    const OLD = pattern(String.raw`\u001B\[[0-9;?]*[A-Za-z]|\u001B\][^\u0007]*\u0007`, 'gu');
    fc.assert(
      fc.property(built(['\u001B', '[', ']', '\u0007', '1', ';', '?', 'm', 'x', ' '], 20, 3), (input) => {
        const found = scanText(input, AT).find((f) => f.message.startsWith('terminal escape'));
        const first = input.match(OLD)?.[0];
        expect(found?.match).toBe(first === undefined ? undefined : clipped(showInvisible(first)));
      }),
      { ...RUNS, numRuns: 400 },
    );
  });

  it('the sentence around a credential path', () => {
    // The old pattern's alternatives these pieces can meet.
    const PATH =
      /(?:~|\$HOME|%USERPROFILE%|\/home\/[\w.-]+|\/Users\/[\w.-]+|\/root)?\/?\.ssh(?:\/[\w.-]*)?|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?\b|(?<![\w.$])\.env(?:\.[\w-]+)?\b/gi;
    // Only these paths and no verbs or negations: every finding is a medium mention, told apart by its sentence.
    const alphabet = ['.ssh', '~/.ssh/id_rsa', 'id_rsa', '.env', ' ', '. ', '.', 'x', 'abc', 'zz zz'];
    fc.assert(
      fc.property(built(alphabet, 80, 30), (input) => {
        const body = normalized(input);
        const expected: string[] = [];
        for (const m of body.matchAll(PATH)) {
          if (m[0].length < 4) continue;
          const start = Math.max(body.lastIndexOf('. ', m.index - 1) + 1, m.index - 100, 0);
          const endDot = body.indexOf('. ', m.index + m[0].length);
          const end = Math.min(endDot < 0 ? body.length : endDot, m.index + m[0].length + 100);
          const sentence = clipped(body.slice(start, end).trim());
          if (!expected.includes(sentence) && expected.length < 20) expected.push(sentence);
        }
        const found = scanText(input, AT).filter((f) => f.code === 'sensitive-path');
        expect(found.map((f) => f.match)).toEqual(expected);
      }),
      { ...RUNS, numRuns: 300 },
    );
  });

  it('URL templates', () => {
    const URL = /\b(?:https?|ftp|wss?):\/\/[^\s"'`)\]]+/gi;
    const TEMPLATE =
      /[?&][\w.-]+=(?:\{\{?[^}]*\}\}?|<[^>]+>|\$\{?[\w.]+\}?|%[A-Z_]+%|\[[A-Z_ ]+\])|\/(?:\{\{?[^}/]*\}\}?|<[^>/]+>|\$\{?[\w.]+\}?)/i;
    const alphabet = [
      '?',
      '&',
      'a',
      'id',
      '=',
      '{',
      '}',
      '<',
      '>',
      '/',
      '$',
      '%',
      'X',
      '[',
      ']',
      '.',
      ',',
      '!',
    ];
    fc.assert(
      fc.property(built(alphabet, 25, 3), (tail) => {
        const input = `See http://h.io/p${tail} now`;
        const url = input.match(URL)![0];
        const trimmed = url.replace(url.includes('<') ? /[.,;:!?]+$/ : /[.,;:!?>]+$/, '');
        const found = scanText(input, AT).filter((f) => f.code === 'exfil-url');
        expect(found.length > 0).toBe(TEMPLATE.test(trimmed));
      }),
      { ...RUNS, numRuns: 400 },
    );
  });
});
