/**
 * Secrets hygiene: what tack writes down (transcripts, server logs, the audit log, approval prompts) must not
 * carry the credentials it was given or that pass through it. Two kinds of secret are masked:
 *
 * - known values: handed to a `SecretMasker` when it is made (the `env` values and HTTP `headers` values of the
 *   configured servers, see `secretValuesOf`), masked wherever they appear;
 * - shapes: keys recognisable by their form (`sk-…`, `ghp_…`, `AKIA…`, JWTs, private key blocks, Bearer
 *   credentials, `password=…`), masked in any text, and values under secret-looking keys in JSON.
 *
 * Everything masked becomes `MASK` (`••••`). A key shape keeps its public prefix (`sk-proj-••••`, `ghp_••••`), so
 * a reader still sees which kind of key was there. Commit hashes, digests and other long hex or base64 runs are
 * not masked: they are everywhere in honest output and cannot be told from keys by their form.
 *
 * The key shapes are shared with the poisoning scanner (security/scan.ts), which reports them as findings.
 */

/** What replaces a secret. */
export const MASK = '••••';

export interface SecretShape {
  /** A stable name for the kind of key. */
  id: string;
  /** How a finding names it: "a GitHub token". */
  what: string;
  /** Global; matches the whole key. */
  re: RegExp;
  /** The public start of a match, kept when it is masked. */
  keep: RegExp;
  /**
   * The matches of `re`, the same ones, found in time linear in the text: for a shape whose pattern would take
   * quadratic time on a run of false starts (see `jwtMatches`). Use `shapeMatches`, which falls back to `re`.
   */
  find?: (text: string) => ShapeMatch[];
}

/** One match of a key shape: where it starts and what it is. */
export interface ShapeMatch {
  index: number;
  text: string;
}

/** The first line of a PEM private key. The masker masks the whole block (`PRIVATE_KEY_BLOCK_RE`). */
export const PRIVATE_KEY_RE = /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/g;

/** Keys recognisable by their form, most specific first (Stripe's `sk_live_` after the generic `sk-`). */
export const KEY_SHAPES: readonly SecretShape[] = [
  {
    id: 'sk',
    what: 'an API-key-shaped string (sk-...)',
    re: /\bsk-(?:ant-|proj-|live_|test_)?[A-Za-z0-9_-]{20,}/g,
    keep: /^sk-(?:ant-|proj-|live_|test_)?/,
  },
  {
    id: 'github',
    what: 'a GitHub token',
    re: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}/g,
    keep: /^(?:gh[pousr]_|github_pat_)/,
  },
  {
    id: 'aws',
    what: 'an AWS access key id',
    re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
    keep: /^(?:AKIA|ASIA)/,
  },
  { id: 'slack', what: 'a Slack token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, keep: /^xox[abposr]-/ },
  { id: 'google', what: 'a Google API key', re: /\bAIza[0-9A-Za-z_-]{35}\b/g, keep: /^AIza/ },
  { id: 'gitlab', what: 'a GitLab token', re: /\bglpat-[A-Za-z0-9_-]{20,}/g, keep: /^glpat-/ },
  {
    id: 'stripe',
    what: 'a Stripe key',
    re: /\b(?:sk|rk|pk)_live_[A-Za-z0-9]{20,}/g,
    keep: /^[srp]k_live_/,
  },
  { id: 'npm', what: 'an npm token', re: /\bnpm_[A-Za-z0-9]{36}\b/g, keep: /^npm_/ },
  {
    id: 'jwt',
    what: 'a JWT',
    re: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g,
    keep: /^eyJ/,
    find: jwtMatches,
  },
];

/** Every match of `shape` in `text`, leftmost first, as `text.matchAll(shape.re)` gives them. */
export function shapeMatches(shape: Pick<SecretShape, 're' | 'find'>, text: string): ShapeMatch[] {
  if (shape.find) return shape.find(text);
  return Array.from(text.matchAll(shape.re), (m) => ({ index: m.index, text: m[0] }));
}

const JWT_START_RE = /\beyJ/g;
const BASE64URL_RUN_RE = /[A-Za-z0-9_-]*/y;

/** Where the run of base64url characters from `from` ends. */
function base64urlRunEnd(text: string, from: number): number {
  BASE64URL_RUN_RE.lastIndex = from;
  BASE64URL_RUN_RE.exec(text);
  return BASE64URL_RUN_RE.lastIndex;
}

