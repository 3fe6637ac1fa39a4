import type { ContentBlock, GetPromptResult, Prompt, PromptArgument } from '@modelcontextprotocol/client';
import { TackError } from '../errors.js';
import { printable } from '../util/printable.js';
import { MAX_ATTACHMENTS, MAX_PROMPT_TEXT_CHARS, mediaNote, resourceAttachment } from './attachments.js';
import type { Catalog } from './catalog.js';
import type { McpHost } from './host.js';
import { assignToolNames } from './names.js';
import type { RequestCallOptions } from './requests.js';

/**
 * MCP prompts as slash commands, the way the spec frames them ("user-controlled", e.g. `/summarise_pr
 * number=42`) and Claude Code names them: `/mcp__<server>__<prompt>`, made to fit by the same rule as tool names
 * (names.ts), so a prompt whose name holds a space or a dot still gets one unique command.
 */
export interface PromptCommand {
  /** `/mcp__<server>__<prompt>`. */
  command: string;
  server: string;
  prompt: Prompt;
}

/** Every connected server's prompts as commands, in configuration order. */
export function promptCommands(catalog: Catalog): PromptCommand[] {
  const entries = catalog.servers.flatMap((listing) =>
    listing.prompts.map((prompt) => ({ server: listing.server, tool: prompt.name, prompt })),
  );
  return [...assignToolNames(entries)].map(([name, entry]) => ({
    command: `/${name}`,
    server: entry.server,
    prompt: entry.prompt,
  }));
}

/** One word of a command line: `name=value` (an unquoted name before the `=`) or a positional value. */
export interface CommandWord {
  name?: string;
  value: string;
  /** Offset of the word in the text it was split from. */
  start: number;
}

/**
 * Splits what follows a command into words: whitespace separates, `"..."` and `'...'` quote (a backslash
 * escapes a quote or a backslash inside double quotes), and an unquoted `name=` before the value names it.
 * An unclosed quote runs to the end (the person is still typing it).
 */
export function splitCommandWords(text: string): CommandWord[] {
  const words: CommandWord[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const start = i;
    let value = '';
    let name: string | undefined;
    let quoted = false;
    // Once the word cannot be a name it never becomes one: testing again at each `=` made a long word quadratic.
    let nameable = true;
    while (i < text.length && !/\s/.test(text[i]!)) {
      const char = text[i]!;
      if (char === '"' || char === "'") {
        quoted = true;
        i++;
        while (i < text.length && text[i] !== char) {
          if (char === '"' && text[i] === '\\' && i + 1 < text.length) i++;
          value += text[i];
          i++;
        }
        i++; // the closing quote
        continue;
      }
      if (char === '=' && name === undefined && !quoted && nameable) {
        nameable = /^[A-Za-z_][\w.-]*$/.test(value);
        if (nameable) {
          name = value;
          value = '';
          i++;
          continue;
        }
      }
      value += char;
      i++;
    }
    words.push({ ...(name !== undefined ? { name } : {}), value, start });
  }
  return words;
}

/**
 * The prompt's arguments from the words typed after its command: `name=value` pairs, and positional values
 * filling the declared arguments not named, in declared order (words past the last argument join it, so free
 * text fits a one-argument prompt). A missing required argument or an unknown name is a USAGE error naming them.
 */
export function parsePromptArguments(command: PromptCommand, text: string): Record<string, string> {
  const declared = command.prompt.arguments ?? [];
  // No prototype: an argument named `constructor` or `__proto__` is an argument like any other.
  const args: Record<string, string> = Object.create(null);
  const positional: string[] = [];
  for (const word of splitCommandWords(text)) {
    if (word.name === undefined) positional.push(word.value);
    else if (declared.some((a) => a.name === word.name)) args[word.name] = word.value;
    else
      throw new TackError(
        'USAGE',
        `${command.command}: no argument named "${word.name}"`,
        usageHint(command, 'Its arguments'),
      );
  }
  const open = declared.filter((a) => !Object.hasOwn(args, a.name));
  if (positional.length > 0 && open.length === 0)
    throw new TackError(
      'USAGE',
      `${command.command}: "${positional[0]}" is left over: every argument is already given`,
      usageHint(command, 'Its arguments'),
    );
  open.forEach((argument, i) => {
    if (i >= positional.length) return;
    args[argument.name] = i === open.length - 1 ? positional.slice(i).join(' ') : positional[i]!;
  });
  checkPromptArguments(command, args);
  return args;
}

/** A USAGE error naming the required arguments `args` leaves out, or an argument the prompt does not declare. */
export function checkPromptArguments(command: PromptCommand, args: Record<string, string>): void {
  const declared = command.prompt.arguments ?? [];
  const unknown = Object.keys(args).find((name) => !declared.some((a) => a.name === name));
  if (unknown !== undefined)
    throw new TackError(
      'USAGE',
      `${command.command}: no argument named "${unknown}"`,
      usageHint(command, 'Its arguments'),
    );
  const missing = declared.filter((a) => a.required === true && !Object.hasOwn(args, a.name));
  if (missing.length > 0)
    throw new TackError(
      'USAGE',
      `${command.command} needs ${missing.length === 1 ? 'argument' : 'arguments'} ${missing
        .map((a) => `${a.name}${a.description ? ` (${a.description})` : ''}`)
        .join(', ')}`,
      usageHint(command, 'Usage'),
    );
}

