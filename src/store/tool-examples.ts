import type { Db } from './database.js';

/** One learned example: a request (`query`) after which a session used `tool` of `server`, at `at` (ISO 8601). */
export interface ToolExample {
  server: string;
  tool: string;
  query: string;
  at: string;
}

/** How many requests are kept per tool: the newest, enough vocabulary without letting one tool dominate. */
export const EXAMPLES_PER_TOOL = 50;

/** The text kept of a request: trimmed and cut to 500 characters; empty means nothing is kept. */
export function exampleText(query: string): string {
  return query.trim().slice(0, 500);
}

/**
 * Requests that led to a tool: a session searched with these words, then used what it found. Tool search indexes
 * them as the tool's examples, so the words people use find the tool next time even when its description does not
 * contain them. Keyed by server and the server's own tool name, so they survive renames of the model-visible name.
 */
export interface ToolExamples {
  record(server: string, tool: string, query: string, at?: string): Promise<void>;
  /** Every example with its time, oldest first (what `tack tools examples export` writes). */
  rows(): Promise<ToolExample[]>;
  /** Keeps each example as if recorded at its time (at most the newest 50 per tool stay); in one transaction. */
  import(examples: readonly ToolExample[]): Promise<number>;
  /** Every server's examples: `server` -> tool -> requests, newest first. */
  all(): Promise<Map<string, Map<string, string[]>>>;
}

/** Rows (newest first) grouped as `server` -> tool -> requests. */
export function groupExamples(
  rows: ReadonlyArray<{ server: string; tool: string; query: string }>,
): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  for (const row of rows) {
    const tools = out.get(row.server) ?? new Map<string, string[]>();
    out.set(row.server, tools);
    const list = tools.get(row.tool) ?? [];
    list.push(row.query);
    tools.set(row.tool, list);
  }
  return out;
}

export class SqliteToolExamples implements ToolExamples {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async record(server: string, tool: string, query: string, at = new Date().toISOString()): Promise<void> {
    this.#record(server, tool, query, at);
  }

  #record(server: string, tool: string, query: string, at: string): void {
    const text = exampleText(query);
    if (!text) return;
    // An imported example keeps its own time; a newer one already kept for the same words wins.
    this.#db
      .prepare(
        'INSERT INTO tool_examples (server, tool, query, at) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET at = max(at, excluded.at)',
      )
      .run(server, tool, text, at);
    this.#db
      .prepare(
        'DELETE FROM tool_examples WHERE server = ? AND tool = ? AND query NOT IN (SELECT query FROM tool_examples WHERE server = ? AND tool = ? ORDER BY at DESC LIMIT ?)',
      )
      .run(server, tool, server, tool, EXAMPLES_PER_TOOL);
  }

  async rows(): Promise<ToolExample[]> {
    return this.#db
      .prepare('SELECT server, tool, query, at FROM tool_examples ORDER BY at, server, tool, query')
      .all() as ToolExample[];
  }

  async import(examples: readonly ToolExample[]): Promise<number> {
    let kept = 0;
    this.#db.transaction(() => {
      for (const e of examples) {
        this.#record(e.server, e.tool, e.query, e.at);
        kept++;
      }
    })();
    return kept;
  }

  async all(): Promise<Map<string, Map<string, string[]>>> {
    return groupExamples(
      this.#db.prepare('SELECT server, tool, query FROM tool_examples ORDER BY at DESC').all() as Array<{
        server: string;
        tool: string;
        query: string;
      }>,
    );
  }
}
