import { MAX_ATTACHMENTS } from '../mcp/attachments.js';
import {
  expandPromptCommand,
  type PromptCommand,
  promptCommands,
  promptUsage,
} from '../mcp/prompt-command.js';
import { findResourceMentions, resolveResourceMentions } from '../mcp/resource-mention.js';
import type { SkillEntry } from '../skills/library.js';
import type { RunningAgent } from './agent.js';
import { fileAttachments } from './file-mentions.js';

/**
 * A user's turn from what they typed, with what MCP leaves to the user: a server's prompt as
 * `/mcp__server__prompt args`, a skill as `/skill-name`, a resource as `@server:uri`, next to `@file`. The chat's
 * full screen and line mode both send what prepareTurn makes; a program can too.
 */

/** The chat's own commands; a skill of the same name is left to them. */
export const BUILT_IN_COMMANDS: readonly string[] = [
  '/help',
  '/tools',
  '/skills',
  '/servers',
  '/status',
  '/cost',
  '/compact',
  '/resume',
  '/model',
  '/clear',
  '/exit',
  '/quit',
];

/** A skill the user invokes by name. */
export interface SkillCommand {
  command: string;
  skill: SkillEntry;
}

export function skillCommands(agent: RunningAgent): SkillCommand[] {
  return agent.skills.skills
    .map((skill) => ({ command: `/${skill.name}`, skill }))
    .filter((c) => !BUILT_IN_COMMANDS.includes(c.command) && !/\s/.test(c.command));
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

/** /help lists at most this many prompt and skill commands (the rest complete with Tab), each usage this long. */
const MAX_HELP_COMMANDS = 200;
const MAX_USAGE_CHARS = 200;

/** /help's lines for the prompt and skill commands (descriptions on one line, cut; a long list cut, said so). */
export function userCommandHelp(agent: RunningAgent): Array<{ name: string; help: string }> {
  const oneLine = (text: string | undefined, max = 80) => {
    const flat = (text ?? '').replace(/\s+/g, ' ').trim();
    return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  };
  const lines = [
    ...chatPromptCommands(agent).map((c) => ({
      name: oneLine(promptUsage(c), MAX_USAGE_CHARS),
      help: `prompt of ${c.server}${c.prompt.description ? `: ${oneLine(c.prompt.description)}` : ''}`,
    })),
    ...skillCommands(agent).map((c) => ({ name: c.command, help: `skill: ${oneLine(c.skill.description)}` })),
  ];
  if (lines.length <= MAX_HELP_COMMANDS) return lines;
  return [
    ...lines.slice(0, MAX_HELP_COMMANDS),
    { name: '…', help: `and ${lines.length - MAX_HELP_COMMANDS} more (type / and Tab to find them)` },
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
