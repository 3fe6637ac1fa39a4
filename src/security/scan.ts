/**
 * The poisoning scanner: text that a third party wrote (tool, prompt and resource descriptions, server
 * instructions, skills, knowledge bodies) is checked for what tends to hide attacks on the model before any of it
 * reaches the model's context. Every check is a heuristic with its own stable code; codes and severities are
 * documented in docs/security.md, and test/fixtures/security/corpus.json measures recall and false positives.
 *
 * Calibration rule: `high` is reserved for text aimed at the model (directives, concealment, invisible payloads,
 * credential or context exfiltration), because a high finding blocks a tool until the user approves it. Plain
 * mentions of paths, URLs or other tools in honest documentation stay `medium` or `low`.
 *
 * Cost rule: the text comes from a server that may be hostile, and the scan runs before its definitions are
 * served, so every check is linear in the text and one definition is bounded (`scanBytes` characters of each
 * text, `MAX_SCHEMA_*` of its input schema). JavaScript's regular expressions backtrack: a pattern that can start
 * at every position of a long run and read to its end before failing is quadratic (`^\s*#` under the m flag
 * on a run of newlines, `\s*:?\s*` after a phrase, `<[^>]*` on a run of `<`). The patterns that could were
 * rewritten, each with a comment saying how: bounded quantifiers, a lookbehind that lets only the first position
 * of a run start, or a hand-written scan where no pattern can be linear (scan-linear.ts). Code around the patterns must not undo
 * it by searching the text again from every match. test/security/scan-linear.test.ts runs every family on 1 MB
 * of its worst case and counts the work (ScanWork); bench/scan.ts times them.
 */

import { pushAll } from '../util/arrays.js';
import { KEY_SHAPES, PRIVATE_KEY_RE, type ShapeMatch, shapeMatches } from '../util/secrets.js';
import {
  collectEvidence,
  EVIDENCE_FEATURES,
  type EvidenceFeature,
  FEATURE_WHY,
  indexKnownTools,
} from './evidence.js';
import {
  ansiSequences,
  chatMarkup,
  pushingWhitespace,
  ScanMeter,
  type ScanWork,
  sentenceEnd,
  sentenceStart,
  serverMentions,
  trimEnd,
  urlTemplate,
  zeroWidthFillers,
} from './scan-linear.js';
import { SCAN_MODEL } from './scan-model.js';
import { clip, INVISIBLE_SOURCE, normalize, showInvisible } from './scan-normalize.js';
import { MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, MAX_SCHEMA_TEXTS, schemaTexts } from './schema-texts.js';
import { type Contribution, featureKey, isDecisive, type ScanModel, severityFor, weigh } from './verdict.js';

export type { ScanWork } from './scan-linear.js';
export { showInvisible };

/** How much a finding weighs toward blocking a definition. */
export type FindingSeverity = 'high' | 'medium' | 'low';

export type ScanLocationKind =
  | 'tool-description'
  | 'tool-schema'
  | 'prompt'
  | 'resource'
  | 'instructions'
  | 'skill'
  | 'knowledge'
  | 'server';

/** Where a scanned text comes from: the kind of definition, its server and name, the field. */
export interface ScanLocation {
  kind: ScanLocationKind;
  server?: string;
  name?: string;
  /** Where inside the definition: `title`, or a JSON path into the input schema (`inputSchema.properties.x.description`). */
  field?: string;
}

/** The cue scanner's codes (scanText), in the order docs/security.md lists them. */
export const CUE_CODES = [
  'unicode-tags',
  'variation-selectors',
  'zero-width',
  'bidi-control',
  'instruction-override',
  'model-directive',
  'context-exfil',
  'tool-shadowing',
  'sensitive-path',
  'secret-shaped',
  'exfil-url',
  'encoded-payload',
  'oversized',
  'hidden-markup',
] as const;

/** Catalog checks (catalog.ts): what one definition does to the others of its session. */
export const CATALOG_CODES = ['catalog-overlap', 'catalog-competing-claim'] as const;
export type CatalogCode = (typeof CATALOG_CODES)[number];

/** The optional LLM judge's verdict on a definition the score left in doubt (judge.ts). */
export const JUDGE_CODE = 'llm-judge';

/** What a server runs rather than what it says (package-pins.ts): a package runner without a fixed version. */
export const PACKAGE_CODE = 'unpinned-package';

/** The cue scanner's codes, then the evidence features (evidence.ts), the catalog checks, the judge, the package. */
export const FINDING_CODES = [
  ...CUE_CODES,
  ...EVIDENCE_FEATURES,
  ...CATALOG_CODES,
  JUDGE_CODE,
  PACKAGE_CODE,
] as const;

export type CueCode = (typeof CUE_CODES)[number];
export type FindingCode = CueCode | EvidenceFeature | CatalogCode | typeof JUDGE_CODE | typeof PACKAGE_CODE;

/** One thing the scan found in a definition: its code, severity, where and the matched text. */
export interface Finding {
  code: FindingCode;
  severity: FindingSeverity;
  location: ScanLocation;
  message: string;
  /** The matched text, invisible characters shown as `\u{...}` escapes. */
  match: string;
  /** What an encoded or invisible payload says once decoded (tag characters, variation selectors, base64). */
  decoded?: string;
  /** What the finding adds to the definition's score (scanTool; verdict.ts), when it adds anything. */
  weight?: number;
  /** Evidence found in the same field (scanTool): each feature with the words that raised it and its weight. */
  evidence?: FindingEvidence[];
}

