/**
 * The poisoning scan of a skill (SKILL.md's description and body, and the files its body references). A skill's
 * text is *meant* to instruct the model, so most of what makes a tool description suspect (text addressed to the
 * model, orders, imperatives, "always", references to other tools) is what every honest skill is made of. This
 * scan keeps only the evidence that no honest skill needs, each with the file and line it sits on:
 *
 * - invisible carriers and instruction overrides, from the tool scanner's cue checks (scanText): Unicode tag
 *   runs, variation-selector runs, zero-width and bidi controls, "ignore previous instructions", chat markup, base64
 *   that decodes to an instruction;
 * - hidden instructions: an HTML or Markdown comment outside code that gives orders, or markup that hides text;
 * - concealment: keeping something from the user ("do not tell the user", "without the user knowing");
 * - exfiltration: a sentence or command that moves a credential file, the environment or the conversation to a
 *   URL, an e-mail address or a socket; request-capture and paste hosts;
 * - commands that fetch and run code (`curl … | sh`, `iex (iwr …)`, `bash <(curl …)`), decode and run it
 *   (`base64 -d | sh`, `exec(b64decode(…))`), or install a package from a URL (an installer piped from a named
 *   HTTPS host only warns: vendors publish theirs in that shape);
 *
 * and lets a mention through as a mention: an override quoted in a line about such language, a persona, a
 * command with a part left out. Those findings stay in the list, as low (shown, not weighed).
 * - paths to another skill's secrets (`../other-skill/.env`) or to credential stores in the home folder.
 *
 * The verdict is the tool scanner's logistic weighing (verdict.ts `weigh`) with the skill model below: its own
 * weights and thresholds, written by hand from what each finding means (docs/security.md, "Skills"), not fitted.
 *
 * Cost: every check reads each line a bounded number of times; the patterns have bounded gaps, and a line is cut
 * into pieces of MAX_UNIT characters before the pattern checks, so a hostile one-line megabyte costs what a long
 * honest file costs. The cue checks run over windows of `scanBytes` characters.
 */

import { type Finding, type FindingSeverity, type ScanVerdict, scanText } from './scan.js';
import { clip } from './scan-normalize.js';
import { type Contribution, type ScanModel, weigh } from './verdict.js';

/** What the skill scan reports, in the order docs/security.md lists them: the cue checks' codes kept, then its own. */
export const SKILL_FINDING_CODES = [
  'unicode-tags',
  'variation-selectors',
  'zero-width',
  'bidi-control',
  'instruction-override',
  'encoded-payload',
  'hidden-instruction',
  'hidden-markup',
  'concealment',
  'exfiltration',
  'capture-host',
  'fetch-exec',
  'decode-exec',
  'remote-package',
  'foreign-secret',
  'oversized',
] as const;
export type SkillFindingCode = (typeof SKILL_FINDING_CODES)[number];

/** One text of a skill: its description, its SKILL.md body, or a file the body references. */
export interface SkillText {
  /** The file it comes from (absolute, or as the caller wants it shown). */
  file: string;
  text: string;
  /** The file's line the text starts on (the body's first line, the description's key line). */
  firstLine: number;
  /** Markdown (description, body, a referenced `.md`) has prose, code blocks and comments; other files are code. */
  kind: 'description' | 'body' | 'document' | 'code';
}

/** One thing the skill scan found, at a file and line. */
export interface SkillFinding {
  code: SkillFindingCode;
  severity: FindingSeverity;
  file: string;
  line: number;
  message: string;
  /** The words that raised it (clipped, invisible characters shown). */
  match: string;
  /** What a hidden payload says once decoded. */
  decoded?: string;
}

/** The verdict on a skill: clean, warn (shown) or block (its body is not served or loaded). */
export interface SkillScan {
  verdict: ScanVerdict;
  /** Bias plus the weight of each distinct finding kind (verdict.ts). */
  score: number;
  contributions: Contribution[];
  findings: SkillFinding[];
  /** The files read, in order (the SKILL.md first). */
  files: string[];
}

export interface SkillScanTextOptions {
  /** Characters of a text the cue checks read in one window (tack.json `limits.scanBytes`). */
  scanBytes?: number;
  /** The model that weighs the findings (default SKILL_SCAN_MODEL). */
  model?: ScanModel;
  /**
   * Text the caller did not read (past its caps): a high `oversized` finding on `file`. Unread text may hold
   * anything the model or a script would follow, so the skill is held, as a tool definition past limits.scanBytes is.
   */
  unread?: { file: string; message: string };
}

/**
 * The skill model. A finding adds its weight once per kind (`code`, or `code.high`). Any high kind reaches
 * `block` alone; a medium kind reaches `warn`; three medium kinds together block (a hidden comment that gives
 * orders, a capture host and a package fetched from a URL are, together, no longer an accident).
 */
export const SKILL_SCAN_MODEL: ScanModel = {
  version: 1,
  fittedOn: 'not fitted: weights set by hand from what each finding means (docs/security.md, Skills)',
  bias: 0,
  weights: Object.fromEntries(
    SKILL_FINDING_CODES.flatMap((code) => [
      [code, 2],
      [`${code}.high`, 6],
    ]),
  ),
  thresholds: { grey: 2, warn: 2, block: 6 },
  standalone: [],
};

