/**
 * The poisoning scanner: text that a third party wrote (tool, prompt and resource descriptions, server
 * instructions, skills, knowledge bodies) is checked for what tends to hide attacks on the model before any of it
 * reaches the model's context. Every check is a heuristic with its own stable code; codes and severities are
 * documented in docs/security.md, and test/fixtures/security/corpus.json measures recall and false positives.
 *
 * Calibration rule: `high` is reserved for text aimed at the model (directives, concealment, invisible payloads,
 * credential or context exfiltration), because a high finding blocks a tool until the user approves it. Plain
 * mentions of paths, URLs or other tools in honest documentation stay `medium` or `low`.
 */

import { KEY_SHAPES, PRIVATE_KEY_RE } from '../util/secrets.js';

export type FindingSeverity = 'high' | 'medium' | 'low';

export type ScanLocationKind =
  | 'tool-description'
  | 'tool-schema'
  | 'prompt'
  | 'resource'
  | 'instructions'
  | 'skill'
  | 'knowledge';

export interface ScanLocation {
  kind: ScanLocationKind;
  server?: string;
  name?: string;
  /** Where inside the definition: `title`, or a JSON path into the input schema (`inputSchema.properties.x.description`). */
  field?: string;
}

export type FindingCode =
  | 'unicode-tags'
  | 'variation-selectors'
  | 'zero-width'
  | 'bidi-control'
  | 'instruction-override'
  | 'model-directive'
  | 'context-exfil'
  | 'tool-shadowing'
  | 'sensitive-path'
  | 'secret-shaped'
  | 'exfil-url'
  | 'encoded-payload'
  | 'oversized'
  | 'hidden-markup';

export interface Finding {
  code: FindingCode;
  severity: FindingSeverity;
  location: ScanLocation;
  message: string;
  /** The matched text, invisible characters shown as `\u{...}` escapes. */
  match: string;
  /** What an encoded or invisible payload says once decoded (tag characters, variation selectors, base64). */
  decoded?: string;
}

export interface ScanOptions {
  /** Tool names of the whole catalog: a description naming another server's tool is a shadowing sign. */
  knownTools?: readonly string[];
  /** Server names of the whole catalog, matched only in unambiguous forms (`the X server`, `mcp__X__`). */
  knownServers?: readonly string[];
}

export interface ScannableTool {
  server: string;
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
}

export type ScanVerdict = 'clean' | 'warn' | 'block';

export interface ToolScan {
  verdict: ScanVerdict;
  findings: Finding[];
}

/** Past this, a description is more likely a payload carrier than documentation (and costs context). */
export const OVERSIZED_CHARS = 4000;

// ---------------------------------------------------------------------------------------------------------
// Invisible characters

// Built from strings: the linter rightly objects to ZWJ and control characters in regex literals elsewhere, but
// matching exactly those characters is this module's job.
const re = (source: string, flags = 'gu'): RegExp => new RegExp(source, flags);
const TAG_RE = re(String.raw`[\u{E0000}-\u{E007F}]+`);
const VARIATION_RUN_RE = re(String.raw`[\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]{3,}`);
const ZERO_WIDTH_RE = re(
  String.raw`[\u200B\u200C\u200D\u2060-\u2064\u180E\uFEFF\u00AD\u034F\u115F\u1160\u3164\uFFA0]`,
);
const BIDI_STRONG_RE = re(String.raw`[\u202A-\u202E\u2066-\u2069]`);
const BIDI_MARK_RE = re(String.raw`[\u200E\u200F\u061C]`);
const ANSI_RE = re(String.raw`\u001B\[[0-9;?]*[A-Za-z]|\u001B\][^\u0007]*\u0007`);
const INVISIBLE_SOURCE = String.raw`[\u{E0000}-\u{E007F}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}\u200B\u200C\u200D\u2060-\u2064\u180E\uFEFF\u00AD\u034F\u115F\u1160\u3164\uFFA0\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]`;
const INVISIBLE_RE = re(INVISIBLE_SOURCE);
const SHOWN_RE = re(
  String.raw`[\u{E0000}-\u{E007F}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}\u200B-\u200F\u2060-\u2064\u180E\uFEFF\u00AD\u034F\u115F\u1160\u3164\uFFA0\u202A-\u202E\u2066-\u2069\u061C\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]`,
);

/** Shows what a reviewer cannot see: every invisible or control character becomes `\u{...}`. */
export function showInvisible(text: string): string {
  return text.replace(SHOWN_RE, (ch) => `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase()}}`);
}

/** Unicode tag characters mirror ASCII at U+E0000 + code: the "ASCII smuggling" channel. */
export function decodeTags(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xe0020 && cp <= 0xe007e) out += String.fromCharCode(cp - 0xe0000);
  }
  return out;
}