export interface FindingEvidence {
  feature: EvidenceFeature;
  match: string;
  /** Why the feature matters (evidence.ts FEATURE_WHY). */
  why: string;
  weight: number;
}

/** A catalog check's finding for one definition (catalog.ts), weighed with the definition's own evidence. */
export interface CatalogSignal {
  code: CatalogCode;
  /** Where in the definition (`description`, `name`). */
  field: string;
  message: string;
  match: string;
}

export interface ScanOptions {
  /** Tool names of the whole catalog: a description naming another server's tool is a shadowing sign. */
  knownTools?: readonly string[];
  /** Server names of the whole catalog, matched only in unambiguous forms (`the X server`, `mcp__X__`). */
  knownServers?: readonly string[];
  /**
   * Characters of a text that are scanned (default `DEFAULT_SCAN_BYTES`, tack.json `limits.scanBytes`); a longer
   * text gets a high `oversized` finding saying how much was not read. In scanTool, of all the definition's texts
   * together.
   */
  scanBytes?: number;
  /** Counted into when given: the work the scan did, for tests and benchmarks (see ScanWork). */
  work?: ScanWork;
  /** What the catalog checks (catalog.ts) found for this definition: weighed with its own evidence (scanTool). */
  catalogSignals?: readonly CatalogSignal[];
  /** The model that weighs the evidence (default: the shipped one, scan-model.ts); benchmarks pass their own. */
  model?: ScanModel;
}

/** A tool definition as a server offers it, for `scanTool`. */
export interface ScannableTool {
  server: string;
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  /** A prompt's arguments (`[{name, description, required}]`), read like an input schema's parameters. */
  arguments?: unknown;
}

/** The scan's verdict on a definition: clean, warn (shown) or block (held back). */
export type ScanVerdict = 'clean' | 'warn' | 'block';

/** The scan of one definition: the verdict, the findings and the score they add up to. */
export interface ToolScan {
  verdict: ScanVerdict;
  findings: Finding[];
  /** The model's score (log-odds: bias plus every contribution; verdict.ts). */
  score: number;
  /** The features that added to the score, the heaviest first. */
  contributions: Contribution[];
  /** In the band below `block` that an LLM judge may look at (`scan.judge`); never for a decisive finding. */
  grey: boolean;
  /** Every feature the definition shows (weighed or not), and whether a decisive finding holds it. */
  features: string[];
  decisive: boolean;
}

/** Past this, a description is more likely a payload carrier than documentation (and costs context). */
export const OVERSIZED_CHARS = 4000;

/**
 * Characters of one text that are scanned unless `ScanOptions.scanBytes` says otherwise: the default of tack.json
 * `limits.scanBytes` (config/limits.ts; the security layer does not import config, a test holds the two equal).
 */
export const DEFAULT_SCAN_BYTES = 64 * 1024;

/**
 * Findings kept per code and severity in one text (the first ones, in order; severity is part of the key, so a
 * graver finding is never crowded out): 20,000 mentions of `.ssh` make 20 findings, not 20,000.
 */
const MAX_FINDINGS_PER_KIND = 20;

/**
 * Credential paths whose sentence is examined in one text. Each costs a few passes over its sentence, so a text
 * that is nothing but `.env.env...` cost 30 ms in 64 KB; past this many (no honest text comes near) the rest are
 * not examined and the text gets a high `oversized` finding, so that padding cannot hide a request among them.
 */
const MAX_PATH_MATCHES = 1000;

/** Hidden payloads (tag runs, base64) scanned one by one; the rest are scanned as one text. */
const MAX_HIDDEN_TEXTS = 16;

// ---------------------------------------------------------------------------------------------------------
// Invisible characters

// Built from strings: the linter rightly objects to ZWJ and control characters in regex literals elsewhere, but
// matching exactly those characters is this module's job.
const re = (source: string, flags = 'gu'): RegExp => new RegExp(source, flags);
const TAG_RE = re(String.raw`[\u{E0000}-\u{E007F}]+`);
const VARIATION_RUN_RE = re(String.raw`[\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]{3,}`);
const BIDI_STRONG_RE = re(String.raw`[\u202A-\u202E\u2066-\u2069]`, 'u');
const BIDI_MARK_RE = re(String.raw`[\u200E\u200F\u061C]`, 'u');

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
  /** Either a pattern (its first match is the finding) or, where no pattern can be linear, a hand-written search. */
  re?: RegExp;
  find?: (body: string, meter: ScanMeter) => string | undefined;
  message: string;
  /**
   * The rule finds only that the text speaks to the model. Server instructions and skills are written for the model
   * (MODEL_ADDRESSED), so there the form of address is no evidence; what the text asks for still is.
   */
  addressOnly?: true;
}

/** Texts written for the model by design: rules that only find the model addressed (`addressOnly`) skip them. */
export const MODEL_ADDRESSED: ReadonlySet<ScanLocationKind> = new Set(['instructions', 'skill']);

const MODEL =
  '(?:you|the (?:assistant|ai|model|llm|agent|ai assistant|language model)|assistant|claude|gpt|chatgpt)';
const USER = '(?:the |your )?(?:user|human|operator|developer|requester|person)s?';