const DECISIVE_CODES = new Set<SkillFindingCode>(['unicode-tags', 'variation-selectors']);

/** A line longer than this is checked in pieces of it: the pattern checks stay linear on a one-line megabyte. */
const MAX_UNIT = 4000;
/** Findings kept per code in one skill: a file that repeats one line 10,000 times makes 20, not 10,000. */
const MAX_PER_CODE = 20;

/** The skill scan of texts already read (description, body, referenced files): findings with file and line, and the verdict. */
export function scanSkillTexts(texts: readonly SkillText[], options: SkillScanTextOptions = {}): SkillScan {
  const findings: SkillFinding[] = [];
  const kept = new Map<string, number>();
  const seen = new Set<string>();
  const add = (finding: SkillFinding): void => {
    const key = `${finding.code}\u0000${finding.severity}`;
    const count = kept.get(key) ?? 0;
    const id = `${key}\u0000${finding.file}\u0000${finding.line}\u0000${finding.match}`;
    if (count >= MAX_PER_CODE || seen.has(id)) return;
    seen.add(id);
    kept.set(key, count + 1);
    findings.push(finding);
  };
  for (const text of texts) {
    cueChecks(text, options.scanBytes, add);
    lineChecks(text, add);
  }
  if (options.unread) add({ code: 'oversized', severity: 'high', line: 1, match: '', ...options.unread });
  const model = options.model ?? SKILL_SCAN_MODEL;
  const keys = findings
    .filter((f) => f.severity !== 'low')
    .map((f) => (f.severity === 'high' ? `${f.code}.high` : f.code));
  const decisive = findings.some((f) => f.severity === 'high' && DECISIVE_CODES.has(f.code));
  const judgement = weigh(keys, decisive, model);
  const order = (f: SkillFinding) => (f.severity === 'high' ? 0 : f.severity === 'medium' ? 1 : 2);
  findings.sort((a, b) => order(a) - order(b));
  return {
    verdict: judgement.verdict,
    score: judgement.score,
    contributions: judgement.contributions,
    findings,
    files: [...new Set(texts.map((t) => t.file))],
  };
}

type Add = (finding: SkillFinding) => void;

// ---------------------------------------------------------------------------------------------------------
// The tool scanner's cue checks, kept to those no honest skill raises

/** Cue codes that apply to skills as they are; the rest (orders, directives, URLs, paths) do not. */
const CUES_KEPT = new Set<string>(
  SKILL_FINDING_CODES.slice(0, SKILL_FINDING_CODES.indexOf('hidden-instruction')),
);
/** The cue scanner's hidden-markup findings kept: terminal escapes (styles and comments are judged below, in prose). */
const HIDING_MESSAGE = /^terminal escape/;
/** An override cue with no qualifier (previous, system, all, your, ...): an order about a thing, in a skill. */
const PLAIN_SKIP =
  /^(?:ignore|disregard|forget|override|bypass|skip)\s+(?:the\s+)?(?:instructions?|directions|directives|rules|guidelines|guardrails|prompts?|policies|constraints|restrictions)$/i;
