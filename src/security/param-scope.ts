/**
 * Schema-purpose coherence (evidence.ts `param-out-of-scope`): what a parameter asks for, read from its name's words
 * and its description, against what the tool says it does. A weather tool has no use for an SSH key, a calculator
 * none for the conversation so far, a translator none for the contents of ~/.aws/credentials: a parameter that asks
 * for secrets of another system, the conversation, the system prompt or other tools' output makes the model fill it
 * in, and the call carries it off. A tool's own credential (`api_key` of a weather API) and a parameter the purpose
 * covers (`private_key_path` of an SSH tool) are not out of scope.
 *
 * Words, not phrase lists for examples: a parameter's name is cut into words (`sshKey`, `ssh-key`, `SSH_KEY` read
 * alike) and matched against small sets of what each kind of thing is called; each pattern is bounded and runs once
 * per parameter.
 */

import type { ScanMeter } from './scan-linear.js';

export type ParamKind = 'credential' | 'context' | 'private' | 'tools';

export interface ParamConcern {
  kind: ParamKind;
  /** The system the thing belongs to (`ssh`, `aws`), when the name or description says. */
  system?: string | undefined;
  /** The words that raised it. */
  match: string;
}

/** Words that name a secret. */
const SECRET_WORDS = new Set([
  'key',
  'keys',
  'token',
  'tokens',
  'password',
  'passwords',
  'passwd',
  'passphrase',
  'secret',
  'secrets',
  'credential',
  'credentials',
  'creds',
  'pat',
  'cookie',
  'cookies',
  'apikey',
  'pin',
]);

/**
 * Systems a secret can belong to, each with the words of a purpose that would need it. A secret of one of these in a
 * tool whose purpose names none of its words belongs to another service.
 */
const SYSTEMS: Readonly<Record<string, RegExp>> = {
  ssh: /\b(?:ssh|sftp|scp|rsync|remote|hosts?|deploy\w*|git|machines?|vms?|instances?|cluster|terminal|shell|keys?)\b/i,
  private:
    /\b(?:ssh|sign\w*|crypt\w*|keys?|wallets?|cert\w*|tls|ssl|gpg|pgp|remote|hosts?|deploy\w*|git|jwt|vault)\b/i,
  gpg: /\b(?:gpg|pgp|sign\w*|crypt\w*|keys?|mail)\b/i,
  aws: /\b(?:aws|amazon|s3|ec2|lambda|cloud\w*|iam|bedrock|dynamo\w*|sts)\b/i,
  gcp: /\b(?:google|gcp|gcloud|cloud|bigquery|firebase)\b/i,
  google: /\b(?:google|gcp|gcloud|cloud|bigquery|gmail|drive|calendar|sheets|docs|youtube|maps|firebase)\b/i,
  azure: /\b(?:azure|microsoft|entra)\b/i,
  openai: /\b(?:openai|gpt\w*|llms?|models?|ai|chat\w*|embedding\w*|completion\w*)\b/i,
  anthropic: /\b(?:anthropic|claude|llms?|models?|ai)\b/i,
  github: /\b(?:github|git|repo\w*|gh)\b/i,
  gitlab: /\b(?:gitlab|git|repo\w*)\b/i,
  slack: /\bslack\b/i,
  stripe: /\b(?:stripe|payments?|billing|checkout)\b/i,
  email: /\b(?:e-?mail\w*|gmail|smtp|imap|mail\w*|inbox|outlook)\b/i,
  gmail: /\b(?:e-?mail\w*|gmail|google|mail\w*|inbox)\b/i,
  bank: /\b(?:bank\w*|payments?|financ\w*|transactions?|transfers?|accounts?|plaid)\b/i,
  wallet:
    /\b(?:wallets?|crypto\w*|blockchain|web3|ethereum|eth|bitcoin|btc|solana|sol|tokens?|defi|chain)\b/i,
  root: /\b(?:root|admin\w*|sudo|system|hosts?|users?|accounts?|iam)\b/i,
  admin: /\b(?:admin\w*|root|sudo|system|users?|accounts?|iam|manage\w*)\b/i,
  sudo: /\b(?:sudo|root|admin\w*|system|shell|terminal|hosts?)\b/i,
  db: /\b(?:db|databases?|sql\w*|postgres\w*|mysql|mongo\w*|redis|supabase|sqlite)\b/i,
  database: /\b(?:db|databases?|sql\w*|postgres\w*|mysql|mongo\w*|redis|supabase|sqlite)\b/i,
  kube: /\b(?:kube\w*|k8s|clusters?|deploy\w*|helm|pods?)\b/i,
  npm: /\b(?:npm|packages?|publish\w*|registry|node)\b/i,
  env: /\b(?:env|environment|config\w*|deploy\w*|projects?|workspace|dotenv)\b/i,
};
/** The purpose of a tool that reads files: any file it is pointed at is its job. */
const FILE_PURPOSE =
  /\b(?:files?|director(?:y|ies)|folders?|paths?|filesystem|fs|dotfiles?|config(?:uration)?s?)\b/i;

