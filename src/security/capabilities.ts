/**
 * Capability labels for the lethal-trifecta guard. A session that has read text someone else wrote
 * (`untrusted-input`), can reach the user's data (`private-data`) and can send data out (`egress`) is one
 * injected instruction away from exfiltration; removing any leg breaks the attack, so tack watches the legs.
 *
 * Labels come from three sources, and each label says which: the configuration (the user's word, replacing the
 * defaults for that tool), annotations of a server marked trusted, and conservative defaults read from the
 * tool's name, description and input schema. Defaults err towards labelling: a missing `egress` label lets an
 * exfiltration through, an extra one costs a question.
 */
export const CAPABILITIES = ['untrusted-input', 'private-data', 'egress', 'destructive'] as const;
/** A capability a tool can have; three of them together are the lethal trifecta. */
export type Capability = (typeof CAPABILITIES)[number];

/** `sandbox`: a leg an enforced sandbox rules out (see applySandbox); it never adds one. */
export type LabelSource = 'config' | 'annotation' | 'default' | 'sandbox';

/** A capability a tool has, where the label came from and why. */
export interface CapabilityLabel {
  capability: Capability;
  source: LabelSource;
  /** What gave the label: the config key, the annotation, the word or parameter that matched. */
  why: string;
}

export interface LabelledTool {
  name: string;
  description?: string | undefined;
  inputSchema?: unknown;
  annotations?:
    | {
        readOnlyHint?: boolean | undefined;
        destructiveHint?: boolean | undefined;
        openWorldHint?: boolean | undefined;
      }
    | undefined;
}

/** Capabilities the configuration gives a tool, and whether its server is trusted. */
export interface LabelOptions {
  /** The server is marked trusted: its annotations are believed. */
  trustedServer?: boolean;
  /** From the configuration; when given, these replace the defaults for this tool. */
  configured?: readonly Capability[];
}

/**
 * Name words: matched against the tool name split into words (`send_email` -> send, email). Private data is named
 * by its object (file, email, contact, secret, database, note), never by a verb: `read_doc` on a server's own
 * documentation reads nothing of the user's. `doc`/`docs`/`document` are left out for the same reason (a docs
 * server's pages as often as the user's documents); a path or file parameter, or the description, still tells.
 */
const NAME_WORDS: Record<Capability, RegExp> = {
  'untrusted-input':
    /^(fetch|browse|browser|scrape|crawl|web|url|http|download|rss|feed|inbox|email|emails|mail|issue|issues|comment|comments|message|messages|tweet|tweets|news|page|webpage|navigate|screenshot)$/,
  'private-data':
    /^(contact|contacts|addressbook|address|calendar|email|emails|mail|inbox|file|files|drive|notes|note|memory|secret|secrets|credential|credentials|password|passwords|db|database|query|sql|record|records|customer|customers|profile|account|accounts|history|photos|messages|env)$/,
  egress:
    /^(send|post|publish|upload|email|mail|sms|tweet|share|webhook|notify|message|reply|forward|submit|push|request|http|fetch|invite|transfer|pay|payment)$/,
  destructive:
    /^(delete|remove|rm|drop|destroy|purge|wipe|truncate|overwrite|kill|terminate|revoke|reset|erase|uninstall|unlink)$/,
};

const SEND_VERB = /^(send|post|publish|upload|reply|forward|share|notify|submit|tweet|invite|transfer|pay)$/;
const READ_VERB =
  /^(read|get|list|fetch|search|check|browse|view|show|load|query|find|watch|poll|receive|download)$/;
const PUBLISH_VERB = /^(create|add|open|update|edit|write|append)$/;
const PUBLIC_NOUN =
  /^(issue|issues|comment|comments|post|posts|pr|gist|page|pages|tweet|event|events|email|message|review|discussion|wiki)$/;

/** Description phrases, for what the name does not say. */
const DESCRIPTION: Record<Capability, RegExp> = {
  'untrusted-input':
    /\b(search(es)? the (web|internet)|web search)\b|\b(fetch(es)?|retrieves?|downloads?|scrapes?|browses?)\b[^.]{0,40}\b(url|web ?page|website|internet|page)s?\b|\b(reads?|lists?|gets?)\b[^.]{0,30}\b(emails?|inbox|issues?|comments?|messages|posts|tweets)\b/i,
  'private-data':
    /\b(contacts?|address book|calendar|inbox|private|personal|credentials?|passwords?|customer records?|medical|financial|api keys?)\b/i,
  egress:
    /\b(sends?|posts?|publish(es)?|uploads?|emails?|forwards?|shares?)\b[^.]{0,40}\b(to|recipient|address|url|channel|webhook|anyone|server|endpoint)\b/i,
  destructive: /\b(permanently|irreversibl[ey]|deletes?|destroys?|drops?|wipes?)\b/i,
};

/** Input-schema parameter names that give a capability away. */
const PARAMS: Partial<Record<Capability, RegExp>> = {
  'untrusted-input': /^(url|uri|href|link|page_url|webpage)$/i,
  // Where the user's files and records are addressed: a path into the disk, a file, a document's id, raw SQL.
  'private-data':
    /^(path|paths|file|files|file_?path|file_?name|filename|directory|dir|folder|sql|document_?id|doc_?id|file_?id)$/i,
  egress:
    /^(url|uri|href|endpoint|webhook|webhook_url|to|recipient|recipients|cc|bcc|channel|email|email_address|phone)$/i,
};

