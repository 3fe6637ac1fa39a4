/**
 * Evidence for the poisoning verdict (verdict.ts): what a definition's texts do, feature by feature, each with where
 * it was found and the words that raised it. The cue scanner (scan.ts) looks for phrases that are attacks on their
 * own; this module looks for the parts attacks are made of (an order to the model, a reference to other tools,
 * an ordering demand, secrecy, a claimed authority, a superlative, a shell line, a data sink next to a sensitive
 * source, a parameter that asks for more than the tool needs), most of which honest documentation uses too. No
 * single one decides: the verdict weighs them together.
 *
 * How it reads: every text is normalized (scan-normalize.ts), cut into sentences, and searched by a few combined
 * patterns whose named groups are the "atoms" below, one pass each. Each sentence keeps a bit mask of the atoms
 * found in it, so the features that need two things in one sentence ("send" and a URL; a credential and a verb
 * that moves it; "before" and "any other tool") cost nothing more. Every pattern is linear (bounded gaps and
 * quantifiers, no two unbounded runs side by side, see scan.ts's cost rule); the adversarial inputs in
 * bench/fixtures/scan-inputs.ts include this module's worst cases, and test/security/scan-linear.test.ts counts the
 * work through the same ScanMeter.
 */

import { commandShapes } from './command-shapes.js';
import { inScope, paramConcern } from './param-scope.js';
import type { ScanMeter } from './scan-linear.js';
import { clip, INVISIBLE_SOURCE, normalize } from './scan-normalize.js';
import { schemaTexts } from './schema-texts.js';
import { demands, toolClaims } from './tool-claims.js';

/** Every feature the evidence extractor can raise; each is also a finding code (docs/security.md). */
export const EVIDENCE_FEATURES = [
  // addressed to the model
  'model-address',
  'second-person-order',
  'imperative',
  'emphatic-order',
  'override',
  'secrecy',
  'trigger',
  // claimed authority, preference
  'authority-markup',
  'caps-alert',
  'authority-claim',
  'deprecation',
  'superlative',
  'exclusivity',
  // other tools, ordering
  'other-tools',
  'named-tool',
  'catalog-tool',
  'ordering',
  'ordered-tool-use',
  'directs-other-tools',
  'disparages-tools',
  'tool-prerequisite',
  'tool-replacement',
  // payloads, data
  'shell-payload',
  'run-command',
  'injection-key',
  'safety-off',
  'data-sink',
  'send-to',
  'credential-source',
  'context-source',
  'private-source',
  'source-transfer',
  'hostile-words',
  'redirection',
  'coercion',
  'active-content',
  // the definition as a whole
  'schema-directive',
  'param-directive',
  'param-out-of-scope',
  'name-mismatch',
  'name-claim',
  'name-homoglyph',
  'annotation-mismatch',
] as const;

export type EvidenceFeature = (typeof EVIDENCE_FEATURES)[number];

/** Why each feature matters, in one line: shown with every finding it raises. */
export const FEATURE_WHY: Readonly<Record<EvidenceFeature, string>> = {
  'model-address': 'speaks to the model or assistant instead of documenting the tool',
  'second-person-order': 'gives the reader (the model) orders: "you must / should / need to"',
  imperative: 'a sentence that opens with an order (always, never, do not, make sure)',
  'emphatic-order': 'orders in capitals (MUST, NEVER, ALWAYS, DO NOT): insistence aimed at the model',
  override: 'tries to replace the instructions or the role the model was given',
  secrecy: 'asks for something to be kept from the user',
  trigger: 'makes behaviour depend on what the user says (a trigger for hidden behaviour)',
  'authority-markup':
    'claims authority with markup ([SYSTEM], <IMPORTANT>, SYSTEM INSTRUCTION): a tool has none',
  'caps-alert': 'an alert in capitals (IMPORTANT:, CRITICAL:)',
  'authority-claim': 'invokes policy, compliance, administrators or priority to compel the model',
  deprecation: 'calls something deprecated or obsolete (often another tool, to steer the model away from it)',
  superlative: 'claims to be the best, the most reliable or trusted: preference manipulation',
  exclusivity: 'tells the model to use this tool and not others, or to ignore other tools',
  'other-tools': 'refers to other tools, servers or "all tools": a description should document its own tool',
  'named-tool': 'tells the model to call a tool by name',
  'catalog-tool': "names a tool of another server in the session: reaching into another server's tools",
  ordering: 'an ordering demand (before, after, first, whenever, every time)',
  'ordered-tool-use': 'sets an order on tool use: call something before or after other tools',
  'directs-other-tools': 'orders the model about other tools',
  'disparages-tools': 'calls other tools broken, unsafe or deprecated: steering the model away from them',
  'tool-prerequisite':
    'claims to come before every other tool ("before using any tool, call X first"): a fake prerequisite',
  'tool-replacement':
    'claims to replace, override or ban another tool ("replaces X; never call X"): redirects its calls',
  'shell-payload': 'carries a shell command or code to run',
  'run-command':
    'a command that fetches and runs code, deletes a home or root, opens a shell or is spliced into a value',
  'injection-key': 'a JSON-like key that claims to carry system instructions',
  'safety-off': 'asks to switch off checks, confirmations or safety',
  'data-sink': 'names a place data can go (URL, e-mail address, webhook, file)',
  'send-to': 'asks for something to be sent, posted or written somewhere',
  'credential-source': 'mentions keys, tokens, passwords or the environment',
  'context-source': 'mentions the conversation, previous messages or the system prompt',
  'private-source': "mentions the user's private files or data (home directory, ~/.ssh, contacts)",
  'source-transfer':
    'asks for sensitive material (credentials, conversation, private files) to be moved or included',
  'hostile-words': 'uses the words of an attack (exfiltrate, steal, hijack, backdoor, attacker)',
  redirection:
    'asks for requests, calls or data to be routed somewhere else, or takes over what another tool does',
  coercion: 'threatens failure to make the model comply ("or it will not work")',
  'active-content':
    'carries content that runs where it is rendered (a script, a javascript: or data:text/html URL)',
  'schema-directive':
    'instructions inside the input schema, enum, default or annotations, where nobody reads them',
  'param-directive':
    "a parameter that carries orders: a default, enum or example that is a sentence giving orders, or a description that speaks to the model or has it paste another tool's output",
  'param-out-of-scope':
    "a parameter that asks for what the tool's purpose does not need (another system's secret, the conversation, a credential file, other tools' output)",
  'name-mismatch': "the text asks for things the tool's name and purpose do not involve",
  'name-claim': 'the name or title claims quality or safety (best, official, safe, verified)',
  'name-homoglyph': 'the name mixes scripts or hides characters: it can impersonate another tool',
  'annotation-mismatch':
    'annotations claim read-only or safe on a tool whose name or text says it runs, writes or deletes',
};

/** One piece of evidence: a feature, where it was found, and the words that raised it. */
export interface Signal {
  feature: EvidenceFeature;
  /** `description`, `title`, `name`, `annotations`, or a JSON path (`inputSchema.properties.x.description`). */
  field: string;
  /** The words, clipped, invisible characters shown. */
  match: string;
}

export interface DefinitionEvidence {
  /** At most MAX_SIGNALS_PER_FEATURE per feature, in the order found. */
  signals: Signal[];
  /** Every feature raised, however many times. */
  features: Set<EvidenceFeature>;
}

/** The parts of a definition the extractor reads: a tool, or a prompt (`arguments`) or resource in that shape. */
export interface EvidenceInput {
  server: string;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  /** A prompt's arguments (`[{name, description}]`), read like parameters. */
  arguments?: unknown;
}

export interface EvidenceOptions {
  /** Tool names of the catalog as `server__tool` (or bare): naming another server's tool is `catalog-tool`. */
  knownTools?: readonly string[] | undefined;
  /** Characters read over all texts of the definition (the scanner's `scanBytes`). */
  budget: number;
  meter: ScanMeter;
}

const MAX_SIGNALS_PER_FEATURE = 4;
/** Parameters looked at for names and purposes: past this, the schema walk (scan.ts) reports the schema. */
const MAX_PARAMS = 500;

// ---------------------------------------------------------------------------------------------------------
// Atoms: what one sentence can hold. Bits of a sentence's mask.

