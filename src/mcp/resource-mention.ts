import { errorMessage } from '../errors.js';
import { printable } from '../util/printable.js';
import { MAX_ATTACHMENTS, resourceAttachment } from './attachments.js';
import type { Catalog } from './catalog.js';
import type { McpHost } from './host.js';
import type { RequestCallOptions } from './requests.js';

/**
 * Resources as @-mentions, the way the spec frames them ("application-controlled", chosen by the user "like
 * dragging a file into chat") and Claude Code writes them: `@<server>:<uri>`. A template's URI is mentioned with
 * its `{variables}` filled in (`@everything:demo://resource/dynamic/text/7`).
 */
export interface ResourceMention {
  server: string;
  uri: string;
  /** As typed, without the `@`. */
  raw: string;
}

/** The characters a mention ends before (punctuation closing a sentence around it). */
const TRAILING = /[.,;:!?)]+$/;

/**
 * The `@server:uri` mentions in a message, in order and without repeats; `isServer` says which names are
 * servers (anything else is left to the file mentions: `@notes:todo` is a resource only if `notes` is a server).
 */
export function findResourceMentions(
  message: string,
  isServer: (name: string) => boolean,
): ResourceMention[] {
  const found: ResourceMention[] = [];
  const seen = new Set<string>();
  for (const match of message.matchAll(/(?:^|\s)@([A-Za-z0-9_-]+):(\S+)/g)) {
    const server = match[1]!;
    const uri = match[2]!.replace(TRAILING, '');
    if (uri === '' || !isServer(server)) continue;
    const raw = `${server}:${uri}`;
    if (seen.has(raw)) continue;
    seen.add(raw);
    found.push({ server, uri, raw });
  }
  return found;
}

/** The resources a message mentions, read and made attachments; the notes say what was attached or why not. */
export interface ResolvedMentions {
  /** One attachment per content of each resource read (text inlined and cut, binary noted). */
  attachments: string[];
  notes: string[];
}

/**
 * Reads every `@server:uri` the message mentions (at most `max`, MAX_ATTACHMENTS by default) from its server.
 * A mention that cannot be read (an unfilled template variable, an unknown URI, a server that is down) is a note,
 * never an error: the message is still sent.
 */
export async function resolveResourceMentions(
  host: McpHost,
  message: string,
  options: RequestCallOptions & { max?: number } = {},
): Promise<ResolvedMentions> {
  const { max = MAX_ATTACHMENTS, ...call } = options;
  const attachments: string[] = [];
  const notes: string[] = [];
  for (const mention of findResourceMentions(message, (name) => host.has(name))) {
    if (attachments.length >= max) {
      notes.push(`@${mention.raw} not attached: at most ${max} attachments per message`);
      continue;
    }
    const unfilled = /\{[^}]*\}/.exec(mention.uri);
    if (unfilled) {
      notes.push(`@${mention.raw} not attached: fill in ${unfilled[0]} (a template's variables take values)`);
      continue;
    }
    try {
      const result = await host.readResource(mention.uri, { ...call, server: mention.server });
      if (result.contents.length === 0) notes.push(`@${mention.raw}: the server returned no content`);
      for (const content of result.contents) {
        if (attachments.length >= max) {
          notes.push(`${content.uri} not attached: at most ${max} attachments per message`);
          break;
        }
        const attached = resourceAttachment(content, { server: mention.server });
        attachments.push(attached.text);
        notes.push(attached.note);
      }
    } catch (error) {
      notes.push(`@${mention.raw} not attached: ${errorMessage(error).split('\n')[0]}`);
    }
  }
  return { attachments, notes };
}

/** Completions kept per answer. */
const MAX_RESOURCE_COMPLETIONS = 200;

/**
 * `@server:` completions from the listings: `@ev` gives the servers that offer resources (`@everything:`),
 * `@everything:demo://r` the resources and templates whose URI starts so. Listings only: no request is made.
 */
export function completeResourceMention(catalog: Catalog, word: string): string[] {
  if (!word.startsWith('@')) return [];
  const typed = word.slice(1);
  const colon = typed.indexOf(':');
  const offering = catalog.servers.filter((s) => s.resources.length > 0 || s.resourceTemplates.length > 0);
  if (colon < 0)
    return offering
      .filter((s) => s.server.startsWith(typed))
      .map((s) => `@${s.server}:`)
      .slice(0, MAX_RESOURCE_COMPLETIONS);
  const server = offering.find((s) => s.server === typed.slice(0, colon));
  if (!server) return [];
  const prefix = typed.slice(colon + 1);
  const uris = [
    ...server.resources.map((r) => r.uri),
    ...server.resourceTemplates.map((t) => t.uriTemplate),
  ].filter((uri) => uri.startsWith(prefix) && !/\s/.test(uri) && uri === printable(uri));
  return [...new Set(uris)].slice(0, MAX_RESOURCE_COMPLETIONS).map((uri) => `@${server.server}:${uri}`);
}
