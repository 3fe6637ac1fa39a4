import { TackError } from '../../errors.js';

/**
 * SQL text helpers for attested computations: a canonical form to compare "the SQL that ran" with "the SQL that
 * was sanctioned", and the binding of `@name` holes to a driver's placeholder style.
 *
 * Hand-written, and kept to a small tokenizer: no maintained library canonicalizes SQL across dialects for
 * equality (formatters re-indent one dialect, parsers reject the others), and what the attester needs is narrow:
 * forgive comments, whitespace and letter case, and nothing else.
 *
 * The tokenizer is conservative on purpose. Two texts canonicalize alike only when they have the same tokens,
 * and everything it cannot be sure is insignificant stays: string literals and quoted identifiers byte for byte,
 * operator characters as written runs (`<=` is not `< =`), parameter and variable names exactly.
 *
 * What it drops must be what every server drops, or a rewrite could hide code in the difference. Whitespace is
 * the six ASCII characters PostgreSQL and SQLite skip (both read a no-break space as part of an identifier).
 * Where the dialects disagree about a comment, the text is refused rather than guessed at: PostgreSQL nests block
 * comments and SQLite does not (`/* /* *\/ x -- *\/` runs `x` on one and not the other), and PostgreSQL ends a
 * line comment at a lone carriage return while SQLite reads on to the line feed.
 */

export type SqlTokenKind =
  /** Unquoted identifier or keyword: case-insensitive in SQL, so compared uppercased. */
  | 'word'
  | 'number'
  /** '...' (with '' escapes), E'...' (backslash escapes), X'..', B'..', N'..', U&'..', $tag$...$tag$. */
  | 'string'
  /** "..." and `...` identifiers (BigQuery's "..." strings too): exact. */
  | 'quoted'
  /** `@name`: a hole of the computation. */
  | 'parameter'
  /** `@@name`, `$name`, `:name`: someone else's variables, kept exact. */
  | 'variable'
  /** `$1`: a driver's positional placeholder. */
  | 'positional'
  | 'punctuation';

export interface SqlToken {
  kind: SqlTokenKind;
  text: string;
  /** Offsets in the source text, end exclusive. */
  start: number;
  end: number;
}