/**
 * The JWT shape's matches. Run as a regular expression, every `eyJ` after a `-` inside one long base64url run
 * (`eyJ-eyJ-eyJ-...`) starts an attempt that reads to the end of the run before it fails: quadratic, and
 * JavaScript has no atomic groups to stop it. But every start inside one run shares that run's end, and so the
 * rest of the token: when the first start of a run fails, so do all the later ones, and the search goes on after
 * the run. Each run is read a bounded number of times.
 */
function jwtMatches(text: string): ShapeMatch[] {
  const out: ShapeMatch[] = [];
  let pos = 0;
  for (;;) {
    JWT_START_RE.lastIndex = pos;
    const start = JWT_START_RE.exec(text);
    if (!start) return out;
    const header = base64urlRunEnd(text, start.index + 3);
    let end = -1;
    if (header - start.index - 3 >= 10 && text.startsWith('.eyJ', header)) {
      const payload = base64urlRunEnd(text, header + 4);
      if (payload - header - 4 >= 10 && text[payload] === '.') {
        const signature = base64urlRunEnd(text, payload + 1);
        if (signature - payload - 1 >= 10) end = signature;
      }
    }
    if (end >= 0) out.push({ index: start.index, text: text.slice(start.index, end) });
    pos = end >= 0 ? end : header;
  }
}

