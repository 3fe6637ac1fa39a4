import type { RunningAgent } from '../agent/agent.js';
import { usageText } from '../agent/prices.js';
import { formatTokens } from './format.js';

/** The slash commands, in the order /help lists them. */
export const COMMANDS: ReadonlyArray<{ name: string; help: string }> = [
  { name: '/help', help: 'this list, and the keys' },
  { name: '/tools', help: 'the tools the next step offers, by server' },
  { name: '/skills', help: 'the skills the model may activate, and which are active' },
  { name: '/servers', help: 'each MCP server: up or down, and its tool count' },
  { name: '/cost', help: 'tokens and cost of this session' },
  { name: '/status', help: 'model, session, folder, servers, and the notes given at start' },
  { name: '/compact', help: 'compact the history now' },
  { name: '/resume', help: 'pick an earlier session of this folder and continue it (or /resume <id>)' },
  { name: '/model', help: 'show the model; /model <provider:id> switches it from the next turn' },
  { name: '/clear', help: 'clear the screen (the session and its history stay)' },
  { name: '/exit', help: 'leave (also /quit, Ctrl-D on an empty prompt)' },
];

export const KEYS: ReadonlyArray<[string, string]> = [
  ['Enter', 'send'],
  ['Alt-Enter, Ctrl-J, or \\ at the end of a line', 'new line'],
  ['Up / Down', 'move between lines; on the first or last line, recall earlier messages of this project'],
  ['Tab', 'complete a /command, a prompt argument, an @file or an @server:resource'],
  ['Ctrl-O', 'expand or fold the tool calls of the last turn (arguments and results, secrets masked)'],
  ['Esc', 'interrupt the current step (in a dialog: deny)'],
  ['Ctrl-C', 'interrupt the turn; on an empty prompt, twice to quit'],
  ['Ctrl-D', 'quit (on an empty prompt)'],
  ['Ctrl-U / Ctrl-W', 'delete to the start of the line / the word before the cursor'],
  ['y / s / a / n', 'in an approval: once / this session / always (saved) / deny'],
];

/** /help: the built-in commands, then `extra` (the servers' prompts and the skills, chat-input.ts), the keys. */
export function helpText(extra: ReadonlyArray<{ name: string; help: string }> = []): string {
  const width = COMMANDS.reduce((n, c) => Math.max(n, c.name.length), 0);
  const extraWidth = Math.min(
    48,
    extra.reduce((n, c) => Math.max(n, c.name.length), 0),
  );
  const keyWidth = KEYS.reduce((n, [k]) => Math.max(n, k.length), 0);
  return [
    ...COMMANDS.map((c) => `${c.name.padEnd(width)}  ${c.help}`),
    ...(extra.length > 0
      ? ['', 'Prompts and skills (name=value or values in order; quote values with spaces):']
      : []),
    ...extra.map((c) =>
      c.name.length > extraWidth ? `${c.name}\n    ${c.help}` : `${c.name.padEnd(extraWidth)}  ${c.help}`,
    ),
    '',
    ...KEYS.map(([k, what]) => `${k.padEnd(keyWidth)}  ${what}`),
    '',
    '@path in a message attaches that file (inside this folder) to it; @server:uri attaches a resource of an MCP',
    "server (a template's {variables} filled in).",
  ].join('\n');
}

export function toolsText(agent: RunningAgent): string {
  const tools = agent.session.tools();
  const byServer = new Map<string, string[]>();
  for (const tool of tools) {
    const key = tool.server ?? 'tack';
    const list = byServer.get(key) ?? [];
    list.push(tool.server ? tool.name.replace(`mcp__${tool.server}__`, '') : tool.name);
    byServer.set(key, list);
  }
  const lines = [...byServer].map(([server, names]) => `${server} (${names.length}): ${names.join(', ')}`);
  const total = agent.host?.catalog.tools.length ?? 0;
  if (agent.session.deferringTools)
    lines.push(
      `MCP tools are deferred: ${tools.filter((t) => t.server).length} of ${total} loaded; the model finds the rest with search_tools`,
    );
  const held = agent.session.held;
  if (held.length > 0)
    lines.push(`held back: ${held.map((h) => `${h.server} ${h.kind} ${h.name} (${h.why})`).join(', ')}`);
  return lines.join('\n') || 'no tools';
}

export function skillsText(agent: RunningAgent, active: readonly string[]): string {
  const skills = agent.skills.skills;
  if (skills.length === 0) return 'no skills';
  return skills
    .map((s) => {
      const description = s.description.replace(/\s+/g, ' ');
      return `${active.includes(s.name) ? '● ' : '  '}${s.name}  ${description.length > 100 ? `${description.slice(0, 99)}…` : description}`;
    })
    .join('\n');
}

export function serversText(agent: RunningAgent): string {
  const servers = agent.host?.servers() ?? [];
  if (servers.length === 0) return 'no MCP servers configured';
  return servers
    .map((s) => {
      const state = s.status === 'connected' ? 'up' : s.status === 'failed' ? 'DOWN' : s.status;
      const why = s.error
        ? `: ${s.error.message.split('\n')[0]}`
        : s.disabledReason
          ? `: ${s.disabledReason}`
          : '';
      return `${s.name.padEnd(16)} ${state.padEnd(10)} ${s.counts.tools} tools  ${s.transport}${why}`;
    })
    .join('\n');
}

export function costText(agent: RunningAgent): string {
  return usageText(agent.session.usage, formatTokens);
}

/** Completions for a word starting with `/`. */
export function completeCommand(word: string): string[] {
  return COMMANDS.map((c) => c.name).filter((name) => name.startsWith(word));
}