const OPERATOR_CHARS = '+-*/<>=~!@#%^&|?';
const isSpace = (c: string) => c === ' ' || (c >= '\t' && c <= '\r');
const isIdentStart = (c: string | undefined) => c !== undefined && (/[A-Za-z_]/.test(c) || c > '\u007f');
const isIdentPart = (c: string | undefined) => c !== undefined && (/[A-Za-z0-9_$]/.test(c) || c > '\u007f');
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** The significant tokens of `sql`: comments and whitespace are dropped, positions kept for rewriting. */
export function tokenizeSql(sql: string): SqlToken[] {
  const tokens: SqlToken[] = [];
  const n = sql.length;
  let i = 0;
  const push = (kind: SqlTokenKind, start: number, end: number) =>
    tokens.push({ kind, text: sql.slice(start, end), start, end });

  /** Index after a quoted run opened at `open` (the quote char), with the quote doubled as its escape. */
  const quoted = (open: number, quote: string, backslash = false): number => {
    let j = open + 1;
    while (j < n) {
      const c = sql[j]!;
      if (backslash && c === '\\') j += 2;
      else if (c === quote) {
        if (sql[j + 1] === quote) j += 2;
        else return j + 1;
      } else j++;
    }
    // Unterminated: the rest is the literal; the server will reject it, and it must not turn into code here.
    return n;
  };

  /** Pushes a token from `i` through the identifier characters from `from`, and moves past it. */
  const identifier = (kind: SqlTokenKind, from: number): void => {
    let j = from;
    while (isIdentPart(sql[j])) j++;
    push(kind, i, j);
    i = j;
  };

  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === '-' && next === '-') {
      const eol = sql.indexOf('\n', i);
      const end = eol === -1 ? n : eol;
      const cr = sql.indexOf('\r', i);
      if (cr !== -1 && cr < end && cr !== end - 1)
        throw ambiguous('a line comment holds a carriage return that does not end the line');
      i = end;
      continue;
    }
    if (c === '/' && next === '*') {
      const close = sql.indexOf('*/', i + 2);
      const inner = sql.indexOf('/*', i + 2);
      if (inner !== -1 && (close === -1 || inner < close))
        throw ambiguous('a block comment holds another /* (PostgreSQL nests comments, SQLite does not)');
      i = close === -1 ? n : close + 2;
      continue;
    }
    if (c === "'") {
      const end = quoted(i, "'");
      push('string', i, end);
      i = end;
      continue;
    }
    // Prefixed literals are one token: `X'0A'` (a blob) and `X '0A'` (a column and an alias) are different SQL.
    const prefix = /^(?:[EeXxBbNn]|[Uu]&)(?=['"])/.exec(sql.slice(i, i + 3));
    if (prefix && !isIdentPart(sql[i - 1])) {
      const quoteAt = i + prefix[0].length;
      const quote = sql[quoteAt]!;
      if (quote === "'" || /^[Uu]&$/.test(prefix[0])) {
        const end = quoted(quoteAt, quote, /^[Ee]$/.test(prefix[0]));
        push(quote === "'" ? 'string' : 'quoted', i, end);
        i = end;
        continue;
      }
    }
    if (c === '"' || c === '`') {
      const end = quoted(i, c);
      push('quoted', i, end);
      i = end;
      continue;
    }
    if (c === '$') {
      if (isDigit(next)) {
        let j = i + 1;
        while (isDigit(sql[j])) j++;
        push('positional', i, j);
        i = j;
        continue;
      }
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        const end = close === -1 ? n : close + tag[0].length;
        push('string', i, end);
        i = end;
        continue;
      }
      if (isIdentStart(next)) {
        identifier('variable', i + 1);
        continue;
      }
    }
    if (c === '@') {
      if (next === '@' && isIdentStart(sql[i + 2])) {
        identifier('variable', i + 2);
        continue;
      }
      if (next !== undefined && /[A-Za-z_]/.test(next)) {
        let j = i + 1;
        while (j < n && /[A-Za-z0-9_]/.test(sql[j]!)) j++;
        push('parameter', i, j);
        i = j;
        continue;
      }
    }
    if (c === ':') {
      if (next === ':' || next === '=') {
        push('punctuation', i, i + 2);
        i += 2;
        continue;
      }
      if (isIdentStart(next)) {
        identifier('variable', i + 1);
        continue;
      }
      push('punctuation', i, i + 1);
      i++;
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(next))) {
      const m = /^(?:0[xX][0-9A-Fa-f_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)/.exec(
        sql.slice(i),
      )!;
      push('number', i, i + m[0].length);
      i += m[0].length;
      continue;
    }
    if (isIdentStart(c)) {
      identifier('word', i + 1);
      continue;
    }
    if (OPERATOR_CHARS.includes(c)) {
      // A run of operator characters is one token, as PostgreSQL reads it; a comment opener or an `@name`
      // hole ends the run.
      let j = i + 1;
      while (
        j < n &&
        OPERATOR_CHARS.includes(sql[j]!) &&
        !(sql[j] === '-' && sql[j + 1] === '-') &&
        !(sql[j] === '/' && sql[j + 1] === '*') &&
        !(sql[j] === '@' && sql[j + 1] !== undefined && /[A-Za-z_@]/.test(sql[j + 1]!))
      )
        j++;
      push('punctuation', i, j);
      i = j;
      continue;
    }
    push('punctuation', i, i + 1);
    i++;
  }
  return tokens;
}

function ambiguous(what: string): TackError {
  return new TackError(
    'COMPUTATION_FAILED',
    `the SQL cannot be compared safely: ${what}, and SQL servers disagree about where such a comment ends`,
    { hint: 'Rewrite that comment in the computation (a plain -- line or a /* ... */ without /* inside).' },
  );
}

/** A token as the canonical form writes it: unquoted words and numbers in ASCII upper case, the rest exact. */
function canonicalText(token: SqlToken): string {
  // ASCII only: PostgreSQL and SQLite fold ASCII letters; Unicode upper-casing can even change lengths (ß → SS).
  return token.kind === 'word' || token.kind === 'number'
    ? token.text.replace(/[a-z]+/g, (s) => s.toUpperCase())
    : token.text;
}

/** The canonical tokens of `sql`, trailing `;` dropped. */
export function canonicalSqlTokens(sql: string): string[] {
  const tokens = tokenizeSql(sql).map(canonicalText);
  while (tokens.at(-1) === ';') tokens.pop();
  return tokens;
}

/**
 * `sql` with comments stripped, whitespace collapsed, everything outside string literals and quoted identifiers
 * in upper case (simpler than telling keywords from identifiers, and as sound: unquoted identifiers are
 * case-insensitive too; only BigQuery's dataset and table names are not), and a trailing `;` dropped. Exactly
 * one space separates every two tokens, around punctuation too: `SUM(x)` and `SUM ( x )` both become
 * `SUM ( X )`, and since no token is written without its boundaries, two canonical texts are equal exactly when
 * their token lists are (`1.5` and `1 . 5` stay apart).
 */
export function canonicalSql(sql: string): string {
  return canonicalSqlTokens(sql).join(' ');
}