/** The tool's labels with their sources; config replaces, trusted annotations and defaults add. */
export function labelTool(tool: LabelledTool, options: LabelOptions = {}): CapabilityLabel[] {
  if (options.configured)
    return [...new Set(options.configured)].map((capability) => ({
      capability,
      source: 'config' as const,
      why: 'tack.json capabilities',
    }));
  const labels = new Map<Capability, CapabilityLabel>();
  const add = (capability: Capability, source: LabelSource, why: string) => {
    if (!labels.has(capability)) labels.set(capability, { capability, source, why });
  };
  const hints = tool.annotations ?? {};
  if (options.trustedServer) {
    if (hints.destructiveHint === true && hints.readOnlyHint !== true)
      add('destructive', 'annotation', 'destructiveHint');
    if (hints.openWorldHint === true) add('untrusted-input', 'annotation', 'openWorldHint');
    // A trusted read-only, closed-world tool sends nothing out: no name-based egress guess overrides that.
    if (hints.readOnlyHint === true && hints.openWorldHint === false) {
      for (const capability of ['private-data'] as const) defaults(tool, capability, add);
      return [...labels.values()];
    }
  }
  for (const capability of CAPABILITIES) defaults(tool, capability, add);
  return [...labels.values()];
}

function defaults(
  tool: LabelledTool,
  capability: Capability,
  add: (capability: Capability, source: LabelSource, why: string) => void,
): void {
  const why = defaultReason(tool, capability);
  if (why) add(capability, 'default', why);
}

function defaultReason(tool: LabelledTool, capability: Capability): string | undefined {
  const words = nameWords(tool.name);
  // send_email reads no email: nouns speak of reading only when no sending verb says otherwise.
  const sends =
    words.some((w) => SEND_VERB.test(w) || PUBLISH_VERB.test(w)) && !words.some((w) => READ_VERB.test(w));
  const reads = capability === 'untrusted-input' || capability === 'private-data';
  const word = sends && reads ? undefined : words.find((w) => NAME_WORDS[capability].test(w));
  if (word) return `name: ${word}`;
  // create_issue, add_comment, update_page: writing where others read is sending.
  if (capability === 'egress' && words.some((w) => PUBLISH_VERB.test(w))) {
    const noun = words.find((w) => PUBLIC_NOUN.test(w));
    if (noun) return `name: ${words.join('_')}`;
  }
  const phrase = tool.description ? DESCRIPTION[capability].exec(tool.description) : null;
  if (phrase) return `description: "${phrase[0]}"`;
  const params = PARAMS[capability];
  const param = params ? parameterNames(tool.inputSchema).find((p) => params.test(p)) : undefined;
  return param ? `parameter: ${param}` : undefined;
}

/** `sendEmail`, `send_email`, `send-email` -> send, email. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function parameterNames(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const properties = (schema as { properties?: unknown }).properties;
  return typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
}

/**
 * What an enforced sandbox guarantees about a server's process (sandbox/guarantees.ts computes it): facts the
 * kernel holds, where the labels are guesses.
 */
export interface SandboxFacts {
  /** No network at all: the process cannot send anything out itself. */
  noNetwork: boolean;
  /** The home folder and tack's folders are hidden and no rule binds a path in them (besides the workspace). */
  noPrivateFiles: boolean;
  /** In words, with the rule: `no network (network: false, profile read-only)`. */
  network: string;
  files: string;
}

export interface SandboxedLabels {
  labels: CapabilityLabel[];
  /** The legs the sandbox ruled out, each with source `sandbox` and the rule that rules it out. */
  ruledOut: CapabilityLabel[];
}

/**
 * The labels left once an enforced sandbox is taken into account. Without network the process has no egress of
 * its own; without network and without private files it has no private data to read either (a contacts API is
 * network, an address book a file). Only guesses and annotations give way: a label from tack.json is the user's
 * word (they may know the mail spool a server writes is sent by another program) and stays. `untrusted-input`
 * stays too: the workspace itself may hold text someone else wrote.
 */
export function applySandbox(
  labels: readonly CapabilityLabel[],
  facts: SandboxFacts | undefined,
): SandboxedLabels {
  if (!facts) return { labels: [...labels], ruledOut: [] };
  const ruledOut: CapabilityLabel[] = [];
  const kept = labels.filter((label) => {
    if (label.source === 'config') return true;
    const why =
      label.capability === 'egress' && facts.noNetwork
        ? facts.network
        : label.capability === 'private-data' && facts.noNetwork && facts.noPrivateFiles
          ? `${facts.files}; ${facts.network}`
          : undefined;
    if (why === undefined) return true;
    ruledOut.push({
      capability: label.capability,
      source: 'sandbox',
      why: `${why} (instead of ${label.source}: ${label.why})`,
    });
    return false;
  });
  return { labels: kept, ruledOut };
}

export function hasCapability(labels: readonly CapabilityLabel[], capability: Capability): boolean {
  return labels.some((l) => l.capability === capability);
}

/** Which legs of the trifecta a set of tools holds, with the tools holding each. */
export function trifectaLegs(
  tools: ReadonlyArray<{ name: string; labels: readonly CapabilityLabel[] }>,
): Record<'untrusted-input' | 'private-data' | 'egress', string[]> {
  const holders = (capability: Capability) =>
    tools.filter((t) => hasCapability(t.labels, capability)).map((t) => t.name);
  return {
    'untrusted-input': holders('untrusted-input'),
    'private-data': holders('private-data'),
    egress: holders('egress'),
  };
}
