import type { RunningAgent } from '../agent/agent.js';
import { chatPromptCommands, skillCommands } from '../agent/user-turn.js';
import { argumentAt, argumentWord, completePromptArgument } from '../mcp/prompt-command.js';
import { completeResourceMention } from '../mcp/resource-mention.js';
import { completeCommand } from './commands.js';
import type { EditorState } from './editor.js';
import { completeMention, MAX_COMPLETIONS } from './mentions.js';

// The turn itself (prompt and skill commands, mentions) is the library's: agent/user-turn.ts.
export { isUserCommand, prepareTurn, userCommandHelp } from '../agent/user-turn.js';

/**
 * What the user controls in the chat besides typing: the servers' prompts as `/mcp__server__prompt` commands,
 * skills as `/skill-name`, and resources as `@server:uri` mentions (next to `@file`). The library does the MCP
 * side (mcp/prompt-command.ts, mcp/resource-mention.ts) and the turn (agent/user-turn.ts); this module is Tab.
 */

/** Tab's options at once (`now`), and those a server is asked for (`later`, bounded by a short timeout). */
export interface InputCompletions {
  now: string[];
  later?: Promise<string[]>;
}

/**
 * Completions for the word at the cursor: a first word `/...` from the built-in, prompt and skill commands; an
 * argument of a prompt command from its names (`city=`) and the server's `completion/complete`; `@...` from the
 * folder's files and the servers' resources and templates (`@server:uri`). Before the session is up, only what
 * needs no server.
 */
export function completeInput(
  agent: RunningAgent | undefined,
  editor: EditorState,
  cwd: string,
): InputCompletions {
  const before = editor.text.slice(0, editor.cursor);
  const word = /\S*$/.exec(before)![0];
  if (word.startsWith('/') && before.trimStart() === word) {
    const names = [
      ...completeCommand(word),
      ...(agent ? chatPromptCommands(agent).map((c) => c.command) : []),
      ...(agent ? skillCommands(agent).map((c) => c.command) : []),
    ];
    return { now: [...new Set(names)].filter((n) => n.startsWith(word)).slice(0, MAX_COMPLETIONS) };
  }
  if (word.startsWith('@')) {
    const resources = agent?.host ? completeResourceMention(agent.host.catalog, word) : [];
    const files = word.slice(1).includes(':') && resources.length > 0 ? [] : completeMention(word, cwd);
    return { now: [...resources, ...files].slice(0, MAX_COMPLETIONS) };
  }
  const host = agent?.host;
  const target = agent && host ? argumentAt(chatPromptCommands(agent), before) : undefined;
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