/** Variation selectors carry one byte each (FE00-FE0F: 0-15, E0100-E01EF: 16-255): "emoji smuggling". */
export function decodeVariationSelectors(text: string): string {
  const bytes: number[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xfe00 && cp <= 0xfe0f) bytes.push(cp - 0xfe00);
    else if (cp >= 0xe0100 && cp <= 0xe01ef) bytes.push(cp - 0xe0100 + 16);
  }
  return Buffer.from(bytes).toString('utf8');
}

// ---------------------------------------------------------------------------------------------------------
// Phrase rules: run on normalized text (invisible characters removed, NFKC, whitespace collapsed) so that
// `ig\u200Bnore previous instructions` or full-width letters do not slip past.

interface PhraseRule {
  code: FindingCode;
  severity: FindingSeverity;
  re: RegExp;
  message: string;
}

const MODEL =
  '(?:you|the (?:assistant|ai|model|llm|agent|ai assistant|language model)|assistant|claude|gpt|chatgpt)';
const USER = '(?:the |your )?(?:user|human|operator|developer|requester|person)s?';

const PHRASES: readonly PhraseRule[] = [
  // instruction-override: attempts to replace what the model was told
  {
    code: 'instruction-override',
    severity: 'high',
    re: /\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|former|original|system|safety|existing|other)?\s*(?:instructions?|directions|directives|rules|guidelines|guardrails|prompts?|system prompt|policies|constraints|restrictions)\b/i,
    message: 'tells the model to drop the instructions it was given',
  },
  {
    code: 'instruction-override',
    severity: 'high',
    re: /\b(?:forget|disregard)\s+(?:everything|all)\s+(?:you(?:'ve| have)?\s+(?:been told|learned|know)|above|before)\b/i,
    message: 'tells the model to forget what it was told',
  },
  {
    code: 'instruction-override',
    severity: 'high',
    re: /\b(?:your\s+new\s+(?:instructions?|task|role|goal)\s+(?:is|are)|new\s+(?:system\s+)?instructions?\s*:|from\s+now\s+on,?\s+(?:you|the assistant)|you\s+are\s+now\s+(?:a|an|in|no longer)\b)/i,
    message: 'tries to give the model a new role or new instructions',
  },
  {
    code: 'instruction-override',
    severity: 'high',
    re: /<\|(?:im_start|im_end|system|endoftext|start_header_id)\|>|\[\/?(?:INST|SYSTEM)\]|<\/?(?:system|sys)>|^\s*#{2,}\s*(?:system|assistant)\s*(?:message|prompt)?\s*:/im,
    message: 'imitates chat-template or system-message markup',
  },
  // model-directive: text that addresses the model rather than documenting the tool
  {
    code: 'model-directive',
    severity: 'high',
    re: /<\/?\s*(?:important|instructions?|secret|hidden|system[-_ ]?(?:note|instructions?)|admin|critical|note[-_ ]to[-_ ](?:ai|assistant|model))\s*>/i,
    message: 'a tag block that addresses the model (the classic tool-poisoning wrapper)',
  },
  {
    code: 'model-directive',
    severity: 'high',
    re: new RegExp(
      String.raw`\b(?:do\s+not|don't|dont|never|must\s+not|should\s+not|shouldn't|avoid|without)\s+(?:ever\s+)?(?:tell(?:ing)?|mention(?:ing)?|inform(?:ing)?|reveal(?:ing)?|notify(?:ing)?|alert(?:ing)?|show(?:ing)?|disclose|disclosing|explain(?:ing)?(?:\s+this)?\s+to|let(?:ting)?|mak(?:e|ing)\s+)\s*(?:this\s+|it\s+|anything\s+)?(?:to\s+|with\s+)?${USER}`,
      'i',
    ),
    message: 'asks the model to hide something from the user',
  },
  {
    code: 'model-directive',
    severity: 'high',
    re: new RegExp(
      String.raw`\b(?:secretly|covertly|surreptitiously|quietly\s+(?:send|include|add|read|call|forward|copy|upload)|silently\s+(?:send|include|add|read|call|forward|copy|upload|append|pass)|without\s+(?:the\s+)?${USER}\s*(?:'s)?\s*(?:knowing|knowledge|noticing|seeing|awareness|consent|approval|permission)|behind\s+(?:the\s+)?${USER}'?s?\s+back|(?:the\s+)?${USER}\s+(?:must|should|does|do|need)\s*(?:not|n't)\s+(?:know|see|notice|be\s+told|be\s+informed|find\s+out))`,
      'i',
    ),
    message: 'asks the model to act covertly',
  },
  {
    code: 'model-directive',
    severity: 'high',
    re: /\bbefore\s+(?:using|calling|invoking|running|executing)\s+(?:any|every|each|this|the|other)\s+(?:other\s+)?(?:tools?|functions?)\b[^.]{0,120}?\b(?:must|need\s+to|have\s+to|always|first|should)\b|\b(?:must|always)\s+(?:first\s+)?(?:call|use|invoke|run)\s+this\s+tool\s+(?:first|before)\b/i,
    message: 'sets a precondition on the model for tool use',
  },
  {
    code: 'model-directive',
    severity: 'high',
    re: /\b(?:otherwise|or else|if not,?)\s+(?:the\s+|this\s+)?(?:tool|function|system|server|request|operation)\s+(?:will|would)\s+(?:not\s+work|fail|crash|break|error|be\s+blocked)/i,
    message: 'threatens failure to coerce the model (a common poisoning trope)',
  },
  {
    code: 'model-directive',
    severity: 'medium',
    re: new RegExp(
      String.raw`\b${MODEL}\s+(?:must|should|shall|has\s+to|have\s+to|need\s+to|are\s+required\s+to|is\s+required\s+to)\s+(?:always|never|also|first|immediately|additionally)\b|\byou\s+must\s+always\b|\balways\s+(?:remember\s+to\s+)?(?:include|append|add|send|pass|attach|bcc|cc|forward|copy)\b`,
      'i',
    ),
    message: 'a standing order to the model',
  },
  {
    code: 'model-directive',
    severity: 'medium',
    re: /\b(?:this\s+is|it\s+is|it's)\s+(?:very|extremely|critically|absolutely|vitally)\s+(?:important|critical|crucial)\b|\b(?:after|once)\s+(?:the\s+user\s+has|you\s+have|this\s+tool\s+(?:is|has\s+been))\s+(?:been\s+)?(?:approved|trusted|installed|enabled)\b/i,
    message: 'urgency or approval-timed language aimed at the model',
  },
  {
    code: 'model-directive',
    severity: 'medium',
    re: /\b(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:the\s+)?(?:agent|assistant|ai|model|llm|claude|gpt)\b/i,
    message: 'a note addressed to the model',
  },
  // context-exfil: asking for the conversation, system prompt or environment to be put into arguments
  {
    code: 'context-exfil',
    severity: 'high',
    re: /\b(?:include|pass|put|provide|send|append|add|insert|copy|paste|attach|embed|forward|fill(?:\s+in)?|supply|place|summari[sz]e)\b[^.\n]{0,60}?\b(?:(?:full|entire|complete|whole|previous|prior|recent)\s+)*(?:conversation|chat\s+history|message\s+history|(?:last|previous|prior|recent|earlier)\s+(?:\w+\s+)?(?:user\s+)?messages|user'?s?\s+(?:last|previous|recent|prior)\s+messages|all\s+messages|system\s+prompt|system\s+message|your\s+instructions|the\s+instructions\s+you|context\s+window|user's\s+(?:messages|request|prompt|query)\s+verbatim|(?:all|every)\s+(?:other\s+)?tool\s+(?:results|outputs|descriptions)|environment\s+variables|env\s+vars|api[\s_-]?keys?\s+(?:from|in|of)\s+(?:the\s+)?(?:environment|env|config|conversation))/i,
    message: 'asks for conversation, system prompt, tool results or environment to be put into an argument',
  },
  // tool-shadowing: phrases that reach into other tools' behaviour
  {
    code: 'tool-shadowing',
    severity: 'high',
    re: /\b(?:when(?:ever)?|each\s+time|every\s+time|if)\s+(?:the\s+)?[`'"]?[\w.-]+[`'"]?\s+(?:tool|function)\s+(?:is|gets)\s+(?:called|used|invoked|run|executed)|\b(?:when(?:ever)?|each\s+time|every\s+time)\s+(?:you|the\s+(?:assistant|model|agent))\s+(?:call|use|invoke|run)s?\s+(?:the\s+)?[`'"]?[\w.-]+[`'"]?(?:\s+(?:tool|function))?/i,
    message: 'changes what the model does when another tool is used',
  },
  {
    code: 'tool-shadowing',
    severity: 'high',
    re: /\b(?:all|any|every|each)\s+other\s+(?:tools?|functions?|servers?)\b[^.\n]{0,80}?\b(?:must|should|need|always|first|instead)\b|\b(?:must|should|always)\b[^.\n]{0,60}?\b(?:all|any|every)\s+other\s+(?:tools?|servers?)\b|\b(?:after|before|with)\s+(?:each|every|any|all)\s+other\s+(?:tool|function)\s+calls?\b/i,
    message: 'sets rules for the other tools or servers in the session',
  },
  {
    code: 'tool-shadowing',
    severity: 'medium',
    re: /\binstead\s+of\s+(?:using|calling|invoking)\s+(?:the\s+)?[`'"]?[\w.-]+|\b(?:replaces|overrides|supersedes|takes\s+precedence\s+over|intercepts)\s+(?:the\s+)?(?:[`'"]?[\w.-]+[`'"]?\s+)?(?:tool|function|server|behaviou?r)\b|\b(?:bcc|cc|blind[\s-]copy)\s*(?::|to)?\s*[\w.+-]+@[\w-]+\.[\w.-]+/i,
    message: 'positions itself in place of another tool, or copies mail to a fixed address',
  },
  // exfil-url: asking for data to be sent somewhere
  {
    code: 'exfil-url',
    severity: 'high',
    re: /\b(?:send|upload|post|forward|transmit|exfiltrate|report|submit|email|mail|deliver|leak|sync|push|beacon)\b[^.\n]{0,80}?\b(?:to|at|via)\s+(?:the\s+(?:following\s+)?(?:url|endpoint|address|webhook|server)\s*:?\s*)?(?:<?https?:\/\/|[\w.+-]+@[\w-]+\.[a-z]{2,})/i,
    message: 'asks for data to be sent to a URL or address',
  },
];

// ---------------------------------------------------------------------------------------------------------
// Patterns with context

const URL_RE =
  /\b(?:https?|ftp|wss?):\/\/[^\s"'`)\]]+|\bdata:[\w/+.-]+(?:;[\w=-]+)*(?:;base64)?,[^\s"'<>`)]{8,}/gi;
const EXFIL_HOST_RE =
  /(?:^|[./@])(?:webhook\.site|requestbin\.\w+|pipedream\.net|m\.pipedream\.net|pastebin\.com|paste\.ee|hastebin\.com|ghostbin\.\w+|ngrok(?:-free)?\.(?:io|app|dev)|ngrok\.io|trycloudflare\.com|loca\.lt|localtunnel\.me|serveo\.net|burpcollaborator\.net|oastify\.com|interact\.sh|oast\.(?:pro|live|site|online|fun|me)|hookbin\.com|beeceptor\.com|requestcatcher\.com|transfer\.sh|file\.io|0x0\.st|discord(?:app)?\.com\/api\/webhooks|canarytokens\.com|dnslog\.cn|postb\.in|ptsv2\.com|ptsv3\.com)(?:[/:?#]|$)/i;
const URL_TEMPLATE_RE =
  /[?&][\w.-]+=(?:\{\{?[^}]*\}\}?|<[^>]+>|\$\{?[\w.]+\}?|%[A-Z_]+%|\[[A-Z_ ]+\])|\/(?:\{\{?[^}/]*\}\}?|<[^>/]+>|\$\{?[\w.]+\}?)/i;
const SENSITIVE_QUERY_RE =
  /[?&](?:data|d|q|payload|secret|key|token|creds?|credentials|password|pw|pass|content|file|ssh|env|conversation|history|msg|message|exfil|leak)=/i;

const SENSITIVE_PLACEHOLDER_RE =
  /(?:\{\{?|<|\$\{?)[\w. -]*(?:token|key|secret|password|passwd|credential|cookie|session|conversation|history|chat|message|summary|email|ssh|env|prompt|user)[\w. -]*(?:\}\}?|>|\}?)/i;
const SENSITIVE_PATH_RE =
  /(?:~|\$HOME|%USERPROFILE%|\/home\/[\w.-]+|\/Users\/[\w.-]+|\/root)?\/?\.ssh(?:\/[\w.-]*)?|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?\b|(?<![\w.$])\.env(?:\.[\w-]+)?\b|\.aws\/(?:credentials|config)|\/etc\/(?:passwd|shadow|sudoers|gshadow)\b|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|\.gitconfig\b|\.docker\/config\.json|\.kube\/config\b|\bkubeconfig\b|\.gnupg\b|\.pgpass\b|\.bash_history\b|\.zsh_history\b|\bwallet\.dat\b|\bssh\s+(?:private\s+)?keys?\b|\bprivate\s+(?:ssh\s+)?keys?\b|\b(?:seed|recovery|mnemonic)\s+phrases?\b|\bkeychain\b|\b(?:claude_desktop_config|mcp|mcp_settings|cline_mcp_settings)\.json\b|\.cursor\/mcp\.json|\.config\/gcloud\b|application_default_credentials\.json|\bcredentials\.json\b|\bservice[-_]account[\w-]*\.json\b|\bLogin Data\b|\bCookies\b(?=\s+(?:file|database|db|sqlite))|\b(?:AWS_SECRET_ACCESS_KEY|AWS_ACCESS_KEY_ID|OPENAI_API_KEY|ANTHROPIC_API_KEY|GITHUB_TOKEN|GH_TOKEN|NPM_TOKEN|SLACK_TOKEN|STRIPE_SECRET_KEY|DATABASE_URL)\b/gi;
// Reading a credential is a filesystem tool's job; moving one into an argument or off the machine never is.
const READ_VERB_RE =
  /\b(?:read|cat|open|load|contents?\s+of|value\s+of|dump|print|output|fetch|retrieve|collect|grab|extract|look\s+up)\b/i;
const MOVE_VERB_RE =
  /\b(?:include|including|pass|send|upload|post|attach|append|copy|paste|provide|forward|transmit|embed|put|insert|supply|add|report|share|leak)\b/i;
const NEGATION_RE = /\b(?:never|cannot|can't|not|won't|refuses?|blocked|denied|excluded|redacted|masked)\b/i;
const ENV_NAME_RE = /^[A-Z][A-Z0-9_]+$/;
const FILESYSTEM_TOOL_RE =
  /\b(?:files?|director(?:y|ies)|folders?|paths?|filesystem|fs|disk|dotfiles?|config(?:uration)?s?)\b|_file|file_|_dir|dir_/i;

// The key shapes are shared with the masker (util/secrets.ts): what the scanner reports is what logs mask.
const SECRET_RES: readonly { re: RegExp; severity: FindingSeverity; what: string }[] = [
  { re: PRIVATE_KEY_RE, severity: 'high', what: 'a private key block' },
  ...KEY_SHAPES.map(({ re, what }) => ({ re, severity: 'medium' as const, what })),
  { re: /\b[0-9a-f]{40,}\b/gi, severity: 'low', what: 'a long hex token' },
];
// A generic base64 run: only reported when it is not an ordinary word and mixes cases and digits.
const BASE64_RUN_RE = /(?<![\w+/=])[A-Za-z0-9+/_-]{32,}={0,2}(?![\w+/=])/g;

const HTML_COMMENT_RE = /<!--[\s\S]*?(?:-->|$)/g;
const WHITESPACE_RUN_RE = /(?:[ \t\u00A0\u2000-\u200A\u3000]{40,}|(?:[ \t]*\r?\n){8,})(?=\S)/g;
const HIDING_MARKUP_RE =
  /<[a-z]+[^>]*\bstyle\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|color\s*:\s*(?:white|#fff\b|#ffffff|transparent))[^>]*>|<details\b[^>]*>|\[\/\/\]:\s*#\s*\(/gi;

// ---------------------------------------------------------------------------------------------------------

const MAX_MATCH = 200;

function clip(text: string): string {
  const shown = showInvisible(text);
  return shown.length > MAX_MATCH ? `${shown.slice(0, MAX_MATCH)}…` : shown;
}

function normalize(text: string): string {
  return text
    .replace(ANSI_RE, '')
    .replace(INVISIBLE_RE, '')
    .normalize('NFKC')
    .replace(/[ \t]+/g, ' ');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Names too generic to mean "another tool" when they appear in prose (`search`, `echo`, `read`). */
function distinctiveName(name: string): boolean {
  return name.length >= 5 && (/[_-]/.test(name) || /[a-z][A-Z]/.test(name));
}

function printableShare(text: string): number {
  if (text.length === 0) return 0;
  let printable = 0;
  for (const ch of text) if (/[\x20-\x7E\n\t]/.test(ch)) printable++;
  return printable / text.length;
}

function tryBase64(run: string): string | undefined {
  const standard = run.replace(/-/g, '+').replace(/_/g, '/');
  try {
    const decoded = Buffer.from(standard, 'base64').toString('utf8');
    return decoded.length >= 16 && printableShare(decoded) > 0.95 && /[a-z]{3,}\s+[a-z]{2,}/i.test(decoded)
      ? decoded
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Scans one piece of untrusted text. Phrase rules also run over payloads decoded from invisible or encoded
 * carriers, so an instruction smuggled in tag characters is reported both as `unicode-tags` and for what it says.
 */
export function scanText(text: string, location: ScanLocation, options: ScanOptions = {}): Finding[] {
  const findings: Finding[] = [];
  const add = (
    code: FindingCode,
    severity: FindingSeverity,
    message: string,
    match: string,
    decoded?: string,
  ): void => {
    const finding: Finding = { code, severity, location, message, match: clip(match) };
    if (decoded !== undefined) finding.decoded = decoded;
    findings.push(finding);
  };

  // Invisible carriers first: what they hide is scanned as text too.
  const hidden: string[] = [];
  for (const m of text.matchAll(TAG_RE)) {
    const decoded = decodeTags(m[0]);
    add(
      'unicode-tags',
      'high',
      'invisible Unicode tag characters (they spell ASCII the user cannot see)',
      m[0],
      decoded,
    );
    if (decoded) hidden.push(decoded);
  }
  for (const m of text.matchAll(VARIATION_RUN_RE)) {
    const decoded = decodeVariationSelectors(m[0]);
    add(
      'variation-selectors',
      'high',
      'a run of variation selectors (bytes hidden behind a visible character)',
      m[0],
      decoded,
    );
    if (decoded) hidden.push(decoded);
  }
  const zeroWidth = [...text.matchAll(ZERO_WIDTH_RE)].filter((m) => {
    // A ZWJ or ZWNJ between emoji or within Indic/Arabic script is ordinary text shaping, not hiding.
    if (m[0] !== '\u200D' && m[0] !== '\u200C') return true;
    const around = text.slice(Math.max(0, m.index - 2), m.index + 3);
    return !/[\p{Extended_Pictographic}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Arabic}\p{Script=Malayalam}\p{Script=Tamil}\p{Script=Sinhala}]/u.test(
      around,
    );
  });
  if (zeroWidth.length > 0) {
    const first = zeroWidth[0]!.index;
    const last = zeroWidth[zeroWidth.length - 1]!.index;
    const span = text.slice(Math.max(0, first - 20), last + 21);
    // One stray BOM or soft hyphen is copy-paste residue; several, or any inside a word, is obfuscation.
    const insideWord = zeroWidth.some(
      (m) => /\w/.test(text[m.index - 1] ?? '') && /\w/.test(text[m.index + 1] ?? ''),
    );
    add(
      'zero-width',
      zeroWidth.length >= 3 || insideWord ? 'high' : 'medium',
      `${zeroWidth.length} zero-width or invisible filler character(s)`,
      span,
      normalize(span),
    );
  }
  const bidi = [...text.matchAll(BIDI_STRONG_RE)];
  if (bidi.length > 0) {
    const first = bidi[0]!.index;
    add(
      'bidi-control',
      'high',
      'bidirectional override/isolate controls (text displays in a different order than it reads)',
      text.slice(Math.max(0, first - 20), first + 60),
    );
  }
  const marks = [...text.matchAll(BIDI_MARK_RE)];
  if (
    marks.length > 0 &&
    !/[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}]/u.test(text)
  ) {
    add('bidi-control', 'low', 'directional marks in text without right-to-left script', marks[0]![0]);
  }
  const ansi = text.match(ANSI_RE);
  if (ansi)
    add(
      'hidden-markup',
      'medium',
      'terminal escape sequences (can hide or rewrite text when printed)',
      ansi[0],
    );

  const normalized = normalize(text);

  // Base64 that decodes to prose is an encoded instruction more often than data in a description.
  for (const m of normalized.matchAll(BASE64_RUN_RE)) {
    const run = m[0];
    const decoded = tryBase64(run);
    if (decoded) {
      add('encoded-payload', 'medium', 'base64 that decodes to readable text', run, decoded);
      hidden.push(decoded);
    } else if (/[a-z]/.test(run) && /[A-Z]/.test(run) && /\d/.test(run) && !/^[0-9a-f]+$/i.test(run)) {
      if (!SECRET_RES.some(({ re }) => new RegExp(re.source, re.flags.replace('g', '')).test(run)))
        add('secret-shaped', 'low', 'a long random-looking token', run);
    }
  }

  const texts: { body: string; hiddenPayload: boolean }[] = [
    { body: normalized, hiddenPayload: false },
    ...hidden.map((body) => ({ body: normalize(body), hiddenPayload: true })),
  ];
  for (const { body, hiddenPayload } of texts) {
    const suffix = hiddenPayload ? ' (inside a hidden payload)' : '';
    for (const rule of PHRASES) {
      const m = body.match(rule.re);
      if (m) add(rule.code, hiddenPayload ? 'high' : rule.severity, rule.message + suffix, m[0]);
    }
    scanPaths(body, location, hiddenPayload, add);
    scanUrls(body, hiddenPayload, add);
  }

  for (const { re, severity, what } of SECRET_RES) {
    for (const m of normalized.matchAll(re)) add('secret-shaped', severity, `looks like ${what}`, m[0]);
  }

  scanShadowing(normalized, location, options, add);

  if (text.length > OVERSIZED_CHARS)
    add(
      'oversized',
      'medium',
      `${text.length} characters (over ${OVERSIZED_CHARS}): room to bury instructions`,
      text.slice(0, 80),
    );

  for (const m of text.matchAll(HTML_COMMENT_RE))
    add('hidden-markup', 'medium', 'an HTML comment (hidden when rendered, read by the model)', m[0]);
  for (const m of text.matchAll(HIDING_MARKUP_RE))
    add('hidden-markup', 'medium', 'markup that hides text when rendered', m[0]);
  const ws = text.match(WHITESPACE_RUN_RE);
  if (ws) {
    const at = text.indexOf(ws[0]) + ws[0].length;
    add(
      'hidden-markup',
      'medium',
      'a long run of whitespace that pushes text out of view',
      text.slice(at, at + 80),
    );
  }

  return dedupe(findings);
}

type Add = (
  code: FindingCode,
  severity: FindingSeverity,
  message: string,
  match: string,
  decoded?: string,
) => void;

function scanPaths(body: string, location: ScanLocation, hiddenPayload: boolean, add: Add): void {
  const toolWords = `${location.server ?? ''} ${location.name ?? ''}`;
  const filesystemTool = FILESYSTEM_TOOL_RE.test(toolWords);
  for (const m of body.matchAll(SENSITIVE_PATH_RE)) {
    if (m[0] === '/' || m[0].length < 4) continue;
    // The sentence the path sits in: a verb there turns a mention into a request.
    const start = Math.max(body.lastIndexOf('. ', m.index - 1) + 1, m.index - 100, 0);
    const endDot = body.indexOf('. ', m.index + m[0].length);
    const end = Math.min(endDot < 0 ? body.length : endDot, m.index + m[0].length + 100);
    const sentence = body.slice(start, end);
    const near = body.slice(Math.max(start, m.index - 40), Math.min(end, m.index + m[0].length + 40));
    const negated = NEGATION_RE.test(near);
    const move = MOVE_VERB_RE.test(sentence) && !negated;
    const read = READ_VERB_RE.test(sentence) && !negated;
    // A variable name on its own is how a server documents its configuration.
    const variable = ENV_NAME_RE.test(m[0]);
    const severity: FindingSeverity =
      hiddenPayload || move || (read && !filesystemTool)
        ? 'high'
        : read || negated || filesystemTool || variable
          ? 'low'
          : 'medium';
    const verb = move || read;
    add(
      'sensitive-path',
      severity,
      verb && !negated
        ? 'asks to read or pass a credential file or variable'
        : 'mentions a credential file or variable',
      sentence.trim(),
    );
  }
}

function scanUrls(body: string, hiddenPayload: boolean, add: Add): void {
  for (const m of body.matchAll(URL_RE)) {
    // Trailing prose punctuation is not part of the URL; a `>` is, when it closes a `<placeholder>`.
    const url = m[0].replace(m[0].includes('<') ? /[.,;:!?]+$/ : /[.,;:!?>]+$/, '');
    if (/^data:/i.test(url)) {
      add(
        'exfil-url',
        hiddenPayload ? 'high' : 'medium',
        'a data: URL (inline content the user does not see)',
        url,
      );
    } else if (EXFIL_HOST_RE.test(url)) {
      add('exfil-url', 'high', 'a URL on a request-capture, paste or tunnel host', url);
    } else if (
      URL_TEMPLATE_RE.test(url) &&
      (SENSITIVE_QUERY_RE.test(url) || SENSITIVE_PLACEHOLDER_RE.test(url))
    ) {
      add('exfil-url', 'high', 'a URL template whose query carries data out', url);
    } else if (URL_TEMPLATE_RE.test(url)) {
      add('exfil-url', hiddenPayload ? 'high' : 'low', 'a URL with a template for the model to fill', url);
    }
  }
}

/** `knownTools` by bare name, with the servers each belongs to (undefined: unqualified); built once per list. */
const knownToolIndex = new WeakMap<readonly string[], Map<string, Set<string | undefined>>>();

function indexKnownTools(tools: readonly string[]): Map<string, Set<string | undefined>> {
  let index = knownToolIndex.get(tools);
  if (!index) {
    index = new Map();
    for (const tool of tools) {
      // `server__tool` or `mcp__server__tool` say which server a name belongs to: a sibling is not shadowing.
      const parts = tool.split('__').filter(Boolean);
      const bare = parts[parts.length - 1] ?? tool;
      if (!distinctiveName(bare)) continue;
      const servers = index.get(bare) ?? new Set<string | undefined>();
      servers.add(parts.length >= 2 ? parts[parts.length - 2] : undefined);
      index.set(bare, servers);
    }
    knownToolIndex.set(tools, index);
  }
  return index;
}

/** Each known server's pattern, compiled once per list (a catalog review scans thousands of texts with it). */
const serverPatternCache = new WeakMap<readonly string[], Array<{ server: string; pattern: RegExp }>>();

function serverPatterns(servers: readonly string[]): Array<{ server: string; pattern: RegExp }> {
  let patterns = serverPatternCache.get(servers);
  if (!patterns) {
    patterns = servers.map((server) => {
      const name = escapeRegExp(server);
      return {
        server,
        pattern: new RegExp(`mcp__${name}__|\\bthe\\s+[\`'"]?${name}[\`'"]?\\s+(?:mcp\\s+)?server\\b`, 'i'),
      };
    });
    serverPatternCache.set(servers, patterns);
  }
  return patterns;
}

function scanShadowing(body: string, location: ScanLocation, options: ScanOptions, add: Add): void {
  const own = location.name ?? '';
  // A name counts only as a whole run of word characters and dashes, so the body's runs are looked up in the
  // catalog's names: linear in the text, instead of one regular expression per known tool (a 5,000-tool
  // catalog made that 25 million compilations on a first review).
  const index = options.knownTools?.length ? indexKnownTools(options.knownTools) : undefined;
  const seen = new Set<string>();
  for (const [word] of index ? body.matchAll(/[\w-]+/g) : []) {
    if (seen.has(word) || word === own) continue;
    seen.add(word);
    const servers = index!.get(word);
    if (servers && [...servers].some((server) => server === undefined || server !== location.server))
      add('tool-shadowing', 'medium', `names another tool in the catalog (${word})`, word);
  }
  for (const { server, pattern } of serverPatterns(options.knownServers ?? [])) {
    if (server === location.server) continue;
    const m = body.match(pattern);
    if (m) add('tool-shadowing', 'medium', `names another server in the session (${server})`, m[0]);
  }
}

function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.code}\u0000${f.severity}\u0000${f.match}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Tools

/** Strings inside a JSON Schema that the model reads: poisoning often sits in a parameter's description. */
function schemaStrings(
  schema: unknown,
  path: string,
  out: { path: string; text: string }[],
  depth = 0,
): void {
  if (depth > 32 || schema === null || typeof schema !== 'object') return;
  if (Array.isArray(schema)) {
    for (const [i, item] of schema.entries()) schemaStrings(item, `${path}[${i}]`, out, depth + 1);
    return;
  }
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    const at = `${path}.${key}`;
    if (
      ['description', 'title', 'default', 'examples', 'enum', 'const', 'example', '$comment'].includes(key)
    ) {
      collectStrings(value, at, out, depth + 1);
    } else if (typeof value === 'object') {
      schemaStrings(value, at, out, depth + 1);
    }
  }
}

function collectStrings(
  value: unknown,
  path: string,
  out: { path: string; text: string }[],
  depth: number,
): void {
  if (depth > 32) return;
  if (typeof value === 'string') out.push({ path, text: value });
  else if (Array.isArray(value))
    for (const [i, v] of value.entries()) collectStrings(v, `${path}[${i}]`, out, depth + 1);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) collectStrings(v, `${path}.${k}`, out, depth + 1);
}

/** block: any high finding (the tool waits for approval); warn: any medium; low findings are informational. */
export function verdictOf(findings: readonly Finding[]): ScanVerdict {
  if (findings.some((f) => f.severity === 'high')) return 'block';
  if (findings.some((f) => f.severity === 'medium')) return 'warn';
  return 'clean';
}

export function scanTool(tool: ScannableTool, options: ScanOptions = {}): ToolScan {
  const base = { server: tool.server, name: tool.name };
  const findings: Finding[] = [];
  if (tool.description)
    findings.push(...scanText(tool.description, { kind: 'tool-description', ...base }, options));
  if (tool.title)
    findings.push(...scanText(tool.title, { kind: 'tool-description', ...base, field: 'title' }, options));
  // The tool's name itself can carry invisible characters that make two tools look alike.
  if (new RegExp(INVISIBLE_SOURCE, 'u').test(tool.name)) {
    findings.push(
      ...scanText(tool.name, { kind: 'tool-description', ...base, field: 'name' }).filter(
        (f) => f.code !== 'oversized',
      ),
    );
  }
  const strings: { path: string; text: string }[] = [];
  schemaStrings(tool.inputSchema, 'inputSchema', strings);
  let schemaChars = 0;
  for (const { path, text } of strings) {
    schemaChars += text.length;
    findings.push(...scanText(text, { kind: 'tool-schema', ...base, field: path }, options));
  }
  if (schemaChars > OVERSIZED_CHARS && !findings.some((f) => f.code === 'oversized'))
    findings.push({
      code: 'oversized',
      severity: 'medium',
      location: { kind: 'tool-schema', ...base, field: 'inputSchema' },
      message: `${schemaChars} characters of text inside the input schema`,
      match: clip(
        strings
          .map((s) => s.text)
          .join(' ')
          .slice(0, 80),
      ),
    });
  return { verdict: verdictOf(findings), findings };
}