/** `/mcp__s__p city=<city> [state=<state>]`: the line /help and the errors show. */
export function promptUsage(command: PromptCommand): string {
  const args = (command.prompt.arguments ?? []).map((a) =>
    a.required ? `${a.name}=<${a.name}>` : `[${a.name}=<${a.name}>]`,
  );
  return [command.command, ...args].join(' ');
}

function usageHint(command: PromptCommand, lead: string): { subject: { server: string }; hint: string } {
  const declared = command.prompt.arguments ?? [];
  return {
    subject: { server: command.server },
    hint:
      declared.length === 0
        ? `${command.command} takes no arguments.`
        : `${lead}: ${promptUsage(command)} (values with spaces in quotes, name= optional in declared order).`,
  };
}

/** A prompt's result as the user's turn: its text, its embedded resources attached, media noted. */
export interface ExpandedPrompt {
  text: string;
  /** What was attached or left out, one line each, for the person. */
  notes: string[];
}

/** Whether a held definition (security/pins.ts) is this prompt: a held prompt is never fetched. */
export interface HeldPromptCheck {
  server: string;
  kind: string;
  name: string;
  reason?: string;
}

/**
 * Runs a prompt command line (`/mcp__server__prompt args...`): finds the command among the host's prompts,
 * parses the arguments, gets the prompt and turns its messages into the text of a user turn. Undefined when the
 * line is not a prompt command; a TackError when it is one that cannot run (missing arguments, a held prompt, the
 * server's refusal).
 */
export async function expandPromptCommand(
  host: McpHost,
  line: string,
  options: RequestCallOptions & { held?: readonly HeldPromptCheck[] } = {},
): Promise<ExpandedPrompt | undefined> {
  const match = /^(\/\S+)(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!match) return undefined;
  const command = promptCommands(host.catalog).find((c) => c.command === match[1]);
  if (!command) return undefined;
  return runPromptCommand(host, command, parsePromptArguments(command, match[2] ?? ''), options);
}

/**
 * Runs one prompt command with its arguments (checked: the required ones given, no unknown ones): a held prompt
 * is refused before its server is asked; the result comes back as the text of a user turn (promptTurn).
 */
export async function runPromptCommand(
  host: McpHost,
  command: PromptCommand,
  args: Record<string, string>,
  options: RequestCallOptions & { held?: readonly HeldPromptCheck[] } = {},
): Promise<ExpandedPrompt> {
  checkPromptArguments(command, args);
  const held = options.held?.find(
    (h) => h.kind === 'prompt' && h.server === command.server && h.name === command.prompt.name,
  );
  if (held)
    throw new TackError(
      'DEFINITION_HELD',
      `prompt ${command.prompt.name} of ${command.server} is held back${held.reason ? `: ${held.reason}` : ''}`,
      {
        subject: { server: command.server },
        hint: `Review it with \`tack pins diff ${command.server}\` and accept it with \`tack pins accept ${command.server} ${command.prompt.name}\`.`,
      },
    );
  const { held: _held, ...call } = options;
  const result = await host.getPrompt(
    command.server,
    command.prompt.name,
    Object.keys(args).length > 0 ? args : undefined,
    call,
  );
  return promptTurn(result);
}

/** Notes kept of one prompt result (the rest counted in one more). */
const MAX_PROMPT_NOTES = 20;

/**
 * A prompt result as one user turn. Text parts are joined (an assistant message of a multi-message prompt is
 * marked as such); embedded resources become attachments (MAX_ATTACHMENTS, each cut at MAX_ATTACHMENT_CHARS);
 * images and audio are noted, not inlined; the text as a whole is cut at MAX_PROMPT_TEXT_CHARS.
 */
export function promptTurn(result: GetPromptResult): ExpandedPrompt {
  const notes: string[] = [];
  const parts: string[] = [];
  const attachments: string[] = [];
  const mixedRoles = result.messages.some((m) => m.role !== 'user');
  for (const message of result.messages) {
    const piece = blockText(message.content as ContentBlock, attachments, notes);
    if (piece === undefined) continue;
    parts.push(mixedRoles ? `[${message.role}]\n${piece}` : piece);
  }
  // One note per media block or refused resource: a result of thousands must not flood the person's screen.
  if (notes.length > MAX_PROMPT_NOTES)
    notes.splice(
      MAX_PROMPT_NOTES,
      notes.length,
      `and ${notes.length - MAX_PROMPT_NOTES} more notes like these`,
    );
  let text = parts.join('\n\n');
  if (text.length > MAX_PROMPT_TEXT_CHARS) {
    text = text.slice(0, MAX_PROMPT_TEXT_CHARS);
    notes.push(`the prompt's text was cut at ${MAX_PROMPT_TEXT_CHARS} characters`);
  }
  if (attachments.length > 0) text = `${text}\n\n${attachments.join('\n\n')}`;
  return { text, notes };
}