const PHRASES: readonly PhraseRule[] = [
  // instruction-override: attempts to replace what the model was told
  {
    code: 'instruction-override',
    severity: 'high',
    // `\s+(...)?\s*` was two whitespace runs side by side when the optional word is absent: every split of a run
    // of newlines was tried. The optional word now carries its own whitespace (the same matches).
    re: /\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:(?:previous|prior|above|earlier|preceding|former|original|system|safety|existing|other)\s*)?(?:instructions?|directions|directives|rules|guidelines|guardrails|prompts?|system prompt|policies|constraints|restrictions)\b/i,
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
    find: chatMarkup,
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
      // `make\s+` then `\s*`: two runs side by side; `make\s` then `\s*` matches the same.
      String.raw`\b(?:do\s+not|don't|dont|never|must\s+not|should\s+not|shouldn't|avoid|without)\s+(?:ever\s+)?(?:tell(?:ing)?|mention(?:ing)?|inform(?:ing)?|reveal(?:ing)?|notify(?:ing)?|alert(?:ing)?|show(?:ing)?|disclose|disclosing|explain(?:ing)?(?:\s+this)?\s+to|let(?:ting)?|mak(?:e|ing)\s)\s*(?:this\s+|it\s+|anything\s+)?(?:to\s+|with\s+)?${USER}`,
      'i',
    ),
    message: 'asks the model to hide something from the user',
  },
  {
    code: 'model-directive',
    severity: 'high',
    re: new RegExp(
      // `\s*(?:'s)?\s*` was two runs side by side without the `'s`; the `'s` now carries its own.
      String.raw`\b(?:secretly|covertly|surreptitiously|quietly\s+(?:send|include|add|read|call|forward|copy|upload)|silently\s+(?:send|include|add|read|call|forward|copy|upload|append|pass)|without\s+(?:the\s+)?${USER}\s*(?:'s\s*)?(?:knowing|knowledge|noticing|seeing|awareness|consent|approval|permission)|behind\s+(?:the\s+)?${USER}'?s?\s+back|(?:the\s+)?${USER}\s+(?:must|should|does|do|need)\s*(?:not|n't)\s+(?:know|see|notice|be\s+told|be\s+informed|find\s+out))`,
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
    addressOnly: true,
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
    addressOnly: true,
  },
  // context-exfil: asking for the conversation, system prompt or environment to be put into arguments
  {
    code: 'context-exfil',
    severity: 'high',
    // The adjectives are bounded: unbounded, each of the 60 positions the gap may end at read a long run of them
    // to its end, for every verb before it.
    re: /\b(?:include|pass|put|provide|send|append|add|insert|copy|paste|attach|embed|forward|fill(?:\s+in)?|supply|place|summari[sz]e)\b[^.\n]{0,60}?\b(?:(?:full|entire|complete|whole|previous|prior|recent)\s+){0,8}(?:conversation|chat\s+history|message\s+history|(?:last|previous|prior|recent|earlier)\s+(?:\w+\s+)?(?:user\s+)?messages|user'?s?\s+(?:last|previous|recent|prior)\s+messages|all\s+messages|system\s+prompt|system\s+message|your\s+instructions|the\s+instructions\s+you|context\s+window|user's\s+(?:messages|request|prompt|query)\s+verbatim|(?:all|every)\s+(?:other\s+)?tool\s+(?:results|outputs|descriptions)|environment\s+variables|env\s+vars|api[\s_-]?keys?\s+(?:from|in|of)\s+(?:the\s+)?(?:environment|env|config|conversation))/i,
    message: 'asks for conversation, system prompt, tool results or environment to be put into an argument',
  },
  // tool-shadowing: phrases that reach into other tools' behaviour
  {
    code: 'tool-shadowing',
    severity: 'high',
    // "When this tool is called" is the tool speaking of itself, not of another.
    re: /\b(?:when(?:ever)?|each\s+time|every\s+time|if)\s+(?:the\s+)?(?!(?:this|that|it)\s)[`'"]?[\w.-]+[`'"]?\s+(?:tool|function)\s+(?:is|gets)\s+(?:called|used|invoked|run|executed)|\b(?:when(?:ever)?|each\s+time|every\s+time)\s+(?:you|the\s+(?:assistant|model|agent))\s+(?:call|use|invoke|run)s?\s+(?:the\s+)?[`'"]?[\w.-]+[`'"]?(?:\s+(?:tool|function))?/i,
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
    re: /\binstead\s+of\s+(?:using|calling|invoking)\s+(?:the\s+)?[`'"]?[\w.-]+|\b(?:replaces|overrides|supersedes|takes\s+precedence\s+over|intercepts)\s+(?:the\s+)?(?:[`'"]?[\w.-]+[`'"]?\s+)?(?:tool|function|server|behaviou?r)\b|\b(?:bcc|cc|blind[\s-]copy)\s*(?:(?::|to)\s*)?[\w.+-]{1,64}@[\w-]{1,63}\.[\w.-]+/i,
    // An address's local part is at most 64 characters and a domain label 63 (RFC 5321, 1035): unbounded, every
    // `cc` in `cc.cc.cc...` read the whole run looking for an `@`. `\s*(?::|to)?\s*` was two runs side by side.
    message: 'positions itself in place of another tool, or copies mail to a fixed address',
  },
  // exfil-url: asking for data to be sent somewhere
  {
    code: 'exfil-url',
    severity: 'high',
    // As above: `\s*(?::\s*)?` instead of two runs side by side, and an address's parts bounded.
    re: /\b(?:send|upload|post|forward|transmit|exfiltrate|report|submit|email|mail|deliver|leak|sync|push|beacon)\b[^.\n]{0,80}?\b(?:to|at|via)\s+(?:the\s+(?:following\s+)?(?:url|endpoint|address|webhook|server)\s*(?::\s*)?)?(?:<?https?:\/\/|[\w.+-]{1,64}@[\w-]{1,63}\.[a-z]{2,})/i,
    message: 'asks for data to be sent to a URL or address',
  },
];

// ---------------------------------------------------------------------------------------------------------
// Patterns with context

const URL_RE =
  /\b(?:https?|ftp|wss?):\/\/[^\s"'`)\]]+|\bdata:[\w/+.-]+(?:;[\w=-]+)*(?:;base64)?,[^\s"'<>`)]{8,}/gi;
const EXFIL_HOST_RE =
  /(?:^|[./@])(?:webhook\.site|requestbin\.\w+|pipedream\.net|m\.pipedream\.net|pastebin\.com|paste\.ee|hastebin\.com|ghostbin\.\w+|ngrok(?:-free)?\.(?:io|app|dev)|ngrok\.io|trycloudflare\.com|loca\.lt|localtunnel\.me|serveo\.net|burpcollaborator\.net|oastify\.com|interact\.sh|oast\.(?:pro|live|site|online|fun|me)|hookbin\.com|beeceptor\.com|requestcatcher\.com|transfer\.sh|file\.io|0x0\.st|discord(?:app)?\.com\/api\/webhooks|canarytokens\.com|dnslog\.cn|postb\.in|ptsv2\.com|ptsv3\.com)(?:[/:?#]|$)/i;
const SENSITIVE_QUERY_RE =
  /[?&](?:data|d|q|payload|secret|key|token|creds?|credentials|password|pw|pass|content|file|ssh|env|conversation|history|msg|message|exfil|leak)=/i;

const SENSITIVE_PLACEHOLDER_RE =
  /(?:\{\{?|<|\$\{?)[\w. -]*(?:token|key|secret|password|passwd|credential|cookie|session|conversation|history|chat|message|summary|email|ssh|env|prompt|user)[\w. -]*(?:\}\}?|>|\}?)/i;
// `service[-_]account[\w-]{0,200}\.json`: unbounded, every `service-account` of `service-account-service-account-...`
// read the whole run looking for `.json`. No key file name is that long.
const SENSITIVE_PATH_RE =
  /(?:~|\$HOME|%USERPROFILE%|\/home\/[\w.-]+|\/Users\/[\w.-]+|\/root)?\/?\.ssh(?:\/[\w.-]*)?|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?\b|(?<![\w.$])\.env(?:\.[\w-]+)?\b|\.aws\/(?:credentials|config)|\/etc\/(?:passwd|shadow|sudoers|gshadow)\b|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|\.gitconfig\b|\.docker\/config\.json|\.kube\/config\b|\bkubeconfig\b|\.gnupg\b|\.pgpass\b|\.bash_history\b|\.zsh_history\b|\bwallet\.dat\b|\bssh\s+(?:private\s+)?keys?\b|\bprivate\s+(?:ssh\s+)?keys?\b|\b(?:seed|recovery|mnemonic)\s+phrases?\b|\bkeychain\b|\b(?:claude_desktop_config|mcp|mcp_settings|cline_mcp_settings)\.json\b|\.cursor\/mcp\.json|\.config\/gcloud\b|application_default_credentials\.json|\bcredentials\.json\b|\bservice[-_]account[\w-]{0,200}\.json\b|\bLogin Data\b|\bCookies\b(?=\s+(?:file|database|db|sqlite))|\b(?:AWS_SECRET_ACCESS_KEY|AWS_ACCESS_KEY_ID|OPENAI_API_KEY|ANTHROPIC_API_KEY|GITHUB_TOKEN|GH_TOKEN|NPM_TOKEN|SLACK_TOKEN|STRIPE_SECRET_KEY|DATABASE_URL)\b/gi;
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
// shapeMatches finds each shape's matches in linear time (the JWT pattern alone would not be).
const SECRET_RES: readonly {
  find: (text: string) => ShapeMatch[];
  severity: FindingSeverity;
  what: string;
}[] = [
  {
    find: (text) => shapeMatches({ re: PRIVATE_KEY_RE }, text),
    severity: 'high',
    what: 'a private key block',
  },
  ...KEY_SHAPES.map((shape) => ({
    find: (text: string) => shapeMatches(shape, text),
    severity: 'medium' as const,
    what: shape.what,
  })),
  {
    find: (text) => shapeMatches({ re: /\b[0-9a-f]{40,}\b/gi }, text),
    severity: 'low',
    what: 'a long hex token',
  },
];
// A generic base64 run: only reported when it is not an ordinary word and mixes cases and digits. (Linear: a run
// can only start after a `-` inside another, and such a start fails only within 32 characters of the run's end.)
const BASE64_RUN_RE = /(?<![\w+/=])[A-Za-z0-9+/_-]{32,}={0,2}(?![\w+/=])/g;
// Prose once decoded: two words. The lookbehind lets only the first letter of a run start (the same runs match):
// without it every letter of a long run read to the run's end.
const DECODED_PROSE_RE = /(?<![a-z])[a-z]{3,}\s+[a-z]{2,}/i;

// Always matches once it starts (`$` ends an unclosed comment), so the scan goes on after the match: linear.
const HTML_COMMENT_RE = /<!--[\s\S]*?(?:-->|$)/g;
/**
 * Markup that hides text. Every match but the markdown comment ends at a `>`, so only the text up to the last `>`
 * is searched with this pattern (after it, `<details[^>]*>` read to the end from every `<details`), and the
 * rest with MARKDOWN_COMMENT_RE. A styled tag is searched up to the next tag opening (`(?:[^<>]|<(?![a-z]))*`
 * instead of `[^>]*`): from every `<a` of `<a <a <a ... >` the old pattern read to the `>`. A tag inside a tag
 * before the style (`<p <span style=...>`) now matches from the inner one.
 */
const HIDING_MARKUP_RE =
  /<[a-z](?:[^<>]|<(?![a-z]))*\bstyle\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|color\s*:\s*(?:white|#fff\b|#ffffff|transparent))[^>]*>|<details\b[^>]*>|\[\/\/\]:\s*#\s*\(/gi;
const MARKDOWN_COMMENT_RE = /\[\/\/\]:\s*#\s*\(/gi;

// ---------------------------------------------------------------------------------------------------------

function printableShare(text: string): number {
  if (text.length === 0) return 0;
  let printable = 0;
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if ((code >= 0x20 && code <= 0x7e) || code === 0x0a || code === 0x09) printable++;
  }
  return printable / text.length;
}

function tryBase64(run: string, meter: ScanMeter): string | undefined {
  const standard = run.replace(/-/g, '+').replace(/_/g, '/');
  try {
    const decoded = meter.read(Buffer.from(standard, 'base64').toString('utf8'));
    return decoded.length >= 16 && printableShare(decoded) > 0.95 && DECODED_PROSE_RE.test(decoded)
      ? decoded
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Scans one piece of untrusted text. Phrase rules also run over payloads decoded from invisible or encoded
 * carriers, so an instruction smuggled in tag characters is reported both as `unicode-tags` and for what it says.
 * Only the first `options.scanBytes` characters are read (see ScanOptions).
 */
export function scanText(whole: string, location: ScanLocation, options: ScanOptions = {}): Finding[] {
  const limit = Math.max(0, options.scanBytes ?? DEFAULT_SCAN_BYTES);
  const text = whole.length > limit ? whole.slice(0, limit) : whole;
  const meter = new ScanMeter(options.work);
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const kept = new Map<string, number>();
  const add = (
    code: FindingCode,
    severity: FindingSeverity,
    message: string,
    match: string,
    decoded?: string,
  ): void => {
    const kind = `${code}\u0000${severity}`;
    const count = kept.get(kind) ?? 0;
    if (count >= MAX_FINDINGS_PER_KIND) return;
    const finding: Finding = { code, severity, location, message, match: clip(match) };
    const key = `${kind}\u0000${finding.match}`;
    if (seen.has(key)) return;
    seen.add(key);
    kept.set(kind, count + 1);
    if (decoded !== undefined) finding.decoded = decoded;
    findings.push(finding);
  };

  // Invisible carriers first: what they hide is scanned as text too.
  const hidden: string[] = [];
  for (const m of meter.read(text).matchAll(TAG_RE)) {
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
  for (const m of meter.read(text).matchAll(VARIATION_RUN_RE)) {
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
  const zeroWidth = zeroWidthFillers(meter.read(text));
  if (zeroWidth.count > 0) {
    const span = text.slice(Math.max(0, zeroWidth.first - 20), zeroWidth.last + 21);
    // One stray BOM or soft hyphen is copy-paste residue; several, or any inside a word, is obfuscation.
    add(
      'zero-width',
      zeroWidth.count >= 3 || zeroWidth.insideWord ? 'high' : 'medium',
      `${zeroWidth.count} zero-width or invisible filler character(s)`,
      span,
      normalize(meter.read(span), 2 * span.length + 4096),
    );
  }
  const bidi = BIDI_STRONG_RE.exec(meter.read(text));
  if (bidi) {
    const first = bidi.index;
    add(
      'bidi-control',
      'high',
      'bidirectional override/isolate controls (text displays in a different order than it reads)',
      text.slice(Math.max(0, first - 20), first + 60),
    );
  }
  const mark = BIDI_MARK_RE.exec(meter.read(text));
  if (
    mark &&
    !/[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}]/u.test(meter.read(text))
  ) {
    add('bidi-control', 'low', 'directional marks in text without right-to-left script', mark[0]);
  }
  const ansi = text.includes('\u001B') ? ansiSequences(meter.read(text))[0] : undefined;
  if (ansi)
    add(
      'hidden-markup',
      'medium',
      'terminal escape sequences (can hide or rewrite text when printed)',
      text.slice(ansi.start, ansi.end),
    );

  // Past twice the text's length (and 4,096 more, for a short text) once normalized, the rest is not read: no
  // honest text expands so.
  let expanded = 0;
  const expansion = 2 * text.length + 4096;
  const bounded = (body: string): string =>
    normalize(meter.read(body), expansion, (length) => {
      expanded = Math.max(expanded, length);
    });
  const normalized = bounded(text);

  // Base64 that decodes to prose is an encoded instruction more often than data in a description.
  for (const m of meter.read(normalized).matchAll(BASE64_RUN_RE)) {
    const run = m[0];
    const decoded = tryBase64(run, meter);
    if (decoded) {
      add('encoded-payload', 'medium', 'base64 that decodes to readable text', run, decoded);
      hidden.push(decoded);
    } else if (/[a-z]/.test(run) && /[A-Z]/.test(run) && /\d/.test(run) && !/^[0-9a-f]+$/i.test(run)) {
      if (!SECRET_RES.some(({ find }) => find(meter.read(run)).length > 0))
        add('secret-shaped', 'low', 'a long random-looking token', run);
    }
  }

  // Payloads past the first few are read as one text: thousands of tiny tag runs must not cost a pass each.
  const payloads =
    hidden.length > MAX_HIDDEN_TEXTS
      ? [...hidden.slice(0, MAX_HIDDEN_TEXTS - 1), hidden.slice(MAX_HIDDEN_TEXTS - 1).join('\n')]
      : hidden;
  const texts: { body: string; hiddenPayload: boolean }[] = [
    { body: normalized, hiddenPayload: false },
    ...payloads.map((body) => ({ body: bounded(body), hiddenPayload: true })),
  ];
  for (const { body, hiddenPayload } of texts) {
    const suffix = hiddenPayload ? ' (inside a hidden payload)' : '';
    for (const rule of PHRASES) {
      if (rule.addressOnly && MODEL_ADDRESSED.has(location.kind)) continue;
      const match = rule.find ? rule.find(body, meter) : meter.read(body).match(rule.re!)?.[0];
      if (match !== undefined)
        add(rule.code, hiddenPayload ? 'high' : rule.severity, rule.message + suffix, match);
    }
    scanPaths(body, location, hiddenPayload, add, meter);
    scanUrls(body, hiddenPayload, add, meter);
  }

  for (const { find, severity, what } of SECRET_RES) {
    for (const m of find(meter.read(normalized)))
      add('secret-shaped', severity, `looks like ${what}`, m.text);
  }

  scanShadowing(normalized, location, options, add, meter);

  if (whole.length > limit)
    add(
      'oversized',
      'high',
      `${whole.length} characters, more than the scanner reads: the first ${limit} were scanned, the last ${whole.length - limit} were not`,
      text.slice(0, 80),
    );
  else if (text.length > OVERSIZED_CHARS)
    add(
      'oversized',
      'medium',
      `${text.length} characters (over ${OVERSIZED_CHARS}): room to bury instructions`,
      text.slice(0, 80),
    );
  if (expanded > 0)
    add(
      'oversized',
      'high',
      `${expanded} characters once normalized (NFKC): only the first ${expansion} were scanned`,
      text.slice(0, 80),
    );

  for (const m of meter.read(text).matchAll(HTML_COMMENT_RE))
    add('hidden-markup', 'medium', 'an HTML comment (hidden when rendered, read by the model)', m[0]);
  const lastTag = text.lastIndexOf('>') + 1;
  for (const m of meter.read(text.slice(0, lastTag)).matchAll(HIDING_MARKUP_RE))
    add('hidden-markup', 'medium', 'markup that hides text when rendered', m[0]);
  for (const m of meter.read(text.slice(lastTag)).matchAll(MARKDOWN_COMMENT_RE))
    add('hidden-markup', 'medium', 'markup that hides text when rendered', m[0]);
  const ws = pushingWhitespace(text, meter);
  if (ws !== undefined) {
    const at = meter.read(text).indexOf(ws) + ws.length;
    add(
      'hidden-markup',
      'medium',
      'a long run of whitespace that pushes text out of view',
      text.slice(at, at + 80),
    );
  }

  return findings;
}

type Add = (
  code: FindingCode,
  severity: FindingSeverity,
  message: string,
  match: string,
  decoded?: string,
) => void;

function scanPaths(
  body: string,
  location: ScanLocation,
  hiddenPayload: boolean,
  add: Add,
  meter: ScanMeter,
): void {
  const toolWords = `${location.server ?? ''} ${location.name ?? ''}`;
  const filesystemTool = FILESYSTEM_TOOL_RE.test(toolWords);
  let examined = 0;
  for (const m of meter.read(body).matchAll(SENSITIVE_PATH_RE)) {
    if (m[0] === '/' || m[0].length < 4) continue;
    if (++examined > MAX_PATH_MATCHES) {
      add(
        'oversized',
        'high',
        `more than ${MAX_PATH_MATCHES} mentions of credential files or variables: the rest were not examined`,
        m[0],
      );
      break;
    }
    // The sentence the path sits in: a verb there turns a mention into a request.
    const start = sentenceStart(body, m.index);
    const end = sentenceEnd(body, m.index + m[0].length);
    const sentence = body.slice(start, end);
    const near = body.slice(Math.max(start, m.index - 40), Math.min(end, m.index + m[0].length + 40));
    const negated = NEGATION_RE.test(meter.read(near));
    const move = MOVE_VERB_RE.test(meter.read(sentence)) && !negated;
    const read = READ_VERB_RE.test(meter.read(sentence)) && !negated;
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

function scanUrls(body: string, hiddenPayload: boolean, add: Add, meter: ScanMeter): void {
  for (const m of meter.read(body).matchAll(URL_RE)) {
    // Trailing prose punctuation is not part of the URL; a `>` is, when it closes a `<placeholder>`.
    const url = trimEnd(m[0], m[0].includes('<') ? '.,;:!?' : '.,;:!?>');
    meter.read(url);
    if (/^data:/i.test(url)) {
      add(
        'exfil-url',
        hiddenPayload ? 'high' : 'medium',
        'a data: URL (inline content the user does not see)',
        url,
      );
    } else if (EXFIL_HOST_RE.test(url)) {
      add('exfil-url', 'high', 'a URL on a request-capture, paste or tunnel host', url);
    } else if (urlTemplate(url)) {
      if (SENSITIVE_QUERY_RE.test(url) || SENSITIVE_PLACEHOLDER_RE.test(url))
        add('exfil-url', 'high', 'a URL template whose query carries data out', url);
      else
        add('exfil-url', hiddenPayload ? 'high' : 'low', 'a URL with a template for the model to fill', url);
    }
  }
}

function scanShadowing(
  body: string,
  location: ScanLocation,
  options: ScanOptions,
  add: Add,
  meter: ScanMeter,
): void {
  const own = location.name ?? '';
  // A name counts only as a whole run of word characters and dashes, so the body's runs are looked up in the
  // catalog's names: linear in the text, instead of one regular expression per known tool (a 5,000-tool
  // catalog made that 25 million compilations on a first review).
  const index = options.knownTools?.length ? indexKnownTools(options.knownTools) : undefined;
  const seen = new Set<string>();
  for (const [word] of index ? meter.read(body).matchAll(/[\w-]+/g) : []) {
    if (seen.has(word) || word === own) continue;
    seen.add(word);
    const servers = index!.get(word);
    if (servers && [...servers].some((server) => server === undefined || server !== location.server))
      add('tool-shadowing', 'medium', `names another tool in the catalog (${word})`, word);
  }
  for (const { server, match } of serverMentions(body, options.knownServers ?? [], meter)) {
    if (server === location.server) continue;
    add('tool-shadowing', 'medium', `names another server in the session (${server})`, match);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Tools

/** The first `length` characters of the texts joined with spaces, without joining them all. */
function opening(texts: readonly { text: string }[], length: number): string {
  let out = '';
  for (const { text } of texts) {
    out += `${out ? ' ' : ''}${text.slice(0, length)}`;
    if (out.length >= length) break;
  }
  return out.slice(0, length);
}

/** block: any high finding (the tool waits for approval); warn: any medium; low findings are informational. */
export function verdictOf(findings: readonly Finding[]): ScanVerdict {
  if (findings.some((f) => f.severity === 'high')) return 'block';
  if (findings.some((f) => f.severity === 'medium')) return 'warn';
  return 'clean';
}

/**
 * The cue scanner over a tool's description, title, name, the texts of its input and output schemas and a prompt's
 * arguments. Bounded whatever the definition: `options.scanBytes` characters of text in all (taken in that order),
 * and each schema walked to MAX_SCHEMA_NODES, MAX_SCHEMA_TEXTS and MAX_SCHEMA_DEPTH. What is left unread is
 * reported as a high `oversized` finding: a definition that large is not honest documentation, and what was not
 * read cannot be vouched for.
 */
function cueFindings(tool: ScannableTool, options: ScanOptions): Finding[] {
  const base = { server: tool.server, name: tool.name };
  const limit = Math.max(0, options.scanBytes ?? DEFAULT_SCAN_BYTES);
  const findings: Finding[] = [];
  let budget = limit;
  let unread = 0;
  const scan = (text: string, location: ScanLocation, scanOptions: ScanOptions): Finding[] => {
    if (budget === 0 && text.length > 0) {
      unread++;
      return [];
    }
    const found = scanText(text, location, { ...scanOptions, scanBytes: budget });
    budget -= Math.min(budget, text.length);
    return found;
  };
  if (tool.description)
    pushAll(findings, scan(tool.description, { kind: 'tool-description', ...base }, options));
  if (tool.title)
    pushAll(findings, scan(tool.title, { kind: 'tool-description', ...base, field: 'title' }, options));
  // The tool's name itself can carry invisible characters that make two tools look alike.
  if (new RegExp(INVISIBLE_SOURCE, 'u').test(tool.name)) {
    const named = scan(
      tool.name,
      { kind: 'tool-description', ...base, field: 'name' },
      { work: options.work },
    );
    pushAll(
      findings,
      named.filter((f) => f.code !== 'oversized' || f.severity === 'high'),
    );
  }
  const input = schemaTexts(tool.inputSchema);
  const output = tool.outputSchema === undefined ? undefined : schemaTexts(tool.outputSchema, 'outputSchema');
  const strings = output ? [...input.texts, ...output.texts] : input.texts;
  const cut = input.cut || output?.cut === true;
  for (const argument of promptArguments(tool.arguments)) strings.push(argument);
  let schemaChars = 0;
  for (const { path, text } of strings) {
    schemaChars += text.length;
    pushAll(findings, scan(text, { kind: 'tool-schema', ...base, field: path }, options));
  }
  if (schemaChars > OVERSIZED_CHARS && !findings.some((f) => f.code === 'oversized'))
    findings.push({
      code: 'oversized',
      severity: 'medium',
      location: { kind: 'tool-schema', ...base, field: 'inputSchema' },
      message: `${schemaChars} characters of text inside the input schema`,
      match: clip(opening(strings, 80)),
    });
  if (cut)
    findings.push({
      code: 'oversized',
      severity: 'high',
      location: { kind: 'tool-schema', ...base, field: 'inputSchema' },
      message: `an input schema larger than the scanner reads (${MAX_SCHEMA_NODES} values, ${MAX_SCHEMA_TEXTS} texts, ${MAX_SCHEMA_DEPTH} levels): the rest was not scanned`,
      match: clip(opening(strings, 80)),
    });
  if (unread > 0)
    findings.push({
      code: 'oversized',
      severity: 'high',
      location: { kind: 'tool-description', ...base },
      message: `more text than the scanner reads in one definition (${limit} characters): ${unread} text(s) were not scanned`,
      match: clip(opening(strings, 80)),
    });
  return findings;
}

/** A prompt's argument descriptions as texts with their paths (`arguments[0].description`). */
function promptArguments(args: unknown): Array<{ path: string; text: string }> {
  if (!Array.isArray(args)) return [];
  const out: Array<{ path: string; text: string }> = [];
  for (let i = 0; i < args.length && out.length < MAX_SCHEMA_TEXTS; i++) {
    const description = (args[i] as { description?: unknown } | null)?.description;
    if (typeof description === 'string') out.push({ path: `arguments[${i}].description`, text: description });
  }
  return out;
}

/**
 * Scans a tool definition (or a prompt or resource in that shape): the cue scanner's findings (cueFindings), the
 * evidence of evidence.ts and what the catalog checks found (`options.catalogSignals`), weighed together by the
 * model (verdict.ts). The verdict is the model's: `block` (a high finding: the definition waits for the user's
 * approval), `warn` (medium), `clean`. Every finding says where it is (`location.field`), what it is, and what it
 * weighs; evidence found in a field the cue scanner already reported is attached to that finding (`evidence`), the
 * rest are findings of their own. Bounded as cueFindings is, and the evidence within the same `scanBytes`.
 */
export function scanTool(tool: ScannableTool, options: ScanOptions = {}): ToolScan {
  const base = { server: tool.server, name: tool.name };
  const cues = cueFindings(tool, options);
  const evidence = collectEvidence(tool, {
    knownTools: options.knownTools,
    budget: Math.max(0, options.scanBytes ?? DEFAULT_SCAN_BYTES),
    meter: new ScanMeter(options.work),
  });
  const keys = new Set<string>(evidence.features);
  for (const f of cues) {
    const key = featureKey({ ...f, cue: true });
    if (key) keys.add(key);
  }
  for (const signal of options.catalogSignals ?? []) keys.add(signal.code);
  const model = options.model ?? SCAN_MODEL;
  const decisive = cues.some(isDecisive);
  const judgement = weigh(keys, decisive, model);
  const weightOf = (key: string | undefined) => (key === undefined ? 0 : (model.weights[key] ?? 0));

  // Evidence goes with the cue finding of its field, when there is one.
  const fieldOf = (f: Finding) => f.location.field ?? 'description';
  const firstCue = new Map<string, Finding>();
  for (const f of cues) if (!firstCue.has(fieldOf(f))) firstCue.set(fieldOf(f), f);
  const own: Finding[] = [];
  for (const signal of evidence.signals) {
    const item: FindingEvidence = {
      feature: signal.feature,
      match: signal.match,
      why: FEATURE_WHY[signal.feature],
      weight: weightOf(signal.feature),
    };
    const host = firstCue.get(signal.field);
    if (host) {
      host.evidence ??= [];
      if (!host.evidence.some((e) => e.feature === item.feature && e.match === item.match))
        host.evidence.push(item);
    } else
      own.push({
        code: signal.feature,
        severity: 'low',
        location: locationOf(base, signal.field),
        message: FEATURE_WHY[signal.feature],
        match: signal.match,
      });
  }
  for (const signal of options.catalogSignals ?? [])
    own.push({
      code: signal.code,
      severity: 'low',
      location: locationOf(base, signal.field),
      message: signal.message,
      match: clip(signal.match),
    });

  const findings = [...cues, ...own];
  for (const f of findings) {
    const cue = (CUE_CODES as readonly string[]).includes(f.code);
    // A finding weighs what its own feature weighs, or its heaviest attached evidence; its severity follows the
    // verdict (decisive findings stay high).
    const weight = Math.max(weightOf(featureKey({ ...f, cue })), ...(f.evidence ?? []).map((e) => e.weight));
    // In a flagged definition the cue scanner's medium and high findings stay at least medium: they are part of
    // what the reviewer should read, weighed or not. In a clean one everything is low.
    const floor = cue && judgement.verdict !== 'clean' && f.severity !== 'low' ? 'medium' : 'low';
    const severity = cue && isDecisive(f) ? 'high' : severityFor(judgement, weight);
    f.severity = severity === 'low' ? floor : severity;
    if (weight > 0) f.weight = weight;
  }
  return {
    verdict: judgement.verdict,
    findings,
    score: judgement.score,
    contributions: judgement.contributions,
    grey: judgement.grey,
    features: [...keys].sort(),
    decisive,
  };
}

function locationOf(base: { server: string; name: string }, field: string): ScanLocation {
  const kind: ScanLocationKind = /^(?:inputSchema|outputSchema|arguments)/.test(field)
    ? 'tool-schema'
    : 'tool-description';
  return field === 'description' ? { kind, ...base } : { kind, ...base, field };
}