/** Atom numbers: bits of a sentence's mask (at most 32). */
const Atom = {
  Model: 0,
  You: 1,
  Imperative: 2,
  Emphatic: 3,
  Override: 4,
  Secrecy: 5,
  Trigger: 6,
  Markup: 7,
  Caps: 8,
  Claim: 9,
  Deprecation: 10,
  Superlative: 11,
  Exclusive: 12,
  Negative: 13,
  OtherTools: 14,
  NamedTool: 15,
  CatalogTool: 16,
  Ordering: 17,
  Shell: 18,
  InjectionKey: 19,
  SafetyOff: 20,
  Sink: 21,
  Move: 22,
  Read: 23,
  Credential: 24,
  Context: 25,
  Private: 26,
  Hostile: 27,
  Redirect: 28,
  Modal: 29,
  Coercion: 30,
  ActiveContent: 31,
} as const;
type Atom = (typeof Atom)[keyof typeof Atom];

const bit = (atom: Atom): number => 1 << atom;
const SOURCES = bit(Atom.Credential) | bit(Atom.Context) | bit(Atom.Private);
const TOOL_REFS = bit(Atom.OtherTools) | bit(Atom.NamedTool) | bit(Atom.CatalogTool);
const ORDERS = bit(Atom.Model) | bit(Atom.You) | bit(Atom.Imperative) | bit(Atom.Emphatic);

/** The feature each atom raises on its own (Move and Read raise none alone: they only join others). */
const ATOM_FEATURE: ReadonlyArray<EvidenceFeature | undefined> = [
  'model-address',
  'second-person-order',
  'imperative',
  'emphatic-order',
  'override',
  'secrecy',
  'trigger',
  'authority-markup',
  'caps-alert',
  'authority-claim',
  'deprecation',
  'superlative',
  'exclusivity',
  undefined, // Negative: only next to other tools
  'other-tools',
  'named-tool',
  'catalog-tool',
  'ordering',
  'shell-payload',
  'injection-key',
  'safety-off',
  'data-sink',
  undefined, // Move
  undefined, // Read
  'credential-source',
  'context-source',
  'private-source',
  'hostile-words',
  'redirection',
  undefined, // Modal: only next to other tools
  'coercion',
  'active-content',
];

// Shared pieces. `S` is a bounded run of whitespace: two unbounded runs side by side are what made the old
// scanner quadratic, and no honest text puts more than a few spaces between two words of a phrase.
const S = String.raw`\s{1,3}`;
const W = String.raw`[\w'-]{1,24}`;
const alt = (...parts: string[]) => parts.join('|');
const AI = String.raw`(?:(?:the|your|an?)${S})?(?<![-\w])(?:assistant|ai|a\.i\.|llm|claude|gpt(?:-?\d)?|chatgpt|chatbot|copilot|ai${S}(?:assistant|agent|model)|language${S}model|(?<=(?:the|your|an?)${S})(?:model|agent))(?:${S}(?:client|agent|model|assistant))?(?:\s{0,2}\([^)\n]{1,40}\))?`;
/** What a superlative says of a tool (the best, the most reliable, #1). */
const SUPERLATIVE = String.raw`(?:best|only${S}(?:reliable|accurate|trusted|correct|safe|secure|official|valid|working|approved|legitimate)|most${S}(?:reliable|accurate|trusted|trustworthy|advanced|powerful|comprehensive|efficient|secure|popular|complete|capable|robust|precise|intelligent|up[\s-]to[\s-]date)(?:,${S}(?:fastest|most${S}\w{3,20})){0,6}(?:,?${S}and${S}(?:fastest|most${S}\w{3,20}))?|fastest|greatest|ultimate|leading|premier|finest|smartest|top[\s-]rated|number${S}one|#\s?1(?:${S}recommended)?)`;
const MODAL = `(?:must|should|shall|needs?${S}to|has${S}to|have${S}to|(?:is|are)${S}(?:required|instructed|expected|supposed|obliged)${S}to|will${S}(?:need${S}to|always|never|now)|may${S}not|cannot|can't|is${S}not${S}allowed${S}to)`;

/**
 * The atoms in groups, one combined pattern (one pass) per group. Within a pattern, a match hides a shorter atom
 * starting inside it; the groups keep atoms that begin with the same words apart, and every atom is short.
 */