/** An instruction quoted as an example of what not to write, in a line that says so, is a mention, not an order. */
const QUOTE_BEFORE = /["'`“‘(]\s{0,2}$/;
const MENTION =
  /(?:avoid|such as|e\.g\.|for example|\blike\b|language|phrases?|phrasing|attacks?|injections?|override|detect|\bflag|never|don't|do not|refuse|example|pattern|token|markup|jailbreak|\|)/i;
/** What turns "you are now ..." from a persona into an attempt to lift the model's rules. */
const JAILBREAK =
  /\b(?:DAN|developer\s{1,3}mode|jailbr(?:oken|eak)|unrestricted|unfiltered|no\s{1,3}longer\s{1,3}(?:bound|restricted|an?\s{1,3}(?:ai|assistant))|without\s{1,3}(?:any\s{1,3})?(?:restrictions|limits|rules|filters|guidelines)|free\s{1,3}(?:of|from)\s{1,3}(?:all\s{1,3})?(?:restrictions|rules|guidelines))\b/i;

/** `[system]` and `<system>` are also a TOML section and an index in code: in a code block they are not markup. */
const BARE_SYSTEM = /^[<[]\/?\s{0,3}system\s{0,3}[>\]]$/i;

/** The lines (0-based, in `text`) inside fenced code blocks of a Markdown text. */
function fencedLines(text: SkillText): Set<number> {
  const lines = new Set<number>();
  if (text.kind === 'code') return lines;
  let fence: string | undefined;
  text.text.split('\n').forEach((raw, i) => {
    const marker = FENCE.exec(raw);
    if (fence !== undefined) {
      if (marker && marker[1]![0] === fence[0] && marker[1]!.length >= fence.length) fence = undefined;
      else lines.add(i);
    } else if (marker) fence = marker[1]!;
  });
  return lines;
}

function cueChecks(text: SkillText, scanBytes: number | undefined, add: Add): void {
  const fenced = fencedLines(text);
  const window = Math.max(1024, scanBytes ?? 64 * 1024);
  let start = 0;
  let line = text.firstLine;
  while (start < text.text.length) {
    let end = Math.min(text.text.length, start + window);
    // Windows end at a line's end when one is near, so a phrase is not cut in two.
    if (end < text.text.length) {
      const newline = text.text.lastIndexOf('\n', end);
      if (newline > start + window / 2) end = newline + 1;
    }
    const piece = text.text.slice(start, end);
    for (const cue of scanText(piece, { kind: 'skill' }, { scanBytes: piece.length })) {
      const found = fromCue(cue);
      if (!found) continue;
      const at = offsetOf(piece, cue.match);
      const lineAt = line + (at < 0 ? 0 : countLines(piece.slice(0, at)));
      if (found.code === 'instruction-override') {
        const inCode =
          text.kind === 'code' || (BARE_SYSTEM.test(cue.match) && fenced.has(lineAt - text.firstLine));
        const why = overrideMention(piece, at, cue.match, inCode);
        if (why) {
          found.severity = 'low';
          found.message += ` (${why})`;
        }
      }
      add({ ...found, file: text.file, line: lineAt });
    }
    line += countLines(piece);
    start = end;
  }
}

function fromCue(cue: Finding): Omit<SkillFinding, 'file' | 'line'> | undefined {
  const base = { message: cue.message, match: cue.match, ...(cue.decoded ? { decoded: cue.decoded } : {}) };
  if (cue.message.endsWith('(inside a hidden payload)') && cue.severity === 'high')
    return { ...base, code: 'encoded-payload', severity: 'high' };
  if (cue.code === 'hidden-markup')
    return HIDING_MESSAGE.test(cue.message)
      ? { ...base, code: 'hidden-markup', severity: 'medium' }
      : undefined;
  if (!CUES_KEPT.has(cue.code) || cue.severity === 'low') return undefined;
  // A stray zero-width character or two is copy-paste residue: shown, not weighed.
  if (cue.code === 'zero-width' && cue.severity === 'medium')
    return { ...base, code: 'zero-width', severity: 'low' };
  return { ...base, code: cue.code as SkillFindingCode, severity: cue.severity };
}

/** Where a cue's match starts in the piece (its visible start, invisible characters put back), or -1. */
function offsetOf(piece: string, match: string): number {
  const raw = match
    .replace(/…$/, '')
    .replace(/\\u\{([0-9A-F]+)\}/g, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
  const probe = raw.slice(0, 40);
  return probe ? piece.indexOf(probe) : -1;
}

/**
 * Why an override cue in a skill is a mention rather than an order, or undefined when it is an order. A skill
 * writes orders and personas by design, and skills about prompt security list the phrases they look for:
 * - a phrase quoted in a line that talks about such language ("avoid ... 'disregard the previous instruction'");
 * - "skip the prompt" (a CLI's question), "ignore the rules" (a linter's): it names no instructions of the model;
 * - "You are now a world-class designer": a persona, unless the line asks for a mode without rules;
 * - a code file (a referenced script): its strings are data the script matches, not text the model is given.
 */
function overrideMention(piece: string, at: number, match: string, code: boolean): string | undefined {
  if (code) return 'in code';
  if (PLAIN_SKIP.test(match)) return 'names no instructions of the model: "previous", "system", "all", ...';
  if (at < 0) return undefined;
  const start = piece.lastIndexOf('\n', at) + 1;
  const end = piece.indexOf('\n', at);
  const line = piece.slice(start, end < 0 ? piece.length : end);
  if (QUOTE_BEFORE.test(piece.slice(Math.max(start, at - 3), at)) && MENTION.test(line))
    return 'quoted as an example';
  if (/^you are now\b/i.test(match) && !JAILBREAK.test(line)) return 'a persona';
  return undefined;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

// ---------------------------------------------------------------------------------------------------------
// The skill's own checks, by unit: a sentence of prose, a line of code, a comment

interface Unit {
  text: string;
  line: number;
  code: boolean;
  /** A line of a file that is code as a whole (a referenced script), not of a code block in Markdown. */
  codeFile?: boolean;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/** The units of a text: prose sentences (Markdown outside code), code lines, and the comments of its prose. */
function* unitsOf(text: SkillText): Generator<Unit & { comment?: boolean }> {
  const lines = text.text.split('\n');
  const markdown = text.kind !== 'code';
  let fence: string | undefined;
  let paragraph: { parts: string[]; line: number } | undefined;
  let comment: { parts: string[]; line: number } | undefined;
  const flush = function* (): Generator<Unit> {
    if (!paragraph) return;
    const joined = paragraph.parts.join('\n');
    let offset = 0;
    for (const sentence of joined.split(/(?<=[.!?])\s+(?=[A-Z`*"'([<~-])/)) {
      const at = joined.indexOf(sentence, offset);
      offset = at + sentence.length;
      for (const piece of pieces(sentence))
        yield { text: piece, line: paragraph.line + countLines(joined.slice(0, at)), code: false };
    }
    paragraph = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const line = text.firstLine + i;
    // A shell line continued with a backslash is one command: `curl … \` then `| sh` on the next line.
    const continued = () => {
      let whole = raw;
      while (whole.endsWith('\\') && i + 1 < lines.length) whole = `${whole.slice(0, -1)} ${lines[++i]!}`;
      return whole;
    };
    if (!markdown) {
      for (const piece of pieces(continued())) yield { text: piece, line, code: true, codeFile: true };
      continue;
    }
    const marker = FENCE.exec(raw);
    if (fence !== undefined) {
      if (marker && marker[1]![0] === fence[0] && marker[1]!.length >= fence.length) fence = undefined;
      else for (const piece of pieces(continued())) yield { text: piece, line, code: true };
      continue;
    }
    if (marker && !comment) {
      yield* flush();
      fence = marker[1]!;
      continue;
    }
    // Comments outside code: hidden when rendered, read by the model.
    let rest = raw;
    while (rest) {
      if (comment) {
        const close = rest.indexOf('-->');
        comment.parts.push(close < 0 ? rest : rest.slice(0, close));
        if (close < 0) break;
        yield { text: comment.parts.join('\n'), line: comment.line, code: false, comment: true };
        comment = undefined;
        rest = rest.slice(close + 3);
        continue;
      }
      const open = rest.indexOf('<!--');
      if (open < 0) break;
      comment = { parts: [], line };
      rest = rest.slice(open + 4);
    }
    const markdownComment = /^\s{0,3}\[\/\/\]:\s{0,3}#\s{0,3}\((.*)\)\s*$/.exec(raw);
    if (markdownComment) yield { text: markdownComment[1]!, line, code: false, comment: true };
    // Headings and table rows stand alone; a list item starts a unit of its own (items seldom end with a period).
    if (!raw.trim() || /^\s{0,3}[#|]/.test(raw)) {
      yield* flush();
      if (raw.trim()) for (const piece of pieces(raw)) yield { text: piece, line, code: false };
      continue;
    }
    if (/^\s{0,8}(?:[-*+]|\d{1,3}[.)])\s/.test(raw)) yield* flush();
    paragraph ??= { parts: [], line };
    paragraph.parts.push(raw);
  }
  if (comment) yield { text: comment.parts.join('\n'), line: comment.line, code: false, comment: true };
  yield* flush();
}

function pieces(text: string): string[] {
  if (text.length <= MAX_UNIT) return [text];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += MAX_UNIT) out.push(text.slice(i, i + MAX_UNIT));
  return out;
}

function lineChecks(text: SkillText, add: Add): void {
  for (const unit of unitsOf(text)) {
    const found = (code: SkillFindingCode, severity: FindingSeverity, message: string, match: string): void =>
      add({
        code,
        severity,
        file: text.file,
        line: unit.line + lineIn(unit.text, match),
        message,
        match: clip(match),
      });
    if (unit.comment) {
      hiddenInstruction(unit.text, found);
      continue;
    }
    checkUnit(unit, found);
  }
}

function lineIn(text: string, match: string): number {
  const at = text.indexOf(match);
  return at < 0 ? 0 : countLines(text.slice(0, at));
}

type Found = (code: SkillFindingCode, severity: FindingSeverity, message: string, match: string) => void;

function checkUnit(unit: Unit, found: Found): void {
  const text = unit.text;
  for (const { re, code, severity, message } of COMMAND_RULES) {
    const m = re.exec(text);
    if (!m || (code === 'remote-package' && /index-url/i.test(m[0]))) continue;
    // `curl ... | sh`, `eval(b64decode("..."))`: a shape with a part left out, as a threat model shows it.
    if (/\.\.\.|…/.test(text.slice(m.index, m.index + m[0].length + 40))) {
      found(code, 'low', `${message} (an example with a part left out)`, m[0]);
      continue;
    }
    if (code === 'fetch-exec' && publishedInstaller(text)) {
      found(code, 'medium', `${message} (an HTTPS installer: review it before anyone runs it)`, m[0]);
      continue;
    }
    found(code, severity, message, m[0]);
  }
  const override = OVERRIDE.exec(text);
  if (override) {
    // Quoted in a sentence about such language ("avoid ... 'disregard the previous instruction'"): a mention.
    const why = overrideMention(text, override.index, override[0], unit.codeFile === true);
    found(
      'instruction-override',
      why ? 'low' : 'high',
      `tells the model to drop the instructions it was given${why ? ` (${why})` : ''}`,
      override[0],
    );
  }
  const concealed = concealment(text);
  if (concealed) found('concealment', concealed.severity, concealed.message, concealed.match);
  const exfil = exfiltration(text, unit.code);
  if (exfil) found('exfiltration', 'high', exfil.message, exfil.match);
  for (const { re, code, severity, message, prose } of SIGNS) {
    const m = prose && unit.code ? null : re.exec(text);
    if (m) found(code, severity, message, m[0]);
  }
  for (const token of text.match(PATH_TOKEN) ?? []) {
    const secret = foreignSecret(token, text);
    if (secret) {
      found('foreign-secret', secret.severity, secret.message, token);
      break;
    }
  }
}

/** Styles that hide text, in Markdown prose (an HTML asset hides and shows its own elements; that is not this). */
const HIDING_STYLE =
  /\bstyle\s{0,3}=\s{0,3}["'][^"'\n]{0,200}?(?:display\s{0,3}:\s{0,3}none|visibility\s{0,3}:\s{0,3}hidden|font-size\s{0,3}:\s{0,3}0(?![.\d])|opacity\s{0,3}:\s{0,3}0(?![.\d])|color\s{0,3}:\s{0,3}(?:white|#fff\b|#ffffff|transparent))/i;

// ---------------------------------------------------------------------------------------------------------
// Commands that fetch and run code

const SHELL = String.raw`(?:sudo\s{1,3}(?:-\S{1,20}\s{1,3}){0,3})?(?:\/(?:usr\/)?bin\/)?(?:ba|z|da|k|fi)?sh\b|python[23]?(?:\s|$)|perl\b|ruby\b|node\b|iex\b|Invoke-Expression\b`;
const FETCH = String.raw`\b(?:curl|wget|iwr|irm|Invoke-WebRequest|Invoke-RestMethod|fetch)\b`;

const COMMAND_RULES: ReadonlyArray<{
  re: RegExp;
  code: SkillFindingCode;
  severity: FindingSeverity;
  message: string;
}> = [
  {
    re: new RegExp(String.raw`${FETCH}[^\n|;&]{0,400}\|\s{0,3}(?:${SHELL})`, 'i'),
    code: 'fetch-exec',
    severity: 'high',
    message: 'downloads code and pipes it into an interpreter: it runs whatever the server sends that day',
  },
  {
    re: /(?:\b(?:ba|z)?sh|\bsource|\.)\s{1,3}<\(\s{0,3}(?:curl|wget)\b|\b(?:(?:ba|z)?sh\s{1,3}-c|eval)\s{1,3}["']?\$\(\s{0,3}(?:curl|wget)\b|\b(?:iex|Invoke-Expression)\b[^\n]{0,40}?(?:\biwr\b|\birm\b|Invoke-WebRequest|Invoke-RestMethod|DownloadString|\bcurl\b|\bwget\b)|\b(?:exec|eval)\s{0,3}\(\s{0,3}(?:urllib\.request\.urlopen|requests\.get|urlopen|fetch)\b/i,
    code: 'fetch-exec',
    severity: 'high',
    message: 'downloads code and runs it in one step: it runs whatever the server sends that day',
  },
  {
    re: /\b(?:curl|wget)\b[^\n;&|]{0,300}?\s(?:-o|-O|--output|>)\s{0,3}(\S{1,200})[^\n]{0,100}?(?:&&|;)\s{0,3}(?:sudo\s{1,3})?(?:(?:ba|z|da)?sh|python[23]?|node|perl|ruby|chmod\s{1,3}\+x)\s/i,
    code: 'fetch-exec',
    severity: 'high',
    message: 'downloads code and runs it: it runs whatever the server sends that day',
  },
  {
    re: /\bbase64\s{1,3}(?:-d|--decode|-D)\b[^\n|;]{0,200}\|\s{0,3}(?:sudo\s{1,3})?(?:(?:ba|z|da)?sh|python[23]?|perl|node)\b|\b(?:exec|eval)\s{0,3}\(\s{0,3}(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|atob|Buffer\.from)\b|-(?:EncodedCommand|enc|e)\s{1,3}[A-Za-z0-9+/]{40,}={0,2}/i,
    code: 'decode-exec',
    severity: 'high',
    message: 'decodes a hidden payload and runs it: nobody reading the skill can see what runs',
  },
  {
    re: /\b(?:npx|bunx|pnpm\s{1,3}dlx)\s{1,3}(?:-{1,2}[\w-]{1,20}\s{1,3}){0,4}(?:https?:\/\/|git\+|github:|gitlab:)\S{1,300}|\b(?:npm|pnpm|yarn|bun)\s{1,3}(?:i|install|add)\s{1,3}(?:-{1,2}[\w-]{1,20}\s{1,3}){0,4}(?:https?:\/\/|git\+|github:)\S{1,300}|\bpip3?\s{1,3}install\s{1,3}(?:-{1,2}[\w-]{1,20}\s{1,3}){0,4}(?:https?:\/\/|git\+)\S{1,300}|\buvx?\s{1,3}(?:tool\s{1,3}(?:run|install)\s{1,3})?--from\s{1,3}(?:https?:\/\/|git\+)\S{1,300}/i,
    code: 'remote-package',
    severity: 'medium',
    message: 'installs or runs a package from a URL or a repository rather than a pinned registry version',
  },
];

// ---------------------------------------------------------------------------------------------------------
// Overrides the cue scanner words otherwise, and URLs that carry data out when rendered

const OVERRIDE =
  /\b(?:ignore|disregard|forget|override|bypass)\s{1,3}(?:(?:all|any|every)\s{1,3})?(?:of\s{1,3})?(?:(?:the|your)\s{1,3})?(?:previous|prior|earlier|above|preceding|original|system|safety|developer|operator)\s{1,3}(?:[\w-]{1,20}\s{1,3})?(?:instructions?|guidance|guidelines|rules|prompts?|messages?|directives|policies|constraints)\b/i;
const IMAGE_BEACON =
  /!?\[[^\]\n]{0,100}\]\(\s{0,3}https?:\/\/[^)\s]{0,300}?(?:\{\{?|\$\{|<|%7B)[^)\s]{0,60}?(?:conversation|history|messages?|chat|secret|token|api[_-]?key|password|env|credential|summary|prompt)/i;

/**
 * Whether the code a command fetches comes from a named HTTPS host that is not a capture, paste or tunnel host:
 * the shape in which uv, Flux, Linkerd and many other tools publish their installers. Such a command is flagged
 * (warn), not held: it runs only through a shell tool the user approves, with the command shown. Over plain HTTP,
 * from an address or a throwaway host, it is held.
 */
function publishedInstaller(text: string): boolean {
  const urls = text.match(/\bhttps?:\/\/[^\s"'`)<>]{1,300}/gi) ?? [];
  return (
    urls.length > 0 &&
    urls.every(
      (url) =>
        /^https:\/\/(?![\d.]{7,15}(?:[:/]|$))[\w-]{1,63}(?:\.[\w-]{1,63}){0,5}\.[a-z]{2,24}(?:[:/?#]|$)/i.test(
          url,
        ) &&
        !CAPTURE_HOST.test(url) &&
        !TUNNEL_HOST.test(url),
    )
  );
}

const TUNNEL_HOST =
  /(?:^|[./])(?:ngrok(?:-free)?\.(?:io|app|dev)|trycloudflare\.com|loca\.lt|localtunnel\.me|serveo\.net|localhost\.run)(?:[/:?#]|$)/i;

// ---------------------------------------------------------------------------------------------------------
// Concealment

const USER = String.raw`(?:the\s{1,3}|your\s{1,3})?(?:user|human|operator|owner)s?`;
const CONCEAL_HIGH = new RegExp(
  [
    String.raw`\bwithout\s{1,3}${USER}(?:'s)?\s{1,3}(?:knowing|knowledge|noticing|awareness|consent|permission|being\s{1,3}(?:told|aware|informed))`,
    String.raw`\bwithout\s{1,3}(?:telling|informing|notifying|alerting)\s{1,3}${USER}`,
    String.raw`\b${USER}\s{1,3}(?:must|should|need|needs|may|can)\s{0,3}(?:not|never)\s{1,3}(?:to\s{1,3})?(?:know|see|notice|find\s{1,3}out|learn|be\s{1,3}(?:told|aware|informed))`,
    String.raw`\b(?:hide|conceal|keep)\b[^.\n]{0,40}\b(?:secret\s{1,3})?from\s{1,3}${USER}`,
    String.raw`\b(?:secretly|covertly|surreptitiously|silently|quietly)\s{1,3}(?:send|upload|post|exfiltrate|transmit|forward|collect|copy|report|beacon|append|include|attach|embed)`,
    String.raw`\b(?:do\s{1,3}not|don't|never)\s{1,3}(?:tell|inform|notify|alert)\s{1,3}${USER}\s{1,3}(?:about|of)\s{1,3}(?:this|these|that|it)\b`,
  ].join('|'),
  'i',
);
const CONCEAL_MEDIUM = new RegExp(
  String.raw`\b(?:do\s{1,3}not|don't|never)\s{1,3}(?:tell|inform|notify|alert|mention\s{1,3}(?:this|these|it)\s{1,3}to)\s{1,3}${USER}|\bdo\s{1,3}not\s{1,3}(?:log|record|mention)\s{1,3}(?:this|these)\s{1,3}(?:step|action|command|request|call)s?`,
  'i',
);

function concealment(
  text: string,
): { severity: FindingSeverity; message: string; match: string } | undefined {
  const high = CONCEAL_HIGH.exec(text);
  if (high)
    return { severity: 'high', message: 'asks for something to be kept from the user', match: high[0] };
  const medium = CONCEAL_MEDIUM.exec(text);
  if (medium)
    return {
      severity: 'medium',
      message: 'tells the model not to tell the user something',
      match: medium[0],
    };
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Exfiltration: a sensitive source, a sink off the machine and a transfer, in one sentence or command

const SECRET_FILE =
  /(?:~|\$HOME|%USERPROFILE%|\/home\/[\w.-]{1,40}|\/Users\/[\w.-]{1,40}|\/root)?\/?\.ssh\/(?![\w.-]{0,60}\.pub\b)[\w.-]{0,60}|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|\.aws\/credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.kube\/config\b|\.docker\/config\.json|\.gnupg\b|\/etc\/shadow\b|\.config\/gh\/hosts\.yml|\bwallet\.dat\b|\bLogin Data\b|\bkeychain\b|\bclaude_desktop_config\.json\b|\.bash_history\b|\.zsh_history\b|(?<![\w.$-])\.env(?:\.(?!example\b|sample\b|template\b)[\w-]{1,20})?(?![\w.-])/i;
const ENV_DUMP =
  /\$\(\s{0,3}(?:env|printenv|set)\b(?:\s{0,3}\|[^)\n]{0,100})?\)|`(?:env|printenv)`|(?:^|[;&|`!(]\s{0,3})(?:env|printenv)\s{0,3}(?:\||>|$)|\bos\.environ\b(?!\s{0,3}(?:\[|\.get|\.setdefault|\.pop|\.copy))|\bprocess\.env\b(?!\s{0,3}(?:\.|\[|\?\.))|\bGet-ChildItem\s{1,3}env:|\b(?:all|every|the\s{1,3}user's)\s{1,3}(?:of\s{1,3}(?:the|your)\s{1,3})?environment\s{1,3}variables\b/i;
const CONVERSATION =
  /\b(?:(?:entire|full|whole|complete)\s{1,3})?(?:conversation|chat)\s{1,3}(?:history|so\s{1,3}far|log|transcript)\b|\b(?:entire|full|whole)\s{1,3}conversation\b|\bprevious\s{1,3}messages\b|\bsystem\s{1,3}prompt\b|\buser'?s?\s{1,3}(?:messages|prompts)\b/i;
const CREDENTIAL_WORDS =
  /\b(?:(?:api|access|secret|private|auth|bearer)\s{1,3}(?:keys?|tokens?)|passwords?|credentials|secrets|session\s{1,3}cookies?|ssh\s{1,3}keys?)\b/i;
const SECRET_VARIABLE =
  /\$\{?[A-Z][A-Z0-9_]{0,60}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)\b|(?:os\.environ(?:\.get)?\s{0,3}[[(]\s{0,3}|process\.env\.|getenv\(\s{0,3})['"]?[A-Z0-9_]{0,60}(?:KEY|TOKEN|SECRET|PASSWORD)/;
/** Where a credential authenticates a request rather than travelling as its data: left out of the sources. */
const AUTH_PARTS =
  /(?:-H|--header)\s{1,3}(?:"[^"\n]{0,300}"|'[^'\n]{0,300}'|\S{1,300})|\b(?:authorization|x-api-key|api[_-]?key|auth[_-]?token|token|bearer)\b["']?\s{0,3}[:=]\s{0,3}[^\s,)}]{1,300}|\bheaders\s{0,3}[:=]\s{0,3}\{[^}\n]{0,300}\}/gi;

const URL = /\bhttps?:\/\/[^\s"'`)<>\]]{1,300}/i;
const EMAIL = /(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,5}\b(?!:)/;
const SOCKET =
  /\b(?:nc|ncat|netcat|socat)\s{1,3}(?:-\w{1,5}\s{1,3}){0,3}[\w.-]{1,100}\s{1,3}\d{1,5}\b|\/dev\/(?:tcp|udp)\/|\b(?:scp|rsync)\b[^\n]{0,200}\s[\w.-]{1,64}@[\w.-]{1,100}:/i;
const CODE_TRANSFER =
  /\bcurl\b[^\n]{0,300}?\s(?:-d|--data(?:-\w{1,10})?|-F|--form|-T|--upload-file|-X\s{0,3}(?:POST|PUT))\b|\bwget\b[^\n]{0,300}?--post-(?:data|file)|\|\s{0,3}(?:nc|ncat|netcat|curl|socat)\b|\b(?:requests|httpx|axios|session|client|http)\.(?:post|put)\s{0,3}\(|\bfetch\s{0,3}\([^\n]{0,300}?method\s{0,3}:\s{0,3}['"](?:POST|PUT)|Invoke-(?:RestMethod|WebRequest)[^\n]{0,300}?-Method\s{1,3}(?:Post|Put)|\b(?:scp|rsync|sendmail|mutt)\b|\bmail\s{1,3}-s\b|\/dev\/tcp\/|\burlopen\s{0,3}\([^\n]{0,300}?data\s{0,3}=/i;
const PROSE_TRANSFER =
  /\b(?:send|sends|sending|post|posting|upload|uploading|e-?mail\s{1,3}(?:it|them|this|these|that|the|all|every|a\s{1,3}copy)\b|forward|forwarding|transmit|exfiltrate|beacon|submit|report|leak|copy|paste)\b/i;

function exfiltration(text: string, code: boolean): { message: string; match: string } | undefined {
  // Prose holds commands too (inline code, Claude Code's !`command` lines).
  const transfer = CODE_TRANSFER.exec(text) ?? (code ? null : PROSE_TRANSFER.exec(text));
  if (!transfer) return undefined;
  // In prose the data goes somewhere after the verb ("send X to URL"); "register at URL: credentials are
  // passed with each call" names a place, then says how a service is used.
  const after = code ? text : text.slice(transfer.index);
  const sink = URL.exec(after) ?? EMAIL.exec(after) ?? SOCKET.exec(after) ?? CAPTURE_HOST.exec(after);
  if (!sink) return undefined;
  const data = text.replace(AUTH_PARTS, ' ');
  const source =
    SECRET_FILE.exec(data) ??
    ENV_DUMP.exec(data) ??
    CONVERSATION.exec(data) ??
    (code ? SECRET_VARIABLE.exec(data) : CREDENTIAL_WORDS.exec(data));
  if (!source) return undefined;
  return {
    message: `moves ${source[0].trim()} to ${sink[0]}: a credential, the environment or the conversation sent off the machine`,
    match: text.length > 200 ? text.slice(Math.max(0, Math.min(transfer.index, source.index) - 20)) : text,
  };
}

const CAPTURE_HOST =
  /(?:^|[^\w-])((?:[\w-]{1,63}\.){0,4}(?:webhook\.site|requestbin\.\w{2,6}|pipedream\.net|pastebin\.com|paste\.ee|hastebin\.com|ghostbin\.\w{2,6}|burpcollaborator\.net|oastify\.com|interact\.sh|oast\.(?:pro|live|site|online|fun|me)|hookbin\.com|beeceptor\.com|requestcatcher\.com|transfer\.sh|0x0\.st|discord(?:app)?\.com\/api\/webhooks|canarytokens\.com|dnslog\.cn|postb\.in|ptsv[23]\.com|api\.telegram\.org\/bot))/i;

// ---------------------------------------------------------------------------------------------------------
// Another skill's secrets, credential stores

const PATH_TOKEN = /[~$%*\w./\\-]{2,300}/g;
const SECRET_NAME =
  /(?:^|[/\\])(?:\.env(?:\.[\w-]{1,20})?|secrets?\.(?:json|ya?ml|toml|env)|credentials?(?:\.[\w]{1,8})?|[\w-]{0,40}\.(?:pem|key|p12|pfx)|id_(?:rsa|dsa|ecdsa|ed25519)|tokens?\.json|\.netrc|\.npmrc|\.pypirc|\.git-credentials)$/i;
const HOME_STORE =
  /^(?:~|\$HOME|%USERPROFILE%|\/home\/[\w.-]{1,40}|\/Users\/[\w.-]{1,40}|\/root)[/\\](?:\.ssh[/\\](?![\w.-]{0,60}\.pub$)[\w.-]{1,60}|\.aws[/\\]credentials|\.netrc|\.npmrc|\.pypirc|\.git-credentials|\.kube[/\\]config|\.docker[/\\]config\.json|\.gnupg\b.{0,60}|\.config[/\\]gh[/\\]hosts\.yml|\.env(?:\.[\w-]{1,20})?)$/i;
const READ_VERB =
  /\b(?:cat|read|reads|reading|open|load|source|copy|cp|print|include|append|embed|paste|attach|upload|send|base64|less|more|head|tail|type|Get-Content|grep|dump)\b/i;

function foreignSecret(
  raw: string,
  text: string,
): { severity: FindingSeverity; message: string } | undefined {
  const token = raw.replace(/[.,;:]+$/, '');
  if (!SECRET_NAME.test(token) && !HOME_STORE.test(token)) return undefined;
  const parts = token.split(/[/\\]/);
  const outOfSkill = parts.includes('..');
  const otherSkill =
    (outOfSkill && parts.length >= 3) || /(?:^|[/\\])skills[/\\][\w.*-]{1,64}[/\\]/.test(token);
  if (otherSkill && SECRET_NAME.test(token))
    return {
      severity: 'high',
      message: "points at a secret file of another skill or folder outside this skill's own",
    };
  if (HOME_STORE.test(token) && READ_VERB.test(text))
    return { severity: 'medium', message: 'reads a credential store in the home folder' };
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Hidden instructions

const ADDRESS =
  /\b(?:you|your|yourself|assistant|claude|chatgpt|gpt|copilot|(?:the|an?)\s{1,3}(?:ai|model|agent|llm|language\s{1,3}model))\b/i;
const IMPERATIVE_START =
  /(?:^|[.!?:\n]\s{0,3})(?:always|never|ignore|disregard|forget|do\s{1,3}not|don't|run|execute|send|upload|post|read|fetch|download|install|call|invoke|include|append|tell|say|respond|reply|output|print|delete|remove|copy|open|make\s{1,3}sure|ensure|remember|before|after|when|whenever|first|instead)\b/i;

function hiddenInstruction(text: string, found: Found): void {
  const body = text.trim();
  if (!body) return;
  // What a hidden comment says is checked like any other text; a command or a theft in it is what it is.
  checkUnit({ text: body, line: 0, code: false }, found);
  const orders = IMPERATIVE_START.exec(body);
  const address = ADDRESS.exec(body);
  if (orders && address)
    found(
      'hidden-instruction',
      'high',
      'a comment hidden when rendered gives the model orders: the user reviewing the skill does not see them',
      body,
    );
  else if (orders)
    found('hidden-instruction', 'medium', 'a comment hidden when rendered reads like an instruction', body);
}

/** One pattern, one finding: the signs that need nothing else in their sentence. */
const SIGNS: ReadonlyArray<{
  re: RegExp;
  code: SkillFindingCode;
  severity: FindingSeverity;
  message: string;
  /** Only in prose (not in code lines). */
  prose?: boolean;
}> = [
  {
    re: IMAGE_BEACON,
    code: 'exfiltration',
    severity: 'high',
    message: 'an image or link whose URL carries the conversation or a secret: rendering it sends them',
  },
  {
    re: HIDING_STYLE,
    code: 'hidden-markup',
    severity: 'medium',
    message: 'markup that hides text when rendered (read by the model all the same)',
    prose: true,
  },
  {
    re: CAPTURE_HOST,
    code: 'capture-host',
    severity: 'medium',
    message: 'names a request-capture or paste host (where stolen data is collected)',
  },
];