/** Credential files named in a parameter's description, and the system each belongs to. */
const CREDENTIAL_FILE =
  /(?<ssh>\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|\bknown_hosts\b)|(?<aws>\.aws\/|\baws_secret_access_key\b)|(?<kube>\.kube\/|\bkubeconfig\b)|(?<gpg>\.gnupg\b)|(?<github>\.git-credentials\b)|(?<npm>\.npmrc\b)|(?<env>(?<![\w.])\.env\b)|(?<private>\.netrc\b|\.pgpass\b|\.bash_history\b|\.zsh_history\b|\/etc\/(?:passwd|shadow|sudoers)\b|\bwallet\.dat\b|\bkeychain\b|\b(?:claude_desktop_config|mcp)\.json\b|\bcredentials\.json\b|\bprivate\s{1,3}keys?\b|\b(?:seed|recovery|mnemonic)\s{1,3}phrases?\b)/i;

/** The conversation, the model's instructions or other tools' output, asked for in a parameter's description. */
const CONTEXT_TEXT =
  /\b(?:conversation|chat|dialog(?:ue)?|discussion|session)\s{1,3}(?:so\s{1,3}far|history|log|transcript|context|summary|contents?)\b|\b(?:everything|all|what)\s{1,3}(?:that\s{1,3})?(?:(?:has\s{1,3}been|was|we(?:'ve|\s{1,3}have)?|the\s{1,3}user(?:\s{1,3}has)?|you(?:\s{1,3}have)?)\s{1,3})?(?:discussed|said|asked|written|typed|shared|mentioned)\s{1,3}(?:so\s{1,3}far|earlier|before|previously|in\s{1,3}(?:this|the)\s{1,3}(?:conversation|chat|session))\b|\b(?:previous|prior|earlier|past|recent|all)\s{1,3}(?:user\s{1,3})?(?:messages|turns|prompts|exchanges)\b|\b(?:system|developer)\s{1,3}(?:prompt|message|instructions)\b|\byour\s{1,3}(?:instructions|system\s{1,3}prompt|context\s{1,3}window)\b/i;
const TOOLS_TEXT =
  /\b(?:outputs?|results?|responses?|returns?)\s{1,3}(?:(?:returned|produced|given|obtained)\s{1,3})?(?:of|from|by)\s{1,3}(?:the\s{1,3})?(?:other|previous|prior|last|earlier|all|every|each)\s{1,3}(?:\w{1,20}\s{1,3})?(?:tools?|functions?|tool\s{1,3}calls?)\b|\b(?:other|previous)\s{1,3}tools?'?\s{1,3}(?:outputs?|results?|responses?)\b/i;

/** Words that, with `context`, still mean the conversation (`full_context`), not a setting (`context_lines`). */
const CONTEXT_WITH = new Set([
  'full',
  'user',
  'session',
  'llm',
  'ai',
  'agent',
  'model',
  'conversation',
  'chat',
  'entire',
  'whole',
  'complete',
  'current',
  'prior',
  'previous',
]);
const EARLIER = new Set([
  'previous',
  'prior',
  'earlier',
  'past',
  'recent',
  'all',
  'full',
  'entire',
  'whole',
  'last',
]);
const TURNS = new Set([
  'messages',
  'message',
  'prompts',
  'history',
  'turns',
  'chat',
  'conversation',
  'context',
  'exchanges',
  'queries',
]);

/** What a parameter's name asks for, by its words (already lower case, from `nameWords`). */
function byName(words: readonly string[]): ParamConcern | undefined {
  const has = (w: string) => words.includes(w);
  const joined = words.join('_');
  const secret = words.find((w) => SECRET_WORDS.has(w));
  const system = words.find((w) => w in SYSTEMS && w !== 'private' && w !== 'env');
  if (secret && system) return { kind: 'credential', system, match: joined };
  if (has('private') && (has('key') || has('keys') || has('pem')))
    return { kind: 'credential', system: 'private', match: joined };
  if (has('rsa') || has('ed25519') || has('ecdsa'))
    return { kind: 'credential', system: 'ssh', match: joined };
  if (has('mnemonic') || ((has('seed') || has('recovery')) && (has('phrase') || has('words'))))
    return { kind: 'credential', system: 'wallet', match: joined };
  if (has('conversation') || has('transcript') || has('chatlog') || (has('system') && has('prompt')))
    return { kind: 'context', match: joined };
  if (
    words.some((w) => EARLIER.has(w)) &&
    words.some((w) => TURNS.has(w) && w !== 'context' && w !== 'queries')
  )
    return { kind: 'context', match: joined };
  if (
    (has('chat') || has('message') || has('messages')) &&
    (has('history') || has('log') || has('summary') || has('context'))
  )
    return { kind: 'context', match: joined };
  if (has('context') && words.every((w) => w === 'context' || CONTEXT_WITH.has(w)))
    return { kind: 'context', match: joined };
  if (
    (has('tool') || has('tools') || has('other')) &&
    words.some((w) => /^(?:outputs?|results?|responses?|calls|log)$/.test(w))
  )
    return { kind: 'tools', match: joined };
  return undefined;
}

/** What a parameter asks for: by its name's words, else by what its description asks to be put in it. */
export function paramConcern(
  words: readonly string[],
  description: string,
  meter: ScanMeter,
): ParamConcern | undefined {
  const named = byName(words);
  if (named) return named;
  if (!description) return undefined;
  const text = meter.read(description.slice(0, 600));
  const file = CREDENTIAL_FILE.exec(text);
  if (file) {
    const system = Object.entries(file.groups ?? {}).find(([, v]) => v !== undefined)?.[0];
    return { kind: 'private', system, match: file[0] };
  }
  const context = CONTEXT_TEXT.exec(text);
  if (context) return { kind: 'context', match: context[0] };
  const tools = TOOLS_TEXT.exec(text);
  if (tools) return { kind: 'tools', match: tools[0] };
  return undefined;
}

/**
 * Whether the tool's purpose (its name, title, server and first sentence) covers what the parameter asks for: a
 * secret of a system the purpose names, a credential file for a tool that reads files, the conversation for a tool
 * about chats or memory. `general` is the purpose test of evidence.ts for the kind (credential, context, tools).
 */
export function inScope(concern: ParamConcern, purpose: string, general: RegExp): boolean {
  if (concern.kind === 'private')
    return (
      FILE_PURPOSE.test(purpose) || (concern.system !== undefined && SYSTEMS[concern.system]!.test(purpose))
    );
  if (concern.kind === 'credential') return SYSTEMS[concern.system ?? 'private']!.test(purpose);
  return general.test(purpose);
}
