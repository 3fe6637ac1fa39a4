import { TackError } from '../errors.js';
import { MAX_ATTACHMENT_CHARS } from '../mcp/attachments.js';
import type { McpHost } from '../mcp/host.js';
import { promptCommands, promptUsage, runPromptCommand } from '../mcp/prompt-command.js';
import type { HeldDefinition } from '../security/pins.js';
import { packageView } from './catalog.js';
import { type Route, requiredString } from './routes.js';

/** Entries of each kind a server page lists (a server listing 100,000 resources must not make a 50 MB answer). */
const MAX_LISTED = 500;
/**
 * Contents a read shows (the first ones, in the server's order): each text is cut at MAX_ATTACHMENT_CHARS, so an
 * answer holds at most about a million characters however many contents the server returns.
 */
export const MAX_READ_CONTENTS = 20;

/**
 * A server page's prompts, resources and templates: what a person can run or read from the console (the console
 * has no conversation to put them in, so they are shown where their server is). Prompts carry the chat's command
 * name and whether the pin guard holds them.
 */
export function serverListing(host: McpHost, server: string, held: readonly HeldDefinition[]) {
  const connection = host.connection(server);
  const listing = host.catalog.listingsOf(server);
  const commands = promptCommands(host.catalog).filter((c) => c.server === server);
  const prompts = listing?.prompts ?? [];
  const resources = listing?.resources ?? [];
  const templates = listing?.resourceTemplates ?? [];
  return {
    server,
    status: connection.status,
    diagnostics: connection.snapshot().diagnostics,
    package: packageView(connection.package),
    packageHeld: held.find((h) => h.kind === 'package' && h.server === server)?.reason,
    prompts: prompts.slice(0, MAX_LISTED).map((prompt) => {
      const command = commands.find((c) => c.prompt === prompt);
      const hold = held.find((h) => h.kind === 'prompt' && h.server === server && h.name === prompt.name);
      return {
        name: prompt.name,
        title: prompt.title,
        description: prompt.description,
        arguments: prompt.arguments ?? [],
        command: command ? promptUsage(command) : undefined,
        ...(hold ? { held: hold.reason } : {}),
      };
    }),
    resources: resources.slice(0, MAX_LISTED).map((r) => ({
      uri: r.uri,
      name: r.name,
      title: r.title,
      description: r.description,
      mimeType: r.mimeType,
    })),
    templates: templates.slice(0, MAX_LISTED).map((t) => ({
      uriTemplate: t.uriTemplate,
      name: t.name,
      title: t.title,
      description: t.description,
      mimeType: t.mimeType,
    })),
    counts: { prompts: prompts.length, resources: resources.length, templates: templates.length },
  };
}

/**
 * Runs prompt `name` of `server` with `args` as the chat's `/mcp__server__prompt` does: the same text a user's turn
 * would carry (embedded resources attached and cut, media noted). A held prompt is never fetched.
 */
export async function runPrompt(
  host: McpHost,
  server: string,
  name: string,
  args: unknown,
  held: readonly HeldDefinition[],
) {
  const command = promptCommands(host.catalog).find((c) => c.server === server && c.prompt.name === name);
  if (!command)
    throw new TackError('UNKNOWN_PROMPT', `server "${server}" lists no prompt named "${name}"`, {
      subject: { server },
    });
  const expanded = await runPromptCommand(host, command, stringArguments(args), {
    held: held.map((h) => ({ server: h.server, kind: h.kind, name: h.name, reason: h.reason })),
  });
  return { command: command.command, text: expanded.text, notes: expanded.notes };
}

/**
 * Reads `uri` from `server`: the first MAX_READ_CONTENTS contents (`total` says how many there were), text cut at
 * the attachment limit, binary said with its type and size.
 */
export async function readForPage(host: McpHost, server: string, uri: unknown) {
  if (typeof uri !== 'string' || uri === '') throw new TackError('USAGE', 'uri is required');
  const unfilled = /\{[^}]*\}/.exec(uri);
  if (unfilled)
    throw new TackError('USAGE', `fill in ${unfilled[0]} of ${uri}`, {
      hint: "A template's variables take values before it can be read.",
    });
  const result = await host.readResource(uri, { server });
  return {
    total: result.contents.length,
    contents: result.contents.slice(0, MAX_READ_CONTENTS).map((content) => {
      if ('text' in content && typeof content.text === 'string') {
        const cut = content.text.length > MAX_ATTACHMENT_CHARS;
        return {
          uri: content.uri,
          mimeType: content.mimeType,
          text: cut ? content.text.slice(0, MAX_ATTACHMENT_CHARS) : content.text,
          ...(cut ? { cutAt: MAX_ATTACHMENT_CHARS, length: content.text.length } : {}),
        };
      }
      const blob = 'blob' in content && typeof content.blob === 'string' ? content.blob : '';
      return { uri: content.uri, mimeType: content.mimeType, bytes: Buffer.byteLength(blob, 'base64') };
    }),
  };
}

function stringArguments(args: unknown): Record<string, string> {
  if (args === undefined || args === null) return {};
  if (typeof args !== 'object' || Array.isArray(args))
    throw new TackError('USAGE', 'arguments must be an object of strings');
  const out: Record<string, string> = Object.create(null);
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== 'string')
      throw new TackError(
        'USAGE',
        `prompt argument "${key}" must be a string, got ${JSON.stringify(value)}`,
        {
          hint: 'MCP prompt arguments are strings.',
        },
      );
    // An empty field of the page's form is an argument left out (a required one is then named as missing).
    if (value !== '') out[key] = value;
  }
  return out;
}

/** A server's page: its prompts run and its resources read here, since the console has no conversation. */
export const listingRoutes: Route[] = [
  {
    method: 'GET',
    path: 'servers/:server',
    async json({ context, params }) {
      return serverListing(context.host, params.server!, (await context.catalogView()).held);
    },
  },
  {
    method: 'POST',
    path: 'servers/:server/prompt',
    async json({ context, params, body }) {
      const fields = await body();
      const name = requiredString(fields, 'name');
      const { held } = await context.catalogView();
      return runPrompt(context.host, params.server!, name, fields.arguments, held);
    },
  },
  {
    method: 'POST',
    path: 'servers/:server/read',
    async json({ context, params, body }) {
      return readForPage(context.host, params.server!, (await body()).uri);
    },
  },
];
