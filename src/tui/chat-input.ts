import type { RunningAgent } from '../agent/agent.js';
import { MAX_ATTACHMENTS } from '../mcp/attachments.js';
import {
  argumentAt,
  argumentWord,
  completePromptArgument,
  expandPromptCommand,
  type PromptCommand,
  promptCommands,
  promptUsage,
} from '../mcp/prompt-command.js';
import {
  completeResourceMention,
  findResourceMentions,
  resolveResourceMentions,
} from '../mcp/resource-mention.js';
import type { SkillEntry } from '../skills/library.js';
import { COMMANDS, completeCommand } from './commands.js';
import type { EditorState } from './editor.js';
import { completeMention, fileAttachments, MAX_COMPLETIONS } from './mentions.js';

/**
 * What the user controls in the chat besides typing: the servers' prompts as `/mcp__server__prompt` commands,
 * skills as `/skill-name`, and resources as `@server:uri` mentions (next to `@file`). The library does the MCP
 * side (mcp/prompt-command.ts, mcp/resource-mention.ts); this module puts it into a turn and into Tab.
 */

/** A skill the user invokes by name. */
export interface SkillCommand {
  command: string;
  skill: SkillEntry;
}

/** Names the chat's own commands take; a skill of the same name is left to them. */
const BUILT_IN = new Set([...COMMANDS.map((c) => c.name), '/quit']);

export function skillCommands(agent: RunningAgent): SkillCommand[] {
  return agent.skills.skills
    .map((skill) => ({ command: `/${skill.name}`, skill }))
    .filter((c) => !BUILT_IN.has(c.command) && !/\s/.test(c.command));
}

/** The prompt commands of the servers connected now (a server that is down offers none). */
export function chatPromptCommands(agent: RunningAgent): PromptCommand[] {
  return agent.host ? promptCommands(agent.host.catalog) : [];
}

/** Whether `name` (`/...`) is a prompt or skill command of this session. */
export function isUserCommand(agent: RunningAgent, name: string): boolean {
  return (
    chatPromptCommands(agent).some((c) => c.command === name) ||
    skillCommands(agent).some((c) => c.command === name)
  );
}

/** /help's lines for the prompt and skill commands (descriptions on one line, cut). */
export function userCommandHelp(agent: RunningAgent): Array<{ name: string; help: string }> {
  const oneLine = (text: string | undefined) => {
    const flat = (text ?? '').replace(/\s+/g, ' ').trim();
    return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
  };
  return [
    ...chatPromptCommands(agent).map((c) => ({
      name: promptUsage(c),
      help: `prompt of ${c.server}${c.prompt.description ? `: ${oneLine(c.prompt.description)}` : ''}`,
    })),
    ...skillCommands(agent).map((c) => ({ name: c.command, help: `skill: ${oneLine(c.skill.description)}` })),
  ];
}

/** A message ready for the session: what the model gets, and a line per attachment or omission for the person. */
export interface PreparedTurn {
  message: string;
  notes: string[];
  /** The skill a `/skill-name` activated, for the status line. */
  skill?: string;
}

/**
 * The user's turn from what was typed: a prompt command becomes the prompt's messages, a skill command the
 * skill's instructions (as activate_skill gives them) followed by what was typed after it, and every `@file` and
 * `@server:uri` of the typed text is attached. Throws a TackError a prompt command cannot run with (a missing
 * argument, a held prompt, the server's refusal); a mention that cannot be read is only a note.
 */