const GROUPS: ReadonlyArray<{ re: RegExp; atoms: ReadonlyArray<[string, Atom]>; data?: boolean }> = [
  {
    // Addressed to the model.
    re: new RegExp(
      alt(
        String.raw`(?<model>\b${AI}${S}${MODAL}\b|\b(?:note|message|instructions?|reminder|attention|memo|directive)${S}(?:to|for)${S}(?:the${S})?(?:ai|assistant|model|llm|agent|claude|gpt)\b|\b(?:dear|hey|attention)${S}(?:ai|assistant|model|llm|agent|claude)\b|\bas${S}an?${S}(?:ai|assistant|language${S}model)\b)`,
        String.raw`(?<you>\byou${S}${MODAL}\b|\byou${S}(?:are|will${S}be)${S}(?:now${S})?(?:required|instructed|authori[sz]ed|permitted|allowed)\b)`,
        String.raw`(?<override>\b(?:ignore|disregard|forget|override|bypass|abandon)${S}(?:(?:all|any|the|your|of|previous|prior|above|earlier|preceding|original|existing|system|default|initial|current)${S}){0,3}(?:instructions?|directions|directives|rules|guidelines|prompts?|programming|training|system${S}prompt|policies)\b|\b(?:new|updated|real|actual|true|revised)${S}(?:system${S})?instructions?${S}?:|\bfrom${S}now${S}on\b|\byou${S}are${S}now\b|\byou${S}(?:will${S}|must${S}|should${S}|now${S})?(?:act|behave|respond)${S}as\b|\bact${S}as${S}if${S}you\b|\bpretend${S}(?:to${S}be|you|that)\b|\byour${S}(?:new|real|true|actual|primary)${S}(?:task|role|goal|purpose|instructions?|objective)\b|\bjailbreak|\bdeveloper${S}mode\b|\bno${S}longer${S}(?:bound|restricted|limited)\b)`,
        String.raw`(?<secrecy>\b(?:do${S}not|don't|dont|never|without)${S}(?:ever${S})?(?:tell|telling|mention|mentioning|inform|informing|notify|notifying|reveal|revealing|disclose|disclosing|show|showing|alert|alerting|let|letting|report|reporting|explain|explaining|display|displaying|log|logging)\b[^.\n]{0,40}?\b(?:user|users|human|anyone|them|operator)\b|\b(?:secretly|covertly|surreptitiously|stealthily|discreetly|silently|quietly)${S}(?:send|include|add|read|call|forward|copy|upload|append|pass|collect|run|execute|log|record|store|save|transmit|exfiltrate|share|attach|bcc|cc)|\b(?:keep|kept)${S}(?:this|it|these|them)${S}(?:secret|hidden|confidential|private|between${S}us)\b|\bhidden${S}from${S}(?:the${S})?users?\b|\b(?:the${S})?users?${S}(?:must|should|does|do|need|will|can)${S}?(?:not|n't)${S}(?:know|see|notice|be${S}told|be${S}informed|find${S}out|be${S}aware)\b|\bnot${S}(?:be${S})?(?:visible|shown|displayed|revealed|disclosed)${S}to${S}(?:the${S})?users?\b|\bwithout${S}(?:the${S})?users?'?s?${S}(?:knowledge|knowing|consent|awareness|noticing|permission|approval)\b|\b(?:never|not)${S}(?:be${S})?(?:mentioned|told|shown|revealed|disclosed|reported|displayed|explained)${S}(?:to${S})?(?:the${S})?(?:users?|humans?|anyone)\b)`,
        String.raw`(?<trigger>\b(?:when(?:ever)?|if|once)${S}(?:the${S})?user${S}(?:says|mentions|types|writes|inputs|enters|uses${S}the${S}(?:word|phrase))${S}(?:the${S}(?:word|phrase)${S})?["'“]|\bif${S}the${S}(?:query|request|input|message|prompt)${S}(?:contains|includes|mentions)\b|\b(?:trigger${S}(?:word|phrase)|code${S}?word|magic${S}(?:word|phrase)|secret${S}(?:word|phrase|command))\b)`,
      ),
      'gi',
    ),
    atoms: [
      ['model', Atom.Model],
      ['you', Atom.You],
      ['override', Atom.Override],
      ['secrecy', Atom.Secrecy],
      ['trigger', Atom.Trigger],
    ],
  },
  {
    // Orders that open a sentence (after the start, a sentence end, a colon, a line break or a closing tag).
    re: new RegExp(
      alt(
        String.raw`(?<imperative>(?:^|[.!?:>\]\n])\s{0,3}(?:always|never|do${S}not|don't|must|make${S}sure|ensure${S}(?:that${S})?you|remember${S}to|be${S}sure${S}to)\b)`,
        // A modal anywhere: only joins other atoms ("all other tools must ...").
        String.raw`(?<modal>\b(?:must|shall|should|needs?${S}to|have${S}to|has${S}to|(?:is|are)${S}required${S}to)\b)`,
        String.raw`(?<coercion>\b(?:otherwise|or${S}else|or|if${S}not)${S}(?:it|they|the${S}(?:tool|call|request|system|server|operation|query)|this${S}tool|you|results?)${S}(?:will|would|may|might)${S}(?:not${S}work|fail|crash|break|error|be${S}(?:blocked|rejected|denied|incomplete|wrong))\b)`,
      ),
      'gi',
    ),
    atoms: [
      ['imperative', Atom.Imperative],
      ['modal', Atom.Modal],
      ['coercion', Atom.Coercion],
    ],
  },
  {
    // Authority and preference.
    re: new RegExp(
      alt(
        String.raw`(?<markup><\s{0,3}\/?\s{0,3}(?:important|system|admin|instructions?|hidden|secret|critical|global|override|priority|sys|urgent|mandatory|developer|root|internal|assistant|ai|notice|attention|directive|rules?|policy|compliance|security|context|note)(?:[\s_-]{1,3}[\w-]{1,20}){0,3}\s{0,3}>|\[{1,3}\s{0,3}(?:important|system|admin|instructions?|hidden|secret|critical|global|override|priority|urgent|mandatory|developer|internal|directive|attention|security|compliance|policy)(?:[\s_:-]{1,3}[\w-]{1,20}){0,4}\s{0,3}\]{1,3}|\{\{\s{0,3}(?:system|important|instructions?|admin|override)\b|(?:^|\n)\s{0,3}#{1,6}\s{0,3}(?:system|instructions?|admin|override|hidden)\b|#{2,6}\s{0,3}(?:system|instructions?|admin|override|hidden)\s{0,2}:)`,
        String.raw`(?<claim>\b(?:(?:extremely|critically|vitally|absolutely|very)${S}(?:important|critical|crucial|essential)|compliance|mandatory|required${S}by${S}(?:law|policy|security|compliance|regulations?|the${S}(?:system|administrator|admin))|security${S}(?:policy|requirement|protocol|audit|team|clearance)|(?:company|corporate|organi[sz]ation(?:al)?)${S}policy|authori[sz]ed${S}by|approved${S}by|administrator|admin(?:istrative)?${S}(?:privileges|access|override|rights|mode)|(?:debug|maintenance|god|admin|root)${S}mode|privileged|elevated${S}(?:privileges|access|permissions|rights)|(?:highest|top|maximum)${S}priority|priority${S}(?:override|one|instruction)|takes${S}precedence|supersedes|non-?negotiable|strictly${S}required|officially|(?:verified|certified|endorsed)${S}by|regulatory)\b)`,
        String.raw`(?<deprecation>\b(?:deprecated|obsolete|no${S}longer${S}(?:supported|maintained|works?|working|available|safe|valid|reliable)|outdated|superseded|end[\s-]of[\s-]life|discontinued|sunset(?:ted)?)\b)`,
        String.raw`(?<superlative>\b(?:this|it|we|this${S}(?:tool|server|service|function|api))${S}(?:is|are|'s)${S}(?:simply${S}|by${S}far${S})?(?:the${S})?(?:very${S})?${SUPERLATIVE}\b|\b(?:the|our)${S}(?:very${S})?${SUPERLATIVE}${S}(?:(?!(?:for|of|in|on|with|to|from|pages?|results?|documents?|urls?)\b)[\w-]{1,20}[\s,]{1,3}){0,3}(?:tool|server|service|function|api|solution|option|choice|way${S}to)s?\b|\b(?:world'?s|industry'?s?|market'?s?)${S}(?:best|leading|first|most|fastest|top|number${S}one|#\s?1)\b|\b(?:unparalleled|unmatched|unrivall?ed|unbeatable|unsurpassed|best[\s-]in[\s-]class|industry[\s-]leading|world[\s-]class|world[\s-]renowned|award[\s-]winning|game[\s-]chang(?:er|ing)|second${S}to${S}none|superior${S}to${S}(?:all|any|other)|100\s?%${S}(?:accurate|reliable|secure|safe|guaranteed)|guaranteed${S}(?:accuracy|results)|trusted${S}by${S}(?:millions|thousands|experts|professionals|leading)|(?:millions|thousands)${S}of${S}(?:satisfied${S})?(?:users|developers|people|customers)${S}(?:trust|rely|use|love|choose)|highly${S}(?:recommended|acclaimed)|(?:recommended|endorsed|trusted|used)${S}by${S}(?:experts|professionals|industry|leading))\b)`,
        String.raw`(?<exclusive>\b(?:ignore|disregard|avoid|do${S}not${S}use|don't${S}use|never${S}use|stop${S}using|instead${S}of${S}using|rather${S}than${S}using|in${S}place${S}of)${S}(?:all${S}|any${S}|the${S})?(?:other|another|alternative|competing|similar|existing|built[\s-]in|default|third[\s-]party|those|these)${S}(?:${W}${S})?(?:tools?|functions?|servers?|services?|providers?|options?|plugins?|apis?)\b|\b(?:only|exclusively|always)${S}(?:use|call|choose|select|prefer|trust|rely${S}on)${S}(?:this|these|our|me)\b|\b(?:use|call|prefer|choose|select)${S}(?:this|our)${S}(?:tool|function|server|service|one)${S}(?:instead|exclusively|only|first|always|over|rather)\b|\b(?:prefer|choose|select|pick)${S}(?:this|me)${S}(?:over|instead|above)\b|\bthe${S}(?:only|preferred|recommended|default|primary|official|correct|proper|right)${S}(?:tool|function|choice|server|service)${S}(?:for|to)\b|\b(?:should|must)${S}(?:always${S})?be${S}(?:used|preferred|chosen|selected|called)${S}(?:first|instead|exclusively|over|before|above)\b|\b(?:always|only)${S}(?:suggest|recommend|promote|mention|favou?r)${S}(?:our|this|my|the${S}sponsored)\b|\bregardless${S}of${S}(?:the${S})?(?:user'?s?${S})?(?:input|query|request|question|what${S}the${S}user|instructions|context)\b)`,
        String.raw`(?<negative>\b(?:buggy|broken|unreliable|insecure|unsafe|malicious|compromised|inaccurate|faulty|dangerous|untrusted|fake|scam|hacked|corrupt(?:ed)?|not${S}(?:working|reliable|safe|trustworthy|accurate)|(?:be|been)${S}(?:ignored|avoided|disregarded|bypassed))\b)`,
      ),
      'gi',
    ),
    atoms: [
      ['markup', Atom.Markup],
      ['claim', Atom.Claim],
      ['deprecation', Atom.Deprecation],
      ['superlative', Atom.Superlative],
      ['exclusive', Atom.Exclusive],
      ['negative', Atom.Negative],
    ],
  },
  {
    // Case matters: shouting.
    re: new RegExp(
      alt(
        String.raw`(?<capsMarkup>\b(?:SYSTEM|ADMIN|ADMINISTRATOR|DEVELOPER|ROOT|SECURITY|PRIORITY|OVERRIDE)[\s_:-]{1,3}(?:INSTRUCTIONS?|OVERRIDE|MESSAGE|NOTE|PROMPT|MODE|COMMAND|DIRECTIVE|UPDATE|NOTICE|ALERT|REQUIREMENT|POLICY)\b|(?<![\w-])(?:SYSTEM|ADMIN|ASSISTANT)\s{0,2}:)`,
        String.raw`(?<caps>\b(?:IMPORTANT|CRITICAL|URGENT|ATTENTION|WARNING|NOTICE|MANDATORY|REQUIRED|NOTE)\b\s{0,2}[:!])`,
        String.raw`(?<emphatic>\b(?:MUST(?:${S}NOT)?|NEVER|ALWAYS|DO${S}NOT|ONLY${S}USE|BEFORE${S}ANY|FIRST)\b)`,
      ),
      'g',
    ),
    atoms: [
      ['capsMarkup', Atom.Markup],
      ['caps', Atom.Caps],
      ['emphatic', Atom.Emphatic],
    ],
  },
  {
    // Other tools and ordering.
    re: new RegExp(
      alt(
        String.raw`(?<otherTools>\b[a-z][\w-]{0,30}(?:server|mcp|service|plugin)s?\.[a-z][\w-]{1,40}|\b(?:all|any|every|each|other|another|alternative|competing|similar|existing|built[\s-]in|third[\s-]party|remaining)${S}(?:other${S})?(?:${W}${S})?(?:tools?|functions?|servers?|plugins?|extensions?|mcp${S}servers?|integrations?|tool${S}calls?)\b|\bthe${S}(?<role>[a-z][\w-]{1,24})(?:${S}[a-z][\w-]{1,24})?${S}(?:server${S}(?=:|tools?)|tool|function|plugin)\b)`,
        String.raw`(?<ordering>\b(?:before|prior${S}to)(?=${S}(?:using|calling|invoking|running|executing|any|every|each|all|responding|answering|replying|proceeding|performing|doing|you|other|making)\b)|\b(?:first|always|must|should)(?=${S}(?:call|use|invoke|run|execute|check|read|send|consult)\b)|\bafter(?=${S}(?:each|every|any|all|using|calling|invoking)\b)|\bwhen(?:ever)?(?=${S}(?:calling|using|invoking|processing|handling|responding|answering|you${S}(?:call|use|invoke|process|handle|respond))\b)|\b(?:whenever|every${S}time|each${S}time)\b|\bat${S}the${S}(?:start|beginning)${S}of${S}(?:every|each|the|any)\b|\b(?:in|with|for)${S}(?:every|each|all)${S}(?:responses?|messages?|requests?|calls?|conversations?|interactions?|sessions?)\b)`,
      ),
      'gi',
    ),
    atoms: [
      ['otherTools', Atom.OtherTools],
      ['ordering', Atom.Ordering],
    ],
  },
  {
    // A tool called by name: a pass of its own, so that its verb and the words after it stay free for the others.
    re: new RegExp(
      String.raw`(?<namedTool>\b(?:call|calling|use|using|invoke|invoking|run|running|execute|executing|trigger|triggering)${S}(?:the${S})?[\`'"]?(?<toolName>[a-z][a-z0-9]{0,30}(?:[_-][a-z0-9]{1,30}){1,6}|[a-z][a-z0-9]{1,30}(?:[A-Z][a-z0-9]{0,30}){1,6})\b|[\`'"](?<quotedTool>[a-z][a-z0-9]{0,30}(?:[_-][a-z0-9]{1,30}){1,6})[\`'"]${S}(?:tool|function)\b|\b(?<dottedTool>[a-z][\w-]{1,40}\.[a-z][\w-]{1,40})\s{0,2}\(\s{0,2}\))`,
      'gi',
    ),
    atoms: [['namedTool', Atom.NamedTool]],
  },
  {
    // Payloads.
    re: new RegExp(
      alt(
        String.raw`(?<active>\bdata:(?:text\/html|(?:application|text)\/(?:x-)?javascript|image\/svg\+xml)[;,]|<script\b|\bjavascript:)`,
        String.raw`(?<shell>\b(?:curl|wget)${S}(?:-{1,2}[\w-]{1,20}${S}(?:[^\s-]\S{0,40}${S})?){0,4}['"]?(?:https?:|ftp:|\$|\/\/)|\|\s{0,3}(?:ba|z|da)?sh\b|\|\s{0,3}python[23]?\b|\bsudo${S}[\w-]|\brm${S}-[rRf]{1,3}\b|\bchmod${S}(?:\+x|[0-7]{3,4})\b|\b(?:bash|sh|zsh)${S}-c\b|\bpython[23]?${S}-c\b|\bnc${S}-[elvpn]{1,4}\b|\bbase64${S}(?:-d|--decode)\b|\beval\s{0,2}\(|\bexec\s{0,2}\(|\bos\.system\b|\bsubprocess\.\w{1,20}|\bpowershell\b|\bInvoke-(?:WebRequest|Expression|RestMethod)\b|\$\([^)\n]{1,80}\)|&&\s{0,3}(?:curl|wget|rm|cat|bash|sh|sudo|chmod|nc|python|echo|mv|cp)\b|;\s{0,3}(?:rm|curl|wget|bash|sh|sudo|chmod|nc)${S}|>\s{0,2}\/dev\/tcp\b|\/bin\/(?:ba)?sh\b|\bcat${S}(?:~|\/etc|\/home|\.\/\.|\$HOME)|\bmkfifo\b|\bcrontab\b|\bssh-keygen\b|'\s{0,2};\s{0,2}(?:drop|delete|truncate|update|insert|alter|grant)${S}|\bunion${S}(?:all${S})?select\b|'\s{0,2}or\s{0,2}'?1'?\s{0,2}=\s{0,2}'?1)`,
        String.raw`(?<injectionKey>(?<![\w-])["']?_{1,2}[a-z]{0,20}(?:system|instruction|injection|prompt|override|admin|directive|command|hidden|secret)[a-z_]{0,20}["']?\s{0,2}:|["']role["']\s{0,2}:\s{0,2}["'](?:system|developer)["'])`,
        String.raw`(?<hostile>\b(?:exfiltrat\w{0,6}|steal(?:s|ing)?|stolen|hijack\w{0,4}|siphon\w{0,4}|backdoor\w{0,2}|keylog\w{0,4}|attacker'?s?|evil|covert${S}channel|spy${S}on)\b)`,
        String.raw`(?<redirect>\b(?:must|should|has${S}to|needs?${S}to)${S}(?:first${S})?(?:go|pass|be${S}routed|be${S}sent)${S}through\b|\b(?:overrides?|replaces?|supersedes?|intercepts?|takes${S}over)${S}(?:the${S})?(?:behaviou?r|functionality|handling|role|calls?)${S}of\b|\b(?:redirect|reroute|route|proxy|forward|tunnel)\w{0,3}${S}(?:all${S}|every${S}|any${S})?(?:${W}${S})?(?:requests?|calls?|traffic|queries|messages|data|responses|emails?)${S}(?:through|to|via)\b)`,
        String.raw`(?<safetyOff>\b(?:disable|disabling|turn${S}off|switch${S}off|bypass|bypassing|skip|skipping|ignore|ignoring|circumvent|deactivate|suspend|override|overriding)${S}(?:all${S}|any${S}|the${S}|your${S}|its${S}|user${S})?(?:safety|security|content|guard|moderation|filter(?:ing|s)?|checks?|validations?|restrictions?|guardrails?|warnings?|confirmations?|approvals?|permissions?|sandbox(?:ing)?|protections?|verification|authentication|consent)\b)`,
      ),
      'gi',
    ),
    atoms: [
      ['active', Atom.ActiveContent],
      ['shell', Atom.Shell],
      ['hostile', Atom.Hostile],
      ['redirect', Atom.Redirect],
      ['injectionKey', Atom.InjectionKey],
      ['safetyOff', Atom.SafetyOff],
    ],
  },
  {
    // Data: where it could go, what moves it, what it is.
    re: new RegExp(
      alt(
        String.raw`(?<sink>\b(?:https?|ftp|wss?):\/\/[^\s"'<>)\]]{3,200}|(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}\.[a-z]{2,20}\b|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{2,5})?\b|\/tmp\/[\w./-]{0,60}|\b(?:to|into)${S}(?:a${S})?(?:hidden|temporary|secret|separate)${S}(?:log${S}|text${S})?file\b|\b(?:remote|external|third[\s-]party|our|my)${S}(?:${W}${S})?(?:server|endpoint|host|url|address|service|proxy|collector|logging${S}service)\b)`,
        String.raw`(?<move>\b(?:send|sends|sending|sent|include|pass|passes|passing|append|appending|attach|attaching|forward|forwarding|upload|uploading|exfiltrate|copy|copying|export|exporting|leak|transmit|transmitting|embed|embedding|share|sharing|post|posting|submit|submitting|bcc|cc|relay|mirror|transfer|transferring|redirect|redirecting|reroute|route|proxy)\b)`,
        String.raw`(?<read>\b(?:read|reads|reading|collect|collecting|gather|gathering|harvest|dump|dumping|extract|extracting|retrieve|retrieving|grab|access|accessing|cat|scan|scanning|list|enumerate|obtain)\b)`,
        String.raw`(?<credential>\b(?:api[\s_-]?keys?|access[\s_-]?(?:tokens?|keys?)|auth(?:entication|orization)?[\s_-]?tokens?|secret[\s_-]?(?:keys?|tokens?)|secrets|passwords?|passwd|passphrases?|credentials?|private[\s_-]?keys?|ssh[\s_-]?keys?|session[\s_-]?(?:tokens?|cookies?)|cookies|bearer${S}tokens?|oauth${S}tokens?|refresh${S}tokens?|seed${S}phrases?|mnemonic|2fa${S}codes?|one[\s-]time${S}(?:codes?|passwords?)|social${S}security|credit${S}card|bank${S}account|(?:all${S})?funds|wallet|account${S}numbers?|routing${S}numbers?|environment${S}variables?|env(?:ironment)?${S}vars?|process\.env|os\.environ|printenv)\b|(?<![\w.])\.env\b)`,
        String.raw`(?<context>\b(?:conversation${S}(?:history|log|context|so${S}far|transcript)|chat${S}(?:history|log|context|transcript)|message${S}history|(?:previous|prior|earlier|past|recent|entire|full|whole|complete)${S}(?:user${S})?(?:messages|conversations?|context|history|chat|prompts?|exchanges?|interactions?|queries)|system${S}(?:prompt|message|instructions)|context${S}window|your${S}(?:system${S}prompt|(?:original|initial|system|hidden|real)${S}instructions|context${S}window|memory)|(?:the${S})?user'?s${S}(?:messages?|prompts?|queries|requests?|input)${S}(?:verbatim|in${S}full|exactly)|(?:other|previous)${S}tool${S}(?:results|outputs|responses|calls)|(?:entire|full|whole|complete|all(?:${S}of)?${S}the)${S}conversation|(?:full|entire|complete|all)${S}(?:the${S})?(?:arguments|parameters|inputs|outputs|results)${S}(?:of|from)${S}(?:that|each|every|other|previous|all|the${S}other)|(?:all|every)${S}(?:${W}${S})?(?:message|messages|email|emails|chat)${S}(?:content|contents|bodies|text|history))\b)`,
        String.raw`(?<private>(?:~\/|\$HOME\b|%USERPROFILE%|\/etc\/(?:passwd|shadow|hosts|sudoers)|\/home\/[\w.-]{1,40}|\/Users\/[\w.-]{1,40}|\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws\/|\.kube\/|\.gnupg|\.bash_history|\.zsh_history|\.git-credentials|\.npmrc|\.netrc|\.pgpass|\b(?:claude_desktop_config|mcp)\.json)|\b(?:user'?s?|personal|private|sensitive|confidential)${S}(?:data|information|info|files?|documents?|details|records?|messages|emails?|contacts|photos|history)\b|\ball${S}(?:of${S}the${S})?(?:user'?s?${S}|their${S}|your${S})?(?:data|files|documents|records|emails|contacts)\b|\b(?:address${S}book|contact${S}list|browser${S}history|clipboard|keychain|home${S}directory)\b|\b(?:your|the${S}user'?s|their)${S}(?:project${S}|local${S}|source${S})?(?:files|codebase|source${S}code|documents|repository)\b)`,
      ),
      'gi',
    ),
    atoms: [
      ['sink', Atom.Sink],
      ['move', Atom.Move],
      ['read', Atom.Read],
      ['credential', Atom.Credential],
      ['context', Atom.Context],
      ['private', Atom.Private],
    ],
    data: true,
  },
];

