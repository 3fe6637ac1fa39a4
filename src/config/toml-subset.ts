/*
 * A reader for the part of TOML that Codex's `~/.codex/config.toml` uses, for `tack init --import codex`.
 * Hand-written because tack has no TOML dependency and the import needs only tables (`[a.b]`, quoted keys too),
 * `key = value` with dotted keys, strings (basic and literal, single- and multi-line), integers, floats, booleans,
 * arrays (across lines) and inline tables. Arrays of tables (`[[x]]`) are read and left out (Codex puts none under
 * `mcp_servers`). Dates and anything else stop the read with the line and what was expected.
 */

export type TomlValue = string | number | boolean | TomlValue[] | TomlTable;
export interface TomlTable {
  [key: string]: TomlValue;
}

export class TomlSubsetError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'TomlSubsetError';
  }
}

/** Parses `text`; throws TomlSubsetError naming the line of the first thing it does not read. */
export function parseTomlSubset(text: string): TomlTable {
  return new Reader(text.replace(/^\uFEFF/, '')).document();
}

/** Without a prototype: a key named `__proto__` is a key like any other. */
function newTable(): TomlTable {
  return Object.create(null) as TomlTable;
}

const BARE_KEY = /[A-Za-z0-9_-]/;
/**
 * Past this nesting, tables, dotted keys, arrays and inline tables are refused: a hostile file must not exhaust
 * the stack of whatever walks the result (JSON.stringify too). Counted through all of them together.
 */
const MAX_DEPTH = 32;

class Reader {
  private at = 0;
  private line = 1;

  constructor(private readonly text: string) {}

  document(): TomlTable {
    const root = newTable();
    let table: TomlTable | undefined = root;
    let tableDepth = 0;
    for (;;) {
      this.skipBlank();
      if (this.at >= this.text.length) return root;
      if (this.text.startsWith('[[', this.at)) {
        this.at += 2;
        this.keyPath(']]', 0);
        this.expect(']]');
        table = undefined; // an array of tables: read, and its keys left out
      } else if (this.peek() === '[') {
        this.at += 1;
        const path = this.keyPath(']', 0);
        this.expect(']');
        table = this.tableAt(root, path);
        tableDepth = path.length;
      } else {
        const path = this.keyPath('=', tableDepth);
        this.expect('=');
        this.spaces();
        const value = this.value(tableDepth + path.length);
        if (table) this.assign(table, path, value);
      }
      this.endOfLine();
    }
  }

  private tableAt(root: TomlTable, path: string[]): TomlTable {
    let table = root;
    for (const key of path) {
      const next = Object.hasOwn(table, key) ? table[key]! : newTable();
      if (typeof next !== 'object' || Array.isArray(next))
        throw this.fail(`[${path.join('.')}]: "${key}" is already a value, not a table`);
      table[key] = next;
      table = next;
    }
    return table;
  }

  private assign(table: TomlTable, path: string[], value: TomlValue): void {
    const last = path.at(-1)!;
    const parent = this.tableAt(table, path.slice(0, -1));
    if (Object.hasOwn(parent, last)) throw this.fail(`"${path.join('.')}" is defined twice`);
    parent[last] = value;
  }

  private keyPath(end: string, depth: number): string[] {
    const path: string[] = [];
    for (;;) {
      this.spaces();
      path.push(this.key());
      if (depth + path.length > MAX_DEPTH) throw this.fail(`nested deeper than ${MAX_DEPTH} levels`);
      this.spaces();
      if (this.peek() !== '.') break;
      this.at += 1;
    }
    if (!this.text.startsWith(end, this.at))
      throw this.fail(`expected "${end}" after the key "${path.join('.')}"`);
    return path;
  }

  private key(): string {
    const c = this.peek();
    if (c === '"') return this.basicString();
    if (c === "'") return this.literalString();
    const start = this.at;
    while (this.at < this.text.length && BARE_KEY.test(this.peek())) this.at += 1;
    if (this.at === start) throw this.fail(`expected a key, got ${this.shown()}`);
    return this.text.slice(start, this.at);
  }