/** `text` with every match of `shape` replaced, as `text.replace(shape.re, replace)` does. */
function replaceShape(text: string, shape: SecretShape, replace: (match: string) => string): string {
  if (!shape.find) return text.replace(shape.re, replace);
  let out = '';
  let last = 0;
  for (const m of shape.find(text)) {
    out += text.slice(last, m.index) + replace(m.text);
    last = m.index + m.text.length;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * A whole private key block, header to footer (PGP's `PRIVATE KEY BLOCK` too). Without a footer the rest of the
 * text is the key: a log line may hold only the start of one.
 */
const PRIVATE_KEY_BLOCK_RE =
  /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:(-----END \1PRIVATE KEY\2-----)|$)/g;
const PRIVATE_KEY_END_RE = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/;

/** The password of `scheme://user:password@host`. */
const URL_PASSWORD_RE = /\b([a-z][a-z0-9+.-]{0,30}:\/\/[^\s:@/?#]{0,256}:)([^\s@/?#]{1,512})@/gi;

/** `Bearer <credential>` / `Basic <credential>` wherever they appear (headers quoted in errors, curl lines). */
const AUTH_SCHEME_RE = /\b(Bearer|Basic)(\s+)([A-Za-z0-9._~+/-]+=*)/gi;

const SECRET_WORDS =
  'password|passwd|passphrase|secret|secret[-_]?key|token|api[-_]?key|access[-_]?key|private[-_]?key|authorization|credentials?|cookie';
/** What may follow the word and still name the secret itself: `tokens`, `password_confirmation`, `secret_b64`. */
const SECRET_SUFFIX = `s?(?:[-_]?(?:value|confirm|confirmation|plain|raw|b64|base64|hex))?`;

/**
 * `key: value` / `key=value` / `"key": "value"` where the key names a secret. The key must end with one of the
 * words (`db_password`, `x-api-key`, `SERVICE_TOKEN`): a key that only starts with one (`secret-server:` in a log
 * prefix, `token_endpoint`) names something else. Keys are bounded in length so that a long run of word
 * characters cannot make the match quadratic.
 */
const KEY_VALUE_RE = new RegExp(
  String.raw`(?<![\w.-])(["']?)([\w.-]{0,40}?(?:${SECRET_WORDS})${SECRET_SUFFIX})\1(\s*[:=]\s*)(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|((?:(?:Bearer|Basic)\s+)?[^\s"',;&)}\]]+))`,
  'gi',
);

/** JSON keys whose string values are secrets: the same words at the end of the key, or `private`. */
const SECRET_KEY = new RegExp(`(?:${SECRET_WORDS}|private)${SECRET_SUFFIX}$`, 'i');
/**
 * Keys that end with a secret word but hold none: pagination cursors (`nextPageToken`), token counts
 * (`max_tokens`, `inputTokens`).
 */
const NOT_SECRET_KEY = /(?:page|next|prev|continuation|sync|cursor)[-_]?token|tokens$/i;

/** Whether a JSON key or a `key=value` key names a secret. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) && !NOT_SECRET_KEY.test(key);
}

/** Values a key-value pair carries that are not secrets even under a secret-looking key. */
const PLAIN_VALUE = /^(?:true|false|null|undefined|none|yes|no|required|optional|string|\d+(?:\.\d+)?)$/i;

/** Shorter known values are not masked: "1", "true" or "debug" would be masked in every sentence. */
export const DEFAULT_MIN_SECRET_LENGTH = 6;

export interface SecretMaskerOptions {
  /** Exact values to mask wherever they appear (an env value, a header value). */
  values?: Iterable<string>;
  /** Values shorter than this are ignored (default `DEFAULT_MIN_SECRET_LENGTH`). */
  minLength?: number;
}

/** Masks known secret values and key shapes in text and in JSON-like values. Immutable; cheap to share. */
export class SecretMasker {
  /** The known values, longest first. */
  readonly values: readonly string[];
  readonly #known: RegExp | undefined;

  constructor(options: SecretMaskerOptions = {}) {
    const min = options.minLength ?? DEFAULT_MIN_SECRET_LENGTH;
    const values = new Set<string>();
    for (const value of options.values ?? [])
      if (value.length >= min && !value.includes(MASK)) values.add(value);
    // Longest first: a value that contains another must be masked whole, not around the shorter one.
    this.values = [...values].sort((a, b) => b.length - a.length);
    this.#known =
      this.values.length > 0 ? new RegExp(this.values.map(escapeRegExp).join('|'), 'g') : undefined;
  }

  /** A masker that also masks `values`. */
  with(values: Iterable<string>, minLength?: number): SecretMasker {
    return new SecretMasker({
      values: [...this.values, ...values],
      ...(minLength !== undefined ? { minLength } : {}),
    });
  }

  /** `text` with every known value and key shape masked. */
  maskText(text: string): string {
    let out = text;
    // Known values first: a configured key that also has a key shape is masked whole.
    if (this.#known) out = out.replace(this.#known, MASK);
    if (out.includes('PRIVATE KEY')) {
      out = out.replace(
        PRIVATE_KEY_BLOCK_RE,
        (_m, kind: string, block: string | undefined, end: string | undefined) =>
          `-----BEGIN ${kind}PRIVATE KEY${block ?? ''}-----${MASK}${end ?? ''}`,
      );
    }
    for (const shape of KEY_SHAPES) {
      out = replaceShape(out, shape, (match) => `${shape.keep.exec(match)?.[0] ?? ''}${MASK}`);
    }
    if (out.includes('://'))
      out = out.replace(URL_PASSWORD_RE, (m, head: string, password: string) =>
        password === MASK ? m : `${head}${MASK}@`,
      );
    out = out.replace(AUTH_SCHEME_RE, (m, scheme: string, space: string, credential: string) =>
      looksLikeCredential(credential) ? `${scheme}${space}${MASK}` : m,
    );
    return out.replace(
      KEY_VALUE_RE,
      (
        m,
        quote: string,
        key: string,
        separator: string,
        double: string | undefined,
        single: string | undefined,
        bare: string | undefined,
      ) => {
        const value = double ?? single ?? bare ?? '';
        if (!isSecretKey(key) || value.includes(MASK) || value.length < 4 || PLAIN_VALUE.test(value))
          return m;
        const scheme = bare ? (/^(?:Bearer|Basic)\s+/i.exec(bare)?.[0] ?? '') : '';
        const shown =
          double !== undefined ? `"${MASK}"` : single !== undefined ? `'${MASK}'` : `${scheme}${MASK}`;
        return `${quote}${key}${quote}${separator}${shown}`;
      },
    );
  }

  /**
   * A copy of a JSON-like value with every string masked (`maskText`) and the string values of secret-looking keys
   * (`isSecretKey`) replaced by `MASK` whole. Arrays and plain objects are copied; anything else (binary data,
   * dates, class instances) is returned as it is. The input is never changed.
   */
  mask<T>(value: T): T {
    return this.#deep(value) as T;
  }

  #deep(value: unknown): unknown {
    if (typeof value === 'string') return this.maskText(value);
    if (Array.isArray(value)) return value.map((item) => this.#deep(item));
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      out[key] = typeof item === 'string' && item !== '' && isSecretKey(key) ? MASK : this.#deep(item);
    return out;
  }
}

/** Shapes only: for text no configuration is known for. */
export const SHAPE_MASKER = new SecretMasker();

/**
 * Arguments for an approval prompt: values under secret-looking keys masked whole, key shapes (and the known
 * values of `masker`) masked in every other string.
 */
export function maskSecrets(value: unknown, masker: SecretMasker = SHAPE_MASKER): unknown {
  return masker.mask(value);
}

/**
 * Masks a stream of lines (a server's stderr): like `maskText`, and a private key block spread over several lines
 * is masked as a whole (its body lines are left out).
 */
export class LineMasker {
  readonly #masker: SecretMasker;
  #inKey = false;

  constructor(masker: SecretMasker) {
    this.#masker = masker;
  }

  /** One line without its newline, masked; `undefined` for a line inside a private key block. */
  line(text: string): string | undefined {
    if (this.#inKey) {
      const end = PRIVATE_KEY_END_RE.exec(text);
      if (!end) return undefined;
      this.#inKey = false;
      return this.#masker.maskText(text.slice(end.index));
    }
    const masked = this.#masker.maskText(text);
    // A header whose footer is not on this line: the block goes on in the next lines.
    const begin = text.lastIndexOf('-----BEGIN ');
    if (begin >= 0 && /PRIVATE KEY/.test(text.slice(begin)) && !PRIVATE_KEY_END_RE.test(text.slice(begin)))
      this.#inKey = true;
    return masked;
  }

  /** What `line` would return for `text`, without taking it as seen (an unfinished line shown in a tail). */
  peek(text: string): string | undefined {
    return this.#inKey ? undefined : this.#masker.maskText(text);
  }

  /** Forget a block in progress (a new process starts writing). */
  reset(): void {
    this.#inKey = false;
  }
}

/** Words in a variable or header name that say its value is a credential. */
const SECRET_NAME = /key|token|secret|passw|passphrase|pwd|auth|credential|cookie|private|signature|dsn/i;

/** Whether an environment variable or header name looks like it holds a credential. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * The values of a server entry to treat as known secrets: `env` and `headers` values whose variable or header name
 * looks secret (`isSecretName`: `GITHUB_TOKEN`, `Authorization`, `X-Api-Key`) or which look like a credential
 * themselves (a key shape, or 16+ characters of letters and digits without spaces). Of a header with an auth
 * scheme, the credential alone too (`Bearer abc` gives `abc`); of a URL only its password, and the user name
 * when the name looks secret (a DSN's key).
 *
 * Paths, URLs, numbers, booleans and plain words under ordinary names are configuration, not secrets: masking
 * `/home/me/project`, `production` or `application/json` would rewrite every tool output that mentions them, and
 * a resumed session reads its transcript back. `namedOnly` keeps only secret-looking names (tack's own
 * environment, where random-looking ids abound).
 */
export function secretValuesOf(
  entry: {
    env?: Readonly<Record<string, string | undefined>> | undefined;
    headers?: Readonly<Record<string, string>> | undefined;
    /** An http entry's OAuth settings: a configured client secret is a secret whatever it looks like. */
    oauth?: false | { clientSecret?: string | undefined } | undefined;
  },
  options: { namedOnly?: boolean } = {},
): string[] {
  const out: string[] = [];
  const take = (name: string, value: string | undefined) => {
    if (value === undefined || value === '') return;
    const url = urlCredentials(value);
    if (url) {
      if (url.password) out.push(url.password);
      if (url.username && isSecretName(name)) out.push(url.username);
      return;
    }
    if (isPlainConfiguration(value)) return;
    if (isSecretName(name) || (!options.namedOnly && looksLikeSecretValue(value))) out.push(value);
  };
  for (const [name, value] of Object.entries(entry.headers ?? {})) {
    take(name, value);
    const credential = /^(?:Bearer|Basic|Token|Bot|Digest|ApiKey)\s+(\S.*)$/i.exec(value)?.[1];
    if (credential) take(name, credential);
  }
  for (const [name, value] of Object.entries(entry.env ?? {})) take(name, value);
  if (entry.oauth !== false && entry.oauth?.clientSecret) out.push(entry.oauth.clientSecret);
  return out;
}

function urlCredentials(value: string): { username: string; password: string } | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return undefined;
  try {
    const url = new URL(value);
    return { username: url.username, password: url.password };
  } catch {
    return undefined;
  }
}

function isPlainConfiguration(value: string): boolean {
  return (
    /^(?:\/|~\/|\.\.?\/|[A-Za-z]:[\\/])/.test(value) ||
    /^(?:true|false|yes|no|on|off|-?\d+(?:\.\d+)?)$/i.test(value)
  );
}

function looksLikeSecretValue(value: string): boolean {
  if (KEY_SHAPES.some((shape) => new RegExp(shape.re.source).test(value))) return true;
  return value.length >= 16 && !/\s/.test(value) && /[A-Za-z]/.test(value) && /\d/.test(value);
}

/** Random-looking enough to be a credential after `Bearer`/`Basic`, unlike "Bearer authentication". */
function looksLikeCredential(text: string): boolean {
  if (text.length < 8) return false;
  return /\d/.test(text) || /[a-z][A-Z]/.test(text) || (text.length >= 16 && /[._~+/=]/.test(text));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