const NEGATED_BEFORE = /\b(?:cannot|can't|can ?not|not|never|won't|unable to|prevents?|no way to)\b/i;

const NEGATED_VERB = /\b(?:not|never|don't|dont|avoid|without|no)\s{1,3}(?:\w{1,12}\s{1,3})?$/i;

/** Role words that name this tool, a generic thing, or a place in a list rather than another tool. */
const NOT_A_ROLE = new Set([
  'this',
  'same',
  'following',
  'above',
  'below',
  'current',
  'selected',
  'specified',
  'given',
  'requested',
  'previous',
  'next',
  'first',
  'last',
  'mcp',
  'new',
  'appropriate',
  'right',
  'correct',
  'relevant',
  'underlying',
  'aws',
  'api',
  'main',
  'primary',
  'corresponding',
  'respective',
  'related',
  'proper',
  'desired',
  'target',
  'original',
  'specific',
  'lambda',
  'best',
  'only',
  'ultimate',
  'perfect',
  'ideal',
  'recommended',
  'preferred',
  'official',
  'default',
  'other',
]);

// ---------------------------------------------------------------------------------------------------------

/** Names too generic to mean "another tool" when they appear in prose (`search`, `echo`, `read`). */
export function distinctiveName(name: string): boolean {
  return name.length >= 5 && (/[_-]/.test(name) || /[a-z][A-Z]/.test(name));
}

/** `knownTools` by bare name, with the servers each belongs to (undefined: unqualified); built once per list. */
const knownToolIndex = new WeakMap<readonly string[], Map<string, Set<string | undefined>>>();

export function indexKnownTools(tools: readonly string[]): Map<string, Set<string | undefined>> {
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

/** Lower-case words of a name: `getUserData`, `get_user-data`, `GET.USER.DATA` all give get, user, data. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** Where sentences end: after `.`, `!` or `?` before whitespace, and at every line break. One pass. */
function sentenceEnds(text: string, meter: ScanMeter): number[] {
  const ends: number[] = [];
  for (const m of meter.read(text).matchAll(/[.!?](?=\s)|\n/g)) ends.push(m.index + 1);
  ends.push(text.length);
  return ends;
}

/** The sentence index of `at`: the first end after it (binary search). */
function sentenceOf(ends: readonly number[], at: number): number {
  let lo = 0;
  let hi = ends.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid]! > at) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

interface TextReading {
  /** The features raised in this text, with their evidence. */
  found: Map<EvidenceFeature, string[]>;
  /** Every atom in any sentence of the text. */
  atoms: number;
}

/** One text of a definition inside the body they are read as. */
interface Part {
  field: string;
  start: number;
  end: number;
  /** Inside the input schema, annotations or arguments: a parameter that switches a check off is an API. */
  inSchema: boolean;
  /** A value (default, enum, example, const): data in it is data, only directives count. */
  value: boolean;
}

/** The text that joins two parts: a line break ends a sentence, so no sentence spans two fields. */
// No pattern can cross it: the classes that take a line break (`\s`) do not take U+0000, and those that take U+0000
// (`\S`, `[^"']`) do not take a line break.
const JOIN = '\n\u0000\n';

/**
 * All texts of a definition, read as one body (`parts` say where each field lies in it): each pattern passes over
 * the body once, however many texts a schema holds. Returns, per part, its atoms and the features they raise alone
 * or together in a sentence. `self` holds the words of the tool's own name and server (a role reference to them is
 * the tool talking about itself).
 */
function readParts(
  body: string,
  parts: readonly Part[],
  self: ReadonlySet<string>,
  ownName: string,
  /**
   * Names the definition itself defines: its parameters and its enum and const values. "use it instead of imageRef",
   * "replace_content_range is deprecated" speak of the tool's own inputs, not of another tool.
   */
  ownNames: ReadonlySet<string>,
  server: string,
  catalog: Map<string, Set<string | undefined>> | undefined,
  /** The tool's purpose is running commands: a command it documents is its job, unless no purpose explains it. */
  shellPurpose: boolean,
  meter: ScanMeter,
): TextReading[] {
  const readings: TextReading[] = parts.map(() => ({ found: new Map(), atoms: 0 }));
  const partAt = (at: number): number => {
    let lo = 0;
    let hi = parts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (parts[mid]!.start <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const note = (part: number, feature: EvidenceFeature, match: string) => {
    const found = readings[part]!.found;
    const list = found.get(feature) ?? [];
    const shown = clip(match.trim());
    if (list.length < MAX_SIGNALS_PER_FEATURE && !list.includes(shown)) list.push(shown);
    found.set(feature, list);
  };
  const ends = sentenceEnds(body, meter);
  const masks = new Uint32Array(ends.length);
  // The sources of each sentence that are moved material, not the place something goes: "include uppercase
  // letters in the password" of a password generator shapes the tool's own output and moves no credential.
  const moved = new Uint32Array(ends.length);
  const sentence = (i: number) => body.slice(i === 0 ? 0 : ends[i - 1]!, ends[i]!);
  const mark = (part: number, atom: Atom, at: number, match: string) => {
    const s = sentenceOf(ends, at);
    masks[s]! |= bit(atom);
    if (bit(atom) & SOURCES && !ownOutput(body, at, match, self, meter)) moved[s]! |= bit(atom);
    readings[part]!.atoms |= bit(atom);
    const feature = ATOM_FEATURE[atom];
    if (feature && !(parts[part]!.inSchema && atom === Atom.SafetyOff)) note(part, feature, match);
  };
  for (const group of GROUPS) {
    for (const m of meter.read(body).matchAll(group.re)) {
      // By its last character: a match may begin on the line break that ends the part before.
      const part = partAt(m.index + m[0].length - 1);
      if (group.data && parts[part]!.value) continue;
      const groups = m.groups ?? {};
      for (const [name, atom] of group.atoms) {
        const text = groups[name];
        if (text === undefined) continue;
        if (atom === Atom.OtherTools && groups.role !== undefined) {
          // "the email tool" names a role; "the search tool" in the search tool's own text is itself.
          const role = groups.role.toLowerCase();
          if (NOT_A_ROLE.has(role) || self.has(role) || nameWords(role).some((w) => self.has(w))) break;
        }
        // "Do not include API keys" forbids what an attack asks for: a negated verb moves nothing.
        if (atom === Atom.Move && NEGATED_VERB.test(body.slice(Math.max(0, m.index - 20), m.index))) break;
        // "cannot bypass security" documents a guard; it does not ask to lift one.
        if (
          atom === Atom.SafetyOff &&
          NEGATED_BEFORE.test(
            body.slice(Math.max(ends[sentenceOf(ends, m.index) - 1] ?? 0, m.index - 60), m.index),
          )
        )
          break;
        if (atom === Atom.NamedTool) {
          // The pattern is case-blind, so "camelCase" matched any word: only a distinctive name is a tool's.
          const named = groups.toolName ?? groups.quotedTool ?? groups.dottedTool ?? '';
          if (named === ownName || !distinctiveName(named)) break;
        }
        mark(part, atom, m.index, text);
        break;
      }
    }
  }
  if (catalog) {
    // A name counts only as a whole run of word characters and dashes: the body's runs are looked up in the
    // catalog's names, linear in the text.
    for (const m of meter.read(body).matchAll(/[\w-]{5,80}/g)) {
      if (m[0] === ownName) continue;
      const servers = catalog.get(m[0]);
      if (servers && [...servers].some((s) => s !== undefined && s !== server))
        mark(partAt(m.index), Atom.CatalogTool, m.index, m[0]);
    }
  }
  // Claims over the other tools, and command shapes: one pass of each over the body.
  const another = (name: string) => {
    if (name === ownName || ownNames.has(name) || !distinctiveName(name)) return false;
    const servers = catalog?.get(name);
    // A sibling on the same server is documentation ("search_v1 is deprecated"); an unknown name is a claim all the same.
    return !servers || [...servers].some((s) => s !== server);
  };
  const claims = toolClaims(body, meter);
  const demanded = new Map<number, boolean>();
  for (const c of claims.scopes) {
    const i = sentenceOf(ends, c.at);
    if (!demanded.has(i)) demanded.set(i, demands(meter.read(sentence(i))));
    if (demanded.get(i)) note(partAt(c.at + c.text.length - 1), 'tool-prerequisite', sentence(i));
  }
  for (const c of claims.replacements) {
    if (c.tool !== undefined && !another(c.tool)) continue;
    if (c.role !== undefined && (NOT_A_ROLE.has(c.role) || self.has(c.role) || c.role === 'tool')) continue;
    note(partAt(c.at + c.text.length - 1), 'tool-replacement', sentence(sentenceOf(ends, c.at)));
  }
  for (const c of commandShapes(body, meter))
    if (c.always || !shellPurpose) note(partAt(c.at + c.text.length - 1), 'run-command', c.text);

  // Two things in one sentence.
  for (let i = 0; i < masks.length; i++) {
    const mask = masks[i]!;
    if (mask === 0) continue;
    const has = (bits: number) => (mask & bits) !== 0;
    const part = partAt(i === 0 ? 0 : ends[i - 1]!);
    const say = (feature: EvidenceFeature) => note(part, feature, sentence(i));
    if (has(bit(Atom.Move)) && has(bit(Atom.Sink))) say('send-to');
    const sources = moved[i]!;
    if (sources & SOURCES && has(bit(Atom.Move))) say('source-transfer');
    // Sensitive material handed to another server's tool is moved, whatever the verb.
    if (sources & SOURCES && has(bit(Atom.CatalogTool))) say('source-transfer');
    if (sources & bit(Atom.Private) && has(bit(Atom.Read)) && has(bit(Atom.Move) | bit(Atom.Sink)))
      say('source-transfer');
    if (has(bit(Atom.Ordering)) && has(TOOL_REFS)) say('ordered-tool-use');
    if (parts[part]!.inSchema && has(bit(Atom.SafetyOff)) && has(ORDERS | bit(Atom.Override)))
      say('safety-off');
    if (has(ORDERS | bit(Atom.Modal)) && has(bit(Atom.OtherTools) | bit(Atom.CatalogTool)))
      say('directs-other-tools');
    if (has(bit(Atom.OtherTools) | bit(Atom.CatalogTool)) && has(bit(Atom.Negative) | bit(Atom.Deprecation)))
      say('disparages-tools');
  }
  return readings;
}

/** A preposition that makes what follows the place something goes ("in the password", "into a token"). */
const PLACE_BEFORE =
  /\b(?:in|into|inside|within|for|to|of)\s{1,3}(?:(?:the|a|an|each|every|this|that|its|your|their|generated|new|resulting|final|output|random|created)\s{1,3}){0,3}$/i;

/**
 * Whether a sensitive word at `at` is the tool's own output rather than a source: the tool's name says it makes or
 * handles that thing (`generate_password`, `create_token`) and the word is where something goes ("in the password")
 * or what is measured ("length of the password"). Moving a credential needs a credential being read or sent; a
 * parameter that shapes what the tool makes moves nothing.
 */
function ownOutput(
  body: string,
  at: number,
  match: string,
  self: ReadonlySet<string>,
  meter: ScanMeter,
): boolean {
  const words = nameWords(match).map(stem);
  if (!words.some((w) => self.has(w) || self.has(`${w}s`))) return false;
  return PLACE_BEFORE.test(meter.read(body.slice(Math.max(0, at - 40), at)));
}

/** A plural's `s` dropped, so `passwords` and `password` compare equal. */
function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

// ---------------------------------------------------------------------------------------------------------
// The definition as a whole

/** Words a tool's purpose uses when asking for each kind of thing is its job. */
const PURPOSE_WORDS: Readonly<
  Record<'credential' | 'private' | 'context' | 'shell' | 'send' | 'tools' | 'model' | 'carrier', RegExp>
> = {
  credential:
    /\b(?:auth\w*|login|log in|sign\w*|token|tokens|keys?|credential\w*|secret\w*|password\w*|account\w*|oauth|session\w*|vault|iam|sts|kms|ssh|passkey|identity|user|users|connect\w*|database|db|sql|cookie\w*|env|environment|config\w*)\b/i,
  private:
    /\b(?:files?|director(?:y|ies)|folders?|paths?|filesystem|fs|disk|documents?|read\w*|ssh|config\w*|system|env|environment|home|contacts?|data|backup|sync|storage|upload|download|git|repo\w*|code|project|workspace)\b/i,
  context:
    /\b(?:chat\w*|conversation\w*|messages?|summar\w*|context|memory|memories|history|transcript\w*|assistant|thread\w*|thinking|thoughts?|reasoning|notes?|session|feedback|log\w*)\b/i,
  shell:
    /\b(?:command\w*|shell|exec\w*|terminal|run\w*|process\w*|scripts?|bash|cli|kubectl|docker|system|os|computer|console|install\w*|package|npm|pip|code|python|deploy\w*|ssh|server|sandbox|container\w*|job|task|build|compile|test|lint|git)\b/i,
  send: /\b(?:send\w*|e-?mail\w*|mail|post\w*|http\w*|webhooks?|upload\w*|notif\w*|messag\w*|slack|publish\w*|shar\w*|sync\w*|requests?|fetch\w*|api|url|web|crawl\w*|scrap\w*|browser|network|export\w*|report\w*|save|write|file|files|log\w*|store|storage|bucket|s3|queue|topic|stream|event\w*|sns|sqs|push|invite|channel|comment\w*|issue\w*|pull|ticket)\b/i,
  tools:
    /\b(?:workflow\w*|orchestrat\w*|agents?|router|routing|plan\w*|tools?|pipeline|chain\w*|dispatch\w*|proxy|gateway|delegat\w*|thinking|sequential)\b/i,
  model:
    /\b(?:models?|llms?|ai|generat\w*|completion\w*|embedding\w*|bedrock|sagemaker|inference|ml|prompt\w*|chat\w*|assistant|research\w*|analy[sz]\w*|summar\w*|answer\w*|agents?|reason\w*)\b/i,
  carrier: /\b(?:notes?|memo\w*|annotat\w*|comments?|journal|diary|feedback)\b/i,
};

const PARAM_NAME_CATEGORY: ReadonlyArray<[RegExp, keyof typeof PURPOSE_WORDS]> = [
  [
    /^(?:conversation|conversation[_-]?history|chat[_-]?history|transcript|system[_-]?prompt|previous[_-]?messages|prior[_-]?messages|full[_-]?context|all[_-]?messages|user[_-]?messages|chat[_-]?log|conversation[_-]?context)$/i,
    'context',
  ],
  [
    /^(?:model|model[_-]?name|model[_-]?id|llm|ai[_-]?model|assistant[_-]?name|assistant[_-]?model)$/i,
    'model',
  ],
  [
    /^(?:side[_-]?note|sidenote|secret[_-]?note|hidden[_-]?note|debug[_-]?info|extra[_-]?data|metadata[_-]?dump)$/i,
    'carrier',
  ],
  [/^(?:file[_-]?contents?|ssh|ssh[_-]?config|home[_-]?dir|user[_-]?files|files[_-]?content)$/i, 'private'],
];

/**
 * A purpose that is running commands, for command shapes: narrower than PURPOSE_WORDS.shell, whose `server`, `code`
 * or `system` half the servers' names carry.
 */
const SHELL_PURPOSE =
  /\b(?:commands?|shell|exec\w*|terminal|bash|zsh|powershell|cli|console|scripts?|sandbox|containers?|docker|kubectl|ssh|build|clean\w*|install\w*|deploy\w*|processes)\b/i;

/** Words of a parameter's name that make it a pointer to a file, not its contents. */
const PATH_WORDS = new Set(['path', 'file', 'filename', 'dir', 'directory', 'location', 'filepath']);

const CLAIM_NAME_WORDS = new Set([
  'best',
  'ultimate',
  'official',
  'premium',
  'verified',
  'trusted',
  'certified',
  'genuine',
  'authentic',
  'legit',
  'superior',
  'perfect',
  'greatest',
]);

/** Verbs of a tool's name that write or that destroy, against its read-only and destructive hints. */
const WRITE_VERBS = new Set([
  'create',
  'update',
  'write',
  'modify',
  'delete',
  'remove',
  'drop',
  'insert',
  'put',
  'post',
  'send',
  'set',
  'edit',
  'move',
  'rename',
  'upload',
  'deploy',
  'install',
  'exec',
  'execute',
  'run',
  'kill',
  'terminate',
  'overwrite',
  'purge',
  'destroy',
]);
const DESTRUCTIVE_VERBS = new Set([
  'delete',
  'remove',
  'drop',
  'kill',
  'terminate',
  'overwrite',
  'purge',
  'destroy',
  'exec',
  'execute',
  'run',
  'shell',
  'command',
  'wipe',
  'format',
]);
const EXEC_WORDS =
  /\b(?:exec\w*|run|runs|running|command\w*|shell|delete\w*|remov\w*|drop\w*|writ\w*|modif\w*|kill\w*|terminat\w*|install\w*|overwrit\w*|eval\w*)\b/i;
const READ_ONLY_SAID =
  /\b(?:read[\s-]?only|does not (?:modify|change|write)|no side[\s-]effects|without (?:modifying|changing))\b/i;
const SAFE_TITLE = /\b(?:safe|secure|harmless|read[\s-]?only|trusted|sandboxed|verified)\b/i;

/** Letters of more than one of Latin, Cyrillic and Greek in one name: a homoglyph can pass for another tool. */
function mixedScripts(name: string): boolean {
  const latin = /\p{Script=Latin}/u.test(name);
  const cyrillic = /\p{Script=Cyrillic}/u.test(name);
  const greek = /\p{Script=Greek}/u.test(name);
  return Number(latin) + Number(cyrillic) + Number(greek) > 1 || new RegExp(INVISIBLE_SOURCE, 'u').test(name);
}

/** The parameters of a schema (or a prompt's arguments): names with the path of their description. Bounded. */
function parametersOf(
  schema: unknown,
  root: string,
): Array<{ name: string; path: string; description: string }> {
  const out: Array<{ name: string; path: string; description: string }> = [];
  if (Array.isArray(schema)) {
    for (let i = 0; i < schema.length && out.length < MAX_PARAMS; i++) {
      const arg = schema[i] as { name?: unknown; description?: unknown } | null;
      if (arg && typeof arg.name === 'string')
        out.push({
          name: arg.name,
          path: `${root}[${i}]`,
          description: typeof arg.description === 'string' ? arg.description : '',
        });
    }
    return out;
  }
  // Breadth first over `properties`, with an explicit queue: a hostile schema nests as deep as it likes.
  const queue: Array<{ node: unknown; path: string }> = [{ node: schema, path: root }];
  for (let q = 0; q < queue.length && out.length < MAX_PARAMS && q < MAX_PARAMS * 4; q++) {
    const { node, path } = queue[q]!;
    if (!node || typeof node !== 'object') continue;
    const record = node as Record<string, unknown>;
    for (const key of ['items', 'additionalProperties']) {
      if (record[key] && typeof record[key] === 'object')
        queue.push({ node: record[key], path: `${path}.${key}` });
    }
    const properties = record.properties;
    if (!properties || typeof properties !== 'object' || Array.isArray(properties)) continue;
    for (const [name, value] of Object.entries(properties as Record<string, unknown>)) {
      if (out.length >= MAX_PARAMS) break;
      const description =
        value &&
        typeof value === 'object' &&
        typeof (value as { description?: unknown }).description === 'string'
          ? (value as { description: string }).description
          : '';
      out.push({ name, path: `${path}.properties.${name}`, description });
      queue.push({ node: value, path: `${path}.properties.${name}` });
    }
  }
  return out;
}

/** The strings of `annotations` (a title, hints given as text) with their paths; hints are read apart. */
function annotationTexts(annotations: unknown): Array<{ path: string; text: string }> {
  if (!annotations || typeof annotations !== 'object' || Array.isArray(annotations)) return [];
  const out: Array<{ path: string; text: string }> = [];
  for (const [key, value] of Object.entries(annotations as Record<string, unknown>).slice(0, 50))
    if (typeof value === 'string') out.push({ path: `annotations.${key}`, text: value });
  return out;
}

/**
 * The evidence of one definition: every text it shows the model (name, title, description, each parameter's name
 * and texts, enums, defaults and examples, annotations, output schema, a prompt's arguments), read within
 * `options.budget` characters in that order, plus what the definition says as a whole (a parameter or a request
 * outside the tool's purpose, a name that claims or impersonates, annotations that contradict the text).
 */
export function collectEvidence(input: EvidenceInput, options: EvidenceOptions): DefinitionEvidence {
  const { meter } = options;
  let budget = Math.max(0, options.budget);
  const self = new Set([...nameWords(input.name), ...nameWords(input.server)]);
  const catalog = options.knownTools?.length ? indexKnownTools(options.knownTools) : undefined;
  const signals: Signal[] = [];
  const features = new Set<EvidenceFeature>();
  const perFeature = new Map<EvidenceFeature, number>();
  const raise = (feature: EvidenceFeature, field: string, match: string) => {
    features.add(feature);
    const count = perFeature.get(feature) ?? 0;
    if (count >= MAX_SIGNALS_PER_FEATURE) return;
    perFeature.set(feature, count + 1);
    signals.push({ feature, field, match });
  };

  const texts: Array<{ field: string; text: string }> = [];
  if (input.description) texts.push({ field: 'description', text: input.description });
  if (input.title) texts.push({ field: 'title', text: input.title });
  for (const t of annotationTexts(input.annotations)) texts.push({ field: t.path, text: t.text });
  const inputTexts = schemaTexts(input.inputSchema).texts;
  pushTexts(texts, inputTexts);
  if (input.outputSchema !== undefined)
    pushTexts(texts, schemaTexts(input.outputSchema, 'outputSchema').texts);
  const params = [
    ...parametersOf(input.inputSchema, 'inputSchema'),
    ...parametersOf(input.arguments, 'arguments'),
  ];
  for (const p of params)
    if (p.path.startsWith('arguments') && p.description)
      texts.push({ field: `${p.path}.description`, text: p.description });

  // What the whole definition asks for, by kind, and where: for the purpose checks below.
  let asked = 0;
  const askedWhere = new Map<number, { field: string; match: string }>();
  const parts: Part[] = [];
  let body = '';
  for (const { field, text } of texts) {
    if (budget === 0) break;
    const cut = text.length > budget ? text.slice(0, budget) : text;
    budget -= cut.length;
    const normalized = normalize(meter.read(cut), 2 * cut.length + 4096);
    const inSchema = field !== 'description' && field !== 'title';
    parts.push({
      field,
      start: body.length,
      end: body.length + normalized.length,
      inSchema,
      value: VALUE_FIELD.test(field),
    });
    body += normalized + JOIN;
  }
  // The purpose: the name, the title, the server and the description's first sentence (what the rest asks for
  // must not vouch for itself).
  const purpose = `${nameWords(input.name).join(' ')} ${input.title ?? ''} ${nameWords(input.server).join(' ')} ${firstSentence(input.description ?? '')}`;
  meter.read(purpose);
  const readings = parts.length
    ? readParts(
        body,
        parts,
        self,
        input.name,
        ownNamesOf(params, inputTexts),
        input.server,
        catalog,
        SHELL_PURPOSE.test(purpose),
        meter,
      )
    : [];
  parts.forEach(({ field, inSchema, value, start, end }, k) => {
    const reading = readings[k]!;
    // A value (default, enum, example, const) that is a sentence giving orders is an instruction where data belongs.
    const sentenceValue = value && (body.slice(start, end).match(/\S+/g)?.length ?? 0) >= 4;
    for (const [feature, matches] of reading.found) {
      for (const match of matches) raise(feature, field, match);
      if (sentenceValue && (VALUE_DIRECTIVES.has(feature) || SCHEMA_DIRECTIVES.has(feature)))
        raise('param-directive', field, matches[0]!);
      // A parameter's description that speaks to the model, or has it call a tool and paste what it returns: the
      // parameter is a channel for something other than its value.
      if (
        inSchema &&
        !value &&
        field.endsWith('.description') &&
        (feature === 'model-address' ||
          (feature === 'named-tool' && OUTPUT_MOVED.test(meter.read(body.slice(start, end)))))
      )
        raise('param-directive', field, matches[0]!);
      if ((sentenceValue && VALUE_DIRECTIVES.has(feature)) || (inSchema && SCHEMA_DIRECTIVES.has(feature)))
        raise('schema-directive', field, matches[0]!);
      const kind =
        feature === 'source-transfer'
          ? reading.atoms & bit(Atom.Credential)
            ? ASK_CREDENTIAL
            : reading.atoms & bit(Atom.Context)
              ? ASK_CONTEXT
              : ASK_PRIVATE
          : feature === 'shell-payload'
            ? ASK_SHELL
            : feature === 'send-to'
              ? ASK_SEND
              : feature === 'ordered-tool-use' || feature === 'directs-other-tools'
                ? ASK_TOOLS
                : 0;
      if (kind && !(asked & kind)) {
        asked |= kind;
        askedWhere.set(kind, { field, match: matches[0]! });
      }
    }
  });

  for (const [kind, category] of ASK_CATEGORIES) {
    if (!(asked & kind) || PURPOSE_WORDS[category].test(purpose)) continue;
    const where = askedWhere.get(kind)!;
    raise('name-mismatch', where.field, `${input.name}: ${ASK_WORDS[category]} (${where.match})`);
  }

  const what = `in a tool for "${clip(purpose.trim().slice(0, 80))}"`;
  for (const p of params) {
    meter.read(p.name);
    const category = PARAM_NAME_CATEGORY.find(([re]) => re.test(p.name))?.[1];
    if (category) {
      if (!PURPOSE_WORDS[category].test(purpose))
        raise('param-out-of-scope', p.path, `${p.name}: ${ASK_WORDS[category]} ${what}`);
      continue;
    }
    const words = nameWords(p.name);
    const concern = paramConcern(words, p.description, meter);
    if (!concern) continue;
    // A path to a dotenv file is a setting the tool reads, not a secret handed over.
    if (concern.system === 'env' && words.some((w) => PATH_WORDS.has(w))) continue;
    if (inScope(concern, purpose, PURPOSE_WORDS[concern.kind])) continue;
    const asks =
      concern.kind === 'credential'
        ? `asks for a ${concern.system ?? 'private'} secret`
        : concern.kind === 'tools'
          ? "asks for other tools' output"
          : ASK_WORDS[concern.kind];
    raise('param-out-of-scope', p.path, `${p.name}: ${asks} (${concern.match}) ${what}`);
  }

  const words = [...nameWords(input.name), ...nameWords(input.title ?? '')];
  const claim = words.find((w) => CLAIM_NAME_WORDS.has(w));
  if (claim)
    raise(
      'name-claim',
      words.indexOf(claim) < nameWords(input.name).length ? 'name' : 'title',
      `${input.name} (${claim})`,
    );
  if (mixedScripts(input.name)) raise('name-homoglyph', 'name', input.name);

  const hints =
    input.annotations && typeof input.annotations === 'object'
      ? (input.annotations as Record<string, unknown>)
      : {};
  // A hint is a claim: read-only on a tool whose name says it writes, not destructive on one whose name says it
  // deletes or runs things, or a title that calls it safe on a tool that runs commands.
  const verbs = nameWords(input.name);
  const opening = `${verbs.join(' ')} ${firstSentence(input.description ?? '')}`;
  meter.read(opening);
  // The verb of a name comes first, after at most a prefix (`delete_file`, `github_delete_repo`): a later word is
  // more often a noun (`monitor_run`, `list_commands`).
  const writes = verbs.slice(0, 2).find((w) => WRITE_VERBS.has(w));
  const destroys = verbs.slice(0, 2).find((w) => DESTRUCTIVE_VERBS.has(w));
  const title = String(hints.title ?? input.title ?? '');
  const runs = EXEC_WORDS.exec(opening);
  const lie =
    hints.readOnlyHint === true && writes
      ? `readOnlyHint: true on "${writes}"`
      : hints.destructiveHint === false && destroys
        ? `destructiveHint: false on "${destroys}"`
        : SAFE_TITLE.test(title) && runs && !READ_ONLY_SAID.test(opening)
          ? `title "${title}" on a tool that says "${runs[0]}"`
          : undefined;
  if (lie) raise('annotation-mismatch', 'annotations', lie);
  return { signals, features };
}

const ASK_CREDENTIAL = 1;
const ASK_CONTEXT = 2;
const ASK_PRIVATE = 4;
const ASK_SHELL = 8;
const ASK_SEND = 16;
const ASK_TOOLS = 32;
const ASK_CATEGORIES: ReadonlyArray<[number, keyof typeof PURPOSE_WORDS]> = [
  [ASK_CREDENTIAL, 'credential'],
  [ASK_CONTEXT, 'context'],
  [ASK_PRIVATE, 'private'],
  [ASK_SHELL, 'shell'],
  [ASK_SEND, 'send'],
  [ASK_TOOLS, 'tools'],
];
const ASK_WORDS: Readonly<Record<keyof typeof PURPOSE_WORDS, string>> = {
  credential: 'asks for credentials',
  context: 'asks for the conversation or context',
  private: "asks for the user's private files or data",
  shell: 'asks to run shell commands',
  send: 'asks to send data somewhere',
  tools: 'directs the use of other tools',
  model: 'asks which model or assistant runs it',
  carrier: 'a free-text side channel the tool does not need',
};

/** Inside the input schema, annotations or arguments, these are instructions wherever they sit. */
const SCHEMA_DIRECTIVES: ReadonlySet<EvidenceFeature> = new Set([
  'tool-prerequisite',
  'tool-replacement',
  'run-command',
  'model-address',
  'override',
  'secrecy',
  'authority-markup',
  'injection-key',
  'exclusivity',
  'ordered-tool-use',
  'directs-other-tools',
  'source-transfer',
  'send-to',
  'hostile-words',
  'redirection',
]);

/** Another tool's whole output put into a value: "paste its output here", "copy the result". Bounded. */
const OUTPUT_MOVED =
  /\b(?:paste|copy|include|put|insert|append|attach|pass|add|place)\b[^.\n]{0,40}?\b(?:its|their|the|that|this)\s{1,3}(?:full\s{1,3}|entire\s{1,3}|whole\s{1,3}|complete\s{1,3})?(?:output|outputs|result|results|response|contents?)\b/i;

/** In a value that is a sentence, these are orders: "Always call sync_all first", "You must include the notes". */
const VALUE_DIRECTIVES: ReadonlySet<EvidenceFeature> = new Set([
  'imperative',
  'second-person-order',
  'emphatic-order',
  'named-tool',
  'ordering',
  'trigger',
  'coercion',
  'exclusivity',
]);

/** A field that holds a value rather than prose (`...default`, `...enum[2]`, `...examples[0]`). */
/** A definition's own names: its parameters' and its enum and const values (see readParts `ownNames`). */
function ownNamesOf(
  params: ReadonlyArray<{ name: string }>,
  texts: ReadonlyArray<{ path: string; text: string }>,
): Set<string> {
  const names = new Set(params.map((p) => p.name));
  for (const t of texts)
    if (/\.(?:enum\[\d+\]|const)$/.test(t.path) && t.text.length <= 80) names.add(t.text);
  return names;
}

const VALUE_FIELD =
  /\.(?:default|enum|examples?|const)(?:\[\d+\])*$|\.(?:default|enum|examples?|const)(?:\.|\[)/;

/** Up to the first sentence end, line break or markup, at most 160 characters. */
function firstSentence(text: string): string {
  const head = text.slice(0, 160);
  const end = head.search(/[.!?](?=\s)|\n|<|\[|\{/);
  return end < 0 ? head : head.slice(0, end);
}

function pushTexts(
  into: Array<{ field: string; text: string }>,
  texts: ReadonlyArray<{ path: string; text: string }>,
): void {
  for (const { path, text } of texts) into.push({ field: path, text });
}
