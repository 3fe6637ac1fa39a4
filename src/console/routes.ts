import type { IncomingMessage, ServerResponse } from 'node:http';
import { TackError } from '../errors.js';
import type { ConsoleContext } from './context.js';
import { readJsonBody } from './http.js';

/** One API request as a handler sees it: the console's state, the path's parameters, the query, the body. */
export interface RouteCall {
  context: ConsoleContext;
  req: IncomingMessage;
  /** The `:name` segments of the route's path, percent-decoded. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The request body: a JSON object (an empty body is `{}`), at most MAX_BODY_BYTES. */
  body(): Promise<Record<string, unknown>>;
}

interface RouteBase {
  method: 'GET' | 'POST';
  /** The path after `/api/`, a `:name` segment for each parameter: `servers/:server/prompt`. */
  path: string;
}

/**
 * One API endpoint. Most answer JSON (status 200, errors as sendError words them); a stream writes its own
 * answer on `res`.
 */
export type Route =
  | (RouteBase & { json(call: RouteCall): unknown })
  | (RouteBase & { stream(call: RouteCall, res: ServerResponse): void | Promise<void> });

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/**
 * The API's route table: method and path pattern to handler, each section module contributing its own routes.
 * Segments match one to one (a literal exactly, `:name` any one segment); the first route that matches wins.
 */
export class RouteTable {
  readonly #routes: Array<{ route: Route; segments: string[] }>;

  constructor(routes: readonly Route[]) {
    const seen = new Set<string>();
    this.#routes = routes.map((route) => {
      const key = `${route.method} ${route.path.replace(/:[^/]+/g, ':')}`;
      // A second route of the same shape could never be reached: a mistake in the table, said at start.
      if (seen.has(key)) throw new Error(`console route ${route.method} ${route.path} is declared twice`);
      seen.add(key);
      return { route, segments: route.path.split('/') };
    });
  }

  match(method: string, segments: readonly string[]): RouteMatch | undefined {
    for (const { route, segments: pattern } of this.#routes) {
      if (route.method !== method || pattern.length !== segments.length) continue;
      const params: Record<string, string> = {};
      const fits = pattern.every((part, i) => {
        if (part.startsWith(':')) params[part.slice(1)] = segments[i]!;
        return part.startsWith(':') || part === segments[i];
      });
      if (fits) return { route, params };
    }
    return undefined;
  }
}

/**
 * The path's segments after `/api/`, each percent-decoded (so an escaped `/` stays inside its segment; empty
 * segments are dropped); a string naming the first malformed escape when one does not decode.
 */
export function apiSegments(pathname: string): string[] | { malformed: string } {
  const segments: string[] = [];
  for (const part of pathname.slice('/api/'.length).split('/')) {
    if (part === '') continue;
    try {
      segments.push(decodeURIComponent(part));
    } catch {
      return { malformed: part };
    }
  }
  return segments;
}

/** A JSON request body as an object: anything else (an array, a string, null) is refused. */
export async function readBodyObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const body = await readJsonBody(req);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new TackError('USAGE', 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A body field that must be a string: `<key> is required` otherwise. */
export function requiredString(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== 'string') throw new TackError('USAGE', `${key} is required`);
  return value;
}

/** Tool-call arguments (or a computation's values): a JSON object, absent meaning none. */
export function argumentsOf(value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TackError('USAGE', 'arguments must be a JSON object');
  return value as Record<string, unknown>;
}

/** A numeric query parameter at least 0 (an offset): anything else is 0. */
export function offsetOf(query: URLSearchParams, key = 'offset'): number {
  return Math.max(0, Number(query.get(key)) || 0);
}