function blockText(block: ContentBlock, attachments: string[], notes: string[]): string | undefined {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio': {
      const note = mediaNote(block);
      notes.push(`the prompt's ${block.type} (${block.mimeType}) is noted, not inlined`);
      return note;
    }
    case 'resource': {
      if (attachments.length >= MAX_ATTACHMENTS) {
        notes.push(`${block.resource.uri} not attached: at most ${MAX_ATTACHMENTS} attachments per message`);
        return undefined;
      }
      const attached = resourceAttachment(block.resource);
      attachments.push(attached.text);
      notes.push(attached.note);
      return undefined;
    }
    case 'resource_link':
      return `[resource link ${block.uri}${block.name ? ` "${block.name}"` : ''}]`;
    default:
      return undefined;
  }
}

/** The argument the cursor is in, for completion: which prompt, which argument, what is typed of its value. */
export interface ArgumentTarget {
  command: PromptCommand;
  argument: PromptArgument;
  /** What is typed of the value so far (quotes removed). */
  value: string;
  /** Whether the word was typed as `name=value`. */
  named: boolean;
  /** The other arguments already given, for the server's `context.arguments`. */
  given: Record<string, string>;
}

/**
 * The prompt argument being typed at the end of `before` (the line up to the cursor), or undefined when the line
 * is not a prompt command with arguments or the cursor is not in one.
 */
export function argumentAt(commands: readonly PromptCommand[], before: string): ArgumentTarget | undefined {
  const match = /^(\/\S+)\s([\s\S]*)$/.exec(before.trimStart());
  if (!match) return undefined;
  const command = commands.find((c) => c.command === match[1]);
  const declared = command?.prompt.arguments ?? [];
  if (!command || declared.length === 0) return undefined;
  const rest = match[2]!;
  const words = splitCommandWords(rest);
  // A new word starts after trailing whitespace (or when nothing is typed yet).
  const typing = rest === '' || /\s$/.test(rest) ? { value: '', start: rest.length } : words.pop()!;
  const given: Record<string, string> = Object.create(null);
  const positional: string[] = [];
  for (const word of words) {
    if (word.name !== undefined) given[word.name] = word.value;
    else positional.push(word.value);
  }
  const open = declared.filter((a) => !Object.hasOwn(given, a.name));
  open.slice(0, positional.length).forEach((a, i) => {
    given[a.name] = positional[i]!;
  });
  if ('name' in typing && typing.name !== undefined) {
    const argument = declared.find((a) => a.name === typing.name);
    return argument ? { command, argument, value: typing.value, named: true, given } : undefined;
  }
  const argument = open[positional.length] ?? open.at(-1);
  return argument ? { command, argument, value: typing.value, named: false, given } : undefined;
}

/** A completed value as the word to put back: quoted when it holds whitespace or a quote, `name=` kept. */
export function argumentWord(target: Pick<ArgumentTarget, 'argument' | 'named'>, value: string): string {
  const quoted = /[\s"'\\]/.test(value) || value === '' ? `"${value.replace(/["\\]/g, '\\$&')}"` : value;
  return target.named ? `${target.argument.name}=${quoted}` : quoted;
}

/** How long the chat waits for a server to complete an argument: a slow server must never hold up typing. */
export const COMPLETION_TIMEOUT_MS = 800;
/** Completion values kept per answer. */
const MAX_COMPLETION_VALUES = 100;

/**
 * The server's completions (`completion/complete`) for the argument at the cursor, bounded by `timeoutMs`; an
 * error, a timeout or a server without completions gives none.
 */
export async function completePromptArgument(
  host: McpHost,
  target: ArgumentTarget,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string[]> {
  const timeoutMs = options.timeoutMs ?? COMPLETION_TIMEOUT_MS;
  const signals = [AbortSignal.timeout(timeoutMs), options.signal].filter(
    (s): s is AbortSignal => s !== undefined,
  );
  const signal = AbortSignal.any(signals);
  try {
    const connection = host.connection(target.command.server);
    if (connection.status !== 'connected') return [];
    const request = host.complete(
      target.command.server,
      {
        ref: { type: 'ref/prompt', name: target.command.prompt.name },
        argument: { name: target.argument.name, value: target.value },
        ...(Object.keys(target.given).length > 0 ? { context: { arguments: target.given } } : {}),
      },
      { signal, timeoutMs },
    );
    // The race stands in for a request that ignores its signal: the answer, or nothing once the time is up.
    const late = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    const result = await Promise.race([request, late]);
    request.catch(() => {
      // Answered after the race was lost, or failed: nobody waits for it any more.
    });
    const values = result?.completion.values ?? [];
    // A value a terminal would act on (controls, bidi, invisible characters) is never offered to be typed in.
    return values
      .filter((v): v is string => typeof v === 'string' && v === printable(v))
      .slice(0, MAX_COMPLETION_VALUES);
  } catch {
    return [];
  }
}