/** True when `sql` holds more than one statement (a `;` followed by anything but more `;`). */
export function hasMultipleStatements(sql: string): boolean {
  const tokens = canonicalSqlTokens(sql);
  return tokens.includes(';');
}

/**
 * How a driver takes bind values: `named` keeps `@name` (better-sqlite3 and BigQuery bind it natively);
 * `positional-dollar` numbers each distinct name `$1, $2, ...` in order of first appearance (PostgreSQL).
 */
export type BindStyle = 'named' | 'positional-dollar';

/**
 * How each runtime binds, known to the attester on its own: it re-derives the executed text from the sanctioned
 * one without asking the executor that ran it.
 */
export const RUNTIME_BIND_STYLES: Readonly<Record<string, BindStyle>> = {
  sqlite: 'named',
  postgres: 'positional-dollar',
  postgresql: 'positional-dollar',
  bigquery: 'named',
};

export function bindStyleFor(runtime: string): BindStyle | undefined {
  return Object.hasOwn(RUNTIME_BIND_STYLES, runtime) ? RUNTIME_BIND_STYLES[runtime] : undefined;
}

export interface BoundSql {
  /** The text to hand to the driver, byte for byte the computation except for the rewritten holes. */
  sql: string;
  /** The distinct parameter names the text references, in order of first appearance: `$n` is `order[n-1]`. */
  order: string[];
}

/**
 * Binds the `@name` holes of a computation (outside literals, comments and quoted identifiers) to `style`.
 * Values never enter the text: the caller passes them to the driver in `order`. A hole that is not a declared
 * parameter is an error: the computation would ask for a value nobody may supply.
 */
export function bindParameters(sql: string, names: readonly string[], style: BindStyle): BoundSql {
  const declared = new Set(names);
  const order: string[] = [];
  let out = '';
  let at = 0;
  for (const token of tokenizeSql(sql)) {
    if (token.kind === 'positional' && style === 'positional-dollar')
      throw new TackError(
        'COMPUTATION_FAILED',
        `the computation contains the placeholder ${token.text}; it must name its holes as @name`,
        { hint: 'Write each parameter as @<name> and declare it under `parameters`.' },
      );
    if (token.kind !== 'parameter') continue;
    const name = token.text.slice(1);
    if (!declared.has(name))
      throw new TackError(
        'COMPUTATION_FAILED',
        `the computation references @${name}, which is not a declared parameter (declared: ${
          names.length > 0 ? names.join(', ') : 'none'
        })`,
        {
          hint: `Declare \`${name}\` under \`parameters\` in the concept, or fix the name in the computation.`,
        },
      );
    let index = order.indexOf(name);
    if (index === -1) index = order.push(name) - 1;
    if (style === 'positional-dollar') {
      out += `${sql.slice(at, token.start)}$${index + 1}`;
      at = token.end;
    }
  }
  return { sql: style === 'named' ? sql : out + sql.slice(at), order };
}

/**
 * Where two canonical token lists first differ, as a sentence naming the tokens and their surroundings: what an
 * attester says when the SQL that ran is not the sanctioned SQL.
 */
export function describeSqlDifference(
  expected: readonly string[],
  actual: readonly string[],
): string | undefined {
  const length = Math.min(expected.length, actual.length);
  let i = 0;
  while (i < length && expected[i] === actual[i]) i++;
  if (i === expected.length && i === actual.length) return undefined;
  const around = (tokens: readonly string[]) => {
    const before = tokens.slice(Math.max(0, i - 4), i).join(' ');
    return before === '' ? '(start)' : `… ${before}`;
  };
  const show = (tokens: readonly string[]) => tokens.slice(i, i + 6).join(' ');
  if (i === actual.length)
    return `the executed SQL ends after token ${i} (${around(actual)}), where the sanctioned SQL continues with \`${show(expected)}\``;
  if (i === expected.length)
    return `the executed SQL has extra tokens after the sanctioned SQL ends (${around(expected)}): \`${show(actual)}\``;
  return `the executed SQL differs at token ${i + 1} (after ${around(expected)}): expected \`${show(expected)}\`, found \`${show(actual)}\``;
}

/**
 * The computation bound for a driver, refused when it holds more than one statement: what every SQL executor
 * does before it runs anything.
 */
export function bindSingleStatement(
  request: { sql: string; parameters: ReadonlyArray<{ name: string }> },
  style: BindStyle,
  failed: (message: string) => Error,
): BoundSql {
  const bound = bindParameters(
    request.sql,
    request.parameters.map((p) => p.name),
    style,
  );
  if (hasMultipleStatements(bound.sql))
    throw failed('the computation holds more than one statement; a computation is a single query');
  return bound;
}