export async function prepareTurn(
  agent: RunningAgent,
  typed: string,
  cwd: string,
  signal?: AbortSignal,
): Promise<PreparedTurn> {
  const notes: string[] = [];
  let body = typed;
  let skill: string | undefined;
  const first = /^\/\S+/.exec(typed)?.[0];
  if (first && agent.host) {
    const expanded = await expandPromptCommand(agent.host, typed, {
      held: agent.session.held,
      ...(signal ? { signal } : {}),
    });
    if (expanded) {
      body = expanded.text;
      for (const note of expanded.notes) notes.push(note);
    }
  }
  const skillCommand =
    first && body === typed ? skillCommands(agent).find((c) => c.command === first) : undefined;
  if (skillCommand) {
    const activation = await agent.session.activateSkill(skillCommand.skill.name);
    const rest = typed.slice(first!.length).trim();
    body = `${activation.text}\n\n${rest || `Follow the instructions of skill ${skillCommand.skill.name} above.`}`;
    skill = skillCommand.skill.name;
    notes.push(activation.alreadyActive ? `skill ${skill} is already active` : `activated skill ${skill}`);
  }
  const isServer = (name: string) => agent.host?.has(name) === true;
  const resources = findResourceMentions(typed, isServer);
  const files = fileAttachments(typed, cwd, {
    skip: (mention) => resources.some((r) => mention === r.raw || mention.startsWith(`${r.server}:`)),
  });
  const read = agent.host
    ? await resolveResourceMentions(agent.host, typed, {
        max: MAX_ATTACHMENTS,
        ...(signal ? { signal } : {}),
      })
    : { attachments: [], notes: [] };
  for (const note of [...files.notes, ...read.notes]) notes.push(note);
  const parts = [body, ...files.parts, ...read.attachments];
  return { message: parts.join('\n\n'), notes, ...(skill ? { skill } : {}) };
}

/** Tab's options at once (`now`), and those a server is asked for (`later`, bounded by a short timeout). */
export interface InputCompletions {
  now: string[];
  later?: Promise<string[]>;
}

/**
 * Completions for the word at the cursor: a first word `/...` from the built-in, prompt and skill commands; an
 * argument of a prompt command from its names (`city=`) and the server's `completion/complete`; `@...` from the
 * folder's files and the servers' resources and templates (`@server:uri`).
 */
export function completeInput(agent: RunningAgent, editor: EditorState, cwd: string): InputCompletions {
  const before = editor.text.slice(0, editor.cursor);
  const word = /\S*$/.exec(before)![0];
  if (word.startsWith('/') && before.trimStart() === word) {
    const names = [
      ...completeCommand(word),
      ...chatPromptCommands(agent).map((c) => c.command),
      ...skillCommands(agent).map((c) => c.command),
    ];
    return { now: [...new Set(names)].filter((n) => n.startsWith(word)).slice(0, MAX_COMPLETIONS) };
  }
  if (word.startsWith('@')) {
    const resources = agent.host ? completeResourceMention(agent.host.catalog, word) : [];
    const files = word.slice(1).includes(':') && resources.length > 0 ? [] : completeMention(word, cwd);
    return { now: [...resources, ...files].slice(0, MAX_COMPLETIONS) };
  }
  const host = agent.host;
  const target = host ? argumentAt(chatPromptCommands(agent), before) : undefined;
  if (!host || !target) return { now: [] };
  const names =
    target.named || word.includes('=') || /^["']/.test(word)
      ? []
      : (target.command.prompt.arguments ?? [])
          .filter((a) => !Object.hasOwn(target.given, a.name) && `${a.name}=`.startsWith(word))
          .map((a) => `${a.name}=`);
  const later = completePromptArgument(host, target).then((values) =>
    values.map((value) => argumentWord(target, value)),
  );
  return { now: names, later };
}

/**
 * Tells `notice` once per server whose prompts or resources could not be listed (the server serves on without
 * them); returns the unsubscribe function.
 */
export function watchListingFailures(agent: RunningAgent, notice: (text: string) => void): () => void {
  const host = agent.host;
  if (!host) return () => {};
  const told = new Set<string>();
  const tell = (server: string, message: string) => {
    if (!message.startsWith('listing ') || told.has(`${server}\u0000${message}`)) return;
    told.add(`${server}\u0000${message}`);
    notice(`${server}: ${message}`);
  };
  for (const server of host.servers()) for (const message of server.diagnostics) tell(server.name, message);
  return host.on((event) => {
    if (event.type === 'diagnostic') tell(event.server, event.message);
  });
}