  private value(depth: number): TomlValue {
    if (depth > MAX_DEPTH) throw this.fail(`nested deeper than ${MAX_DEPTH} levels`);
    const c = this.peek();
    if (this.text.startsWith('"""', this.at)) return this.multiline('"""');
    if (this.text.startsWith("'''", this.at)) return this.multiline("'''");
    if (c === '"') return this.basicString();
    if (c === "'") return this.literalString();
    if (c === '[') return this.array(depth);
    if (c === '{') return this.inlineTable(depth);
    const word =
      /^(?:true|false|[+-]?(?:inf|nan)|[+-]?[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9_]+)?)(?=[\s,\]}#]|$)/.exec(
        this.text.slice(this.at, this.at + 64),
      )?.[0];
    if (word === undefined)
      throw this.fail(`expected a string, number, boolean, array or inline table, got ${this.shown()}`);
    this.at += word.length;
    if (word === 'true' || word === 'false') return word === 'true';
    return Number(word.replace(/_/g, ''));
  }

  private array(depth: number): TomlValue[] {
    this.at += 1;
    const out: TomlValue[] = [];
    for (;;) {
      this.skipBlank();
      if (this.peek() === ']') break;
      out.push(this.value(depth + 1));
      this.skipBlank();
      if (this.peek() === ',') this.at += 1;
      else if (this.peek() !== ']') throw this.fail(`expected "," or "]" in an array, got ${this.shown()}`);
    }
    this.at += 1;
    return out;
  }

  private inlineTable(depth: number): TomlTable {
    this.at += 1;
    const out = newTable();
    this.spaces();
    if (this.peek() === '}') {
      this.at += 1;
      return out;
    }
    for (;;) {
      const path = this.keyPath('=', depth);
      this.expect('=');
      this.spaces();
      this.assign(out, path, this.value(depth + path.length));
      this.spaces();
      if (this.peek() === '}') break;
      if (this.peek() !== ',') throw this.fail(`expected "," or "}" in an inline table, got ${this.shown()}`);
      this.at += 1;
    }
    this.at += 1;
    return out;
  }

  private basicString(): string {
    this.at += 1;
    let out = '';
    for (;;) {
      const c = this.text[this.at];
      if (c === undefined || c === '\n') throw this.fail('unterminated string');
      this.at += 1;
      if (c === '"') return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      out += this.escape();
    }
  }

  private escape(): string {
    const e = this.text[this.at];
    this.at += 1;
    const simple: Record<string, string> = {
      b: '\b',
      t: '\t',
      n: '\n',
      f: '\f',
      r: '\r',
      '"': '"',
      '\\': '\\',
    };
    if (e !== undefined && simple[e] !== undefined) return simple[e];
    if (e === 'u' || e === 'U') {
      const length = e === 'u' ? 4 : 8;
      const hex = this.text.slice(this.at, this.at + length);
      const code =
        /^[0-9A-Fa-f]+$/.test(hex) && hex.length === length ? Number.parseInt(hex, 16) : Number.NaN;
      if (!(code <= 0x10ffff)) throw this.fail(`bad unicode escape \\${e}${hex}`);
      this.at += length;
      return String.fromCodePoint(code);
    }
    throw this.fail(`unknown escape \\${e ?? ''}`);
  }

  private literalString(): string {
    const end = this.text.indexOf("'", this.at + 1);
    const newline = this.text.indexOf('\n', this.at + 1);
    if (end < 0 || (newline >= 0 && newline < end)) throw this.fail('unterminated string');
    const out = this.text.slice(this.at + 1, end);
    this.at = end + 1;
    return out;
  }

  private multiline(quote: '"""' | "'''"): string {
    this.at += 3;
    if (this.peek() === '\n') this.newline();
    else if (this.text.startsWith('\r\n', this.at)) {
      this.at += 1;
      this.newline();
    }
    let out = '';
    for (;;) {
      if (this.at >= this.text.length) throw this.fail('unterminated multi-line string');
      if (this.text.startsWith(quote, this.at) && !this.text.startsWith(quote + quote[0], this.at)) {
        this.at += 3;
        return out;
      }
      const c = this.text[this.at]!;
      if (c === '\n') {
        this.newline();
        out += c;
      } else if (c === '\\' && quote === '"""') {
        this.at += 1;
        if (/^[ \t]*\r?\n/.test(this.text.slice(this.at, this.at + 64))) {
          // a line-ending backslash: the new line and the blanks after it go
          while (/\s/.test(this.peek())) {
            if (this.peek() === '\n') this.newline();
            else this.at += 1;
          }
        } else out += this.escape();
      } else {
        out += c;
        this.at += 1;
      }
    }
  }

  private newline(): void {
    this.at += 1;
    this.line += 1;
  }

  private spaces(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.at += 1;
  }

  /** Blanks, comments and new lines between things (inside arrays, and between lines). */
  private skipBlank(): void {
    for (;;) {
      this.spaces();
      const c = this.peek();
      if (c === '#') while (this.at < this.text.length && this.peek() !== '\n') this.at += 1;
      else if (c === '\r') this.at += 1;
      else if (c === '\n') this.newline();
      else return;
    }
  }

  private endOfLine(): void {
    this.spaces();
    if (this.peek() === '#') while (this.at < this.text.length && this.peek() !== '\n') this.at += 1;
    if (this.peek() === '\r') this.at += 1;
    if (this.at >= this.text.length) return;
    if (this.peek() !== '\n') throw this.fail(`expected the end of the line, got ${this.shown()}`);
    this.newline();
  }

  private expect(token: string): void {
    if (!this.text.startsWith(token, this.at)) throw this.fail(`expected "${token}", got ${this.shown()}`);
    this.at += token.length;
  }

  private peek(): string {
    return this.text[this.at] ?? '';
  }

  private shown(): string {
    if (this.at >= this.text.length) return 'the end of the file';
    return JSON.stringify(this.text.slice(this.at, this.at + 20).split('\n')[0]);
  }

  private fail(message: string): TomlSubsetError {
    return new TomlSubsetError(this.line, message);
  }
}
