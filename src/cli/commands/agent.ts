import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type RunningAgent, secretMaskerFor, startAgent } from '../../agent/agent.js';
import type { ApprovalRequest, ApproveMode, Approver } from '../../agent/approval.js';
import { APPROVE_MODES } from '../../agent/approval.js';
import { estimateTokens } from '../../agent/compaction.js';
import { systemPrompt } from '../../agent/context.js';
import type { AgentEvent, EndReason } from '../../agent/events.js';
import type { DefinitionReviewer } from '../../agent/held.js';
import { type AgentInteraction, elicitationValue } from '../../agent/interaction.js';
import { type ResolvedModel, resolveModel } from '../../agent/model.js';
import { DEFAULT_CONTEXT_WINDOW, type Limits, type RunResult } from '../../agent/options.js';
import { usageText } from '../../agent/prices.js';
import { isUserCommand, prepareTurn } from '../../agent/user-turn.js';
import type { TackConfig } from '../../config/load.js';
import { errorMessage, requirePackages, TackError } from '../../errors.js';
import type { McpHost } from '../../mcp/host.js';
import { earlierSessions, type SessionRow, sessionSummary } from '../../store/sessions.js';
import { startTelemetry } from '../../telemetry/start.js';
import {
  countTokensMany,
  TOOL_TOKENS_BASIS,
  tokenCounting,
  toolDefinitionsTokens,
} from '../../tokens/count.js';
import { createChatTui } from '../../tui/chat-tui.js';
import { printableJson } from '../../util/printable.js';
import { maskSecrets, type SecretMasker } from '../../util/secrets.js';
import { describeFinding } from '../findings.js';
import {
  type InputLines,
  inputLines,
  isTerminal,
  print,
  printErr,
  printJson,
  printJsonLine,
  type Questions,
  questions,
  table,
  warn,
  write,
  writeErr,
} from '../output.js';
import { type GlobalOptions, loadCliConfig } from '../with-host.js';

export interface AgentCliOptions extends GlobalOptions {
  model?: string;
  /** `--fallback a,b`: instead of `agent.fallback`. */
  fallback?: string[];
  approve?: string;
  maxSteps?: number;
  maxCost?: number;
  resume?: string;
  trustProject?: boolean;
  /** `tack chat --plain`: the line-based chat even in a terminal. */
  plain?: boolean;
}

/**
 * Exit codes of `tack run`: what a script needs to tell a finished task from a stopped one. A run that completed
 * although calls were refused for want of someone to ask is 4: its answer was reached without those tools.
 */
export function exitCodeOf(reason: EndReason, refusedUnasked = 0): number {
  if (reason === 'completed') return refusedUnasked > 0 ? 4 : 0;
  if (reason === 'aborted') return 130;
  if (reason === 'error') return 1;
  return 3; // a limit, or loop detection: the task is not done
}

/** Whether streamed answer text left a line open on stdout (see endAnswerLine). */
let answerLineOpen = false;

/** Ends the line an answer streamed without a final newline, so what is printed next starts on its own. */
function endAnswerLine(): void {
  if (answerLineOpen) write('\n');
  answerLineOpen = false;
}

/** What the terminal shows while a session works: the answer on stdout, everything else on stderr. */
export function renderEvent(event: AgentEvent, json: boolean): void {
  if (json) {
    printJsonLine(event);
    return;
  }
  if (event.type === 'text-delta') {
    write(event.text);
    if (event.text !== '') answerLineOpen = !event.text.endsWith('\n');
    return;
  }
  // The answer of a step that broke off stays on its line; the fallback's answer starts on the next.
  if (event.type === 'model-fallback') endAnswerLine();
  const line = describeEvent(event);
  if (line !== undefined) printErr(line);
}

/** One event as a line for stderr; undefined for those the terminal does not show. */
function describeEvent(event: AgentEvent): string | undefined {
  switch (event.type) {
    case 'tool-call':
      // A script's calls (run_code), indented under it: the model never sees their results, the user does.
      return event.parentCallId
        ? `  [script] → ${event.name} ${compact(event.arguments)}`
        : `\n→ ${event.name} ${compact(event.arguments)}`;
    case 'tool-result': {
      const waited = event.waitMs !== undefined ? `, ${event.waitMs} ms waiting for approval` : '';
      return `${event.parentCallId ? '  [script] ' : ''}← ${event.isError ? 'error: ' : ''}${firstLine(event.text)} (${event.durationMs} ms${waited}${event.savedTo ? `, full output in ${event.savedTo}` : ''})`;
    }
    case 'approval':
      return event.decision === 'deny' ? `✗ ${event.name} not run: ${event.reason}` : undefined;
    case 'compaction':
      return `(compacted: ${event.tokensBefore} → ${event.tokensAfter} tokens; ${event.elidedToolResults} tool outputs elided, ${event.summarizedMessages} messages summarised)`;
    case 'subagent-start':
      return `[task] started: ${event.description}`;
    case 'subagent': {
      // A sub-agent's work, indented under the task call (its steps and usage are not shown).
      const inner = describeEvent(event.event);
      return inner === undefined ? undefined : `  [task] ${inner.trim()}`;
    }
    case 'subagent-end':
      return `[task] ${event.reason}: ${event.detail}`;
    case 'notice':
      return `note: ${event.text}`;
    case 'model-fallback':
      return `fallback: ${event.from} failed (${event.reason}); step ${event.step} and the rest of the run go to ${event.to}`;
    case 'error':
      return `error: ${event.message}`;
    case 'session-end':
      return `\n[${event.reason}] ${event.detail}; ${event.total.inputTokens} in${event.total.cachedInputTokens > 0 ? ` (${event.total.cachedInputTokens} cached)` : ''} / ${event.total.outputTokens} out tokens, $${event.total.costUsd.toFixed(4)}`;
    default:
      return undefined;
  }
}

function compact(value: unknown): string {
  const text = printableJson(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

function firstLine(text: string): string {
  const line =
    text
      .replace(/^<tool_result[^>]*>\n?/, '')
      .split('\n')
      .find((l) => l.trim()) ?? '';
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

// Approval prompts mask with the rules transcripts and logs use (util/secrets.ts); re-exported for callers.
export { maskSecrets };

/**
 * Asks at the terminal: the server, the tool, its description's hash, its capability labels, why it asks and the
 * full arguments (secrets masked); once, always this session, always (saved to the user config), or deny.
 */
function terminalApprover(masker: SecretMasker): Approver {
  return async (request: ApprovalRequest) => {
    const labels = [
      ...request.capabilities.map((l) => `${l.capability} (${l.source}: ${l.why})`),
      ...(request.ruledOut ?? []).map((l) => `no ${l.capability} (${l.source}: ${l.why})`),
    ].join(', ');
    writeErr(
      `\nApprove ${request.tool}${request.server ? ` (server ${request.server})` : ''}? It ${request.why}.\n` +
        `  description sha256:${request.descriptionSha256.slice(0, 12)}\n` +
        (labels ? `  capabilities: ${labels}\n` : '') +
        `  arguments:\n${printableJson(maskSecrets(request.arguments, masker), 2).replace(/^/gm, '    ')}\n`,
    );
    const always = request.alwaysRule ? `  [a] always (adds ${request.alwaysRule} to the user config)` : '';
    const answer = (await ask(`[y] once  [s] always this session${always}  [N] deny: `)).trim().toLowerCase();
    if (answer === 's') return { decision: 'allow', remember: 'session' };
    if (answer === 'a' && request.alwaysRule) return { decision: 'allow', remember: 'always' };
    return answer === 'y' || answer === 'yes' ? { decision: 'allow' } : { decision: 'deny' };
  };
}

/** A held definition at the terminal: why it is held, the diff against the pin; accept it or leave it held. */
function terminalReviewer(): DefinitionReviewer {
  return async (held, diff) => {
    // Each finding with its field, the words that raised it and why it matters, as `tack scan` shows it.
    const findings = held.findings.filter((f) => f.severity === 'high' || f.severity === 'medium');
    writeErr(
      `\n${held.server}: ${held.reason}.\n${diff}\n` +
        (findings.length ? 'The scan found:\n' : '') +
        findings.flatMap((f) => describeFinding(f, '  ')).join('\n') +
        (findings.length ? '\n' : ''),
    );
    const answer = (await ask(`Accept this ${held.kind} and use it? [y/N]: `)).trim().toLowerCase();
    return answer === 'y' || answer === 'yes';
  };
}

/**
 * One readline for the whole process: a new one per question would drop lines typed ahead. In a terminal,
 * readline takes Ctrl-C itself; it is passed on as the interrupt of the run in flight (see runWithInterrupt).
 */
let prompts: Questions | undefined;
let interruptRun: (() => void) | undefined;

async function ask(question: string): Promise<string> {
  if (!prompts) {
    prompts = questions({ terminal: process.stdin.isTTY === true });
    prompts.onInterrupt(() => {
      if (interruptRun) interruptRun();
      else writeErr('\n(type /exit to leave)\n');
    });
  }
  return prompts.ask(question);
}

function closePrompts(): void {
  prompts?.close();
  prompts = undefined;
}

/** Servers' questions and sampling requests, at the terminal. */
function terminalInteraction(): AgentInteraction {
  return {
    async elicit(question) {
      writeErr(`\n${question.server} asks: ${question.message}\n`);
      if (question.url) {
        writeErr(`Open ${question.url}\n`);
        const go = (await ask('Continue when done? [y/N]: ')).trim().toLowerCase();
        return { action: go === 'y' ? 'accept' : 'decline' };
      }
      const properties = (question.requestedSchema?.properties ?? {}) as Record<
        string,
        { type?: string; description?: string }
      >;
      const content: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(properties)) {
        const raw = await ask(`  ${name}${schema.description ? ` (${schema.description})` : ''}: `);
        content[name] = elicitationValue(schema.type, raw);
      }
      const send = (await ask('Send this answer? [Y/n]: ')).trim().toLowerCase();
      return send === 'n' ? { action: 'decline' } : { action: 'accept', content };
    },
    async approveSampling(request) {
      writeErr(
        `\n${request.server} wants the model to write up to ${request.maxTokens} tokens from:\n` +
          request.messages.map((m) => `  ${m.role}: ${m.text}`).join('\n'),
      );
      return (await ask('\nAllow? [y/N]: ')).trim().toLowerCase() === 'y';
    },
  };
}

function approveMode(value: string | undefined): ApproveMode | undefined {
  if (value === undefined) return undefined;
  if (!(APPROVE_MODES as readonly string[]).includes(value))
    throw new TackError('USAGE', `--approve must be one of ${APPROVE_MODES.join(', ')}, got "${value}"`);
  return value as ApproveMode;
}

/** Who answers the session's questions and draws its events instead of the line-based terminal (the TUI). */
interface Frontend {
  approver: Approver;
  reviewer: DefinitionReviewer;
  interaction: AgentInteraction;
  onEvent(event: AgentEvent): void;
}

async function open(
  options: AgentCliOptions,
  extra: {
    json?: boolean;
    servers?: boolean;
    onEvent?: (event: AgentEvent) => void;
    frontend?: Frontend;
    config?: TackConfig;
    /** The model already resolved (the full-screen chat resolves it to switch back to it). */
    model?: ResolvedModel;
    /** Told the MCP host before its servers connect (the full-screen chat shows them coming up). */
    onHost?: (host: McpHost) => void;
    /** Where start warnings go instead of stderr (the full screen shows them in place). */
    onWarning?: (message: string) => void;
  } = {},
): Promise<RunningAgent> {
  const config = extra.config ?? (await loadCliConfig(options));
  const interactive = process.stdin.isTTY === true && !extra.json;
  const frontend = extra.frontend;
  const limits: Partial<Limits> = {
    ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
    ...(options.maxCost ? { maxCostUsd: options.maxCost } : {}),
  };
  const mode = approveMode(options.approve);
  const agent = await startAgent({
    config,
    ...(extra.model ? { model: extra.model } : options.model ? { model: options.model } : {}),
    ...(options.fallback ? { fallback: options.fallback } : {}),
    ...(mode ? { approve: mode } : {}),
    ...(frontend
      ? {
          approver: frontend.approver,
          interaction: frontend.interaction,
          session: { pins: { reviewer: frontend.reviewer } },
        }
      : interactive
        ? {
            approver: terminalApprover(secretMaskerFor(config)),
            interaction: terminalInteraction(),
            session: { pins: { reviewer: terminalReviewer() } },
          }
        : {}),
    trustProject: options.trustProject === true,
    limits,
    ...(options.resume ? { resume: options.resume } : {}),
    ...(extra.servers === false ? { servers: false } : {}),
    onEvent: (event) => {
      if (frontend) frontend.onEvent(event);
      else renderEvent(event, extra.json === true);
      extra.onEvent?.(event);
    },
    ...(extra.onHost ? { onHost: extra.onHost } : {}),
    onWarning: (warning) => (extra.onWarning ?? warn)(warning.message),
  });
  return endOnSignals(agent);
}

/** Signals that end a run or chat, with the exit code a shell gives a process they kill (128 + number). */
const ENDING_SIGNALS: ReadonlyArray<[NodeJS.Signals, number]> = [
  ['SIGTERM', 143],
  ['SIGHUP', 129],
  ['SIGINT', 130],
];

/**
 * SIGTERM, SIGHUP and a SIGINT nobody else handles (no run in flight to interrupt) end the process as they would
 * by default, after the session wrote its `session-end`: without it the transcript and the index would show the
 * session running forever. Handlers are removed when the agent is closed.
 */
function endOnSignals(agent: RunningAgent): RunningAgent {
  const offs = ENDING_SIGNALS.map(([signal, code]) => {
    const handler = () => {
      // A run in flight takes Ctrl-C itself: it interrupts the run, not the session (runWithInterrupt).
      if (signal === 'SIGINT' && process.listenerCount('SIGINT') > 1) return;
      agent.session.close(`stopped by ${signal}`);
      process.exit(code);
    };
    process.on(signal, handler);
    return () => process.off(signal, handler);
  });
  const close = agent.close;
  return {
    ...agent,
    close: async () => {
      for (const off of offs) off();
      await close();
    },
  };
}

/** Ctrl-C aborts the run in flight (not the session); a second Ctrl-C leaves. */
async function runWithInterrupt(agent: RunningAgent, task: string): Promise<RunResult> {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    writeErr('\n(interrupted; Ctrl-C again to quit)\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  interruptRun = onSigint;
  try {
    return await agent.session.run(task, { signal: controller.signal });
  } finally {
    process.off('SIGINT', onSigint);
    interruptRun = undefined;
  }
}

/**
 * `tack run` and `tack chat` export their spans over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the SDK is loaded
 * only then), flushed before the command returns: after an answer, an error or a Ctrl-C that ended the run. A
 * second Ctrl-C leaves at once, and what was not sent yet is lost.
 */
async function traced(command: () => Promise<number>): Promise<number> {
  const telemetry = await startTelemetry(process.env);
  try {
    return await command();
  } finally {
    await telemetry.shutdown();
  }
}

/** `tack run "<task>"`: headless; the answer streams to stdout, the exit code says how the run ended. */
export function runCommand(task: string | undefined, options: AgentCliOptions): Promise<number> {
  return traced(() => runTask(task, options));
}

async function runTask(task: string | undefined, options: AgentCliOptions): Promise<number> {
  const refused: Array<{ name: string; reason: string }> = [];
  const agent = await open(options, {
    json: options.json === true,
    onEvent: (event) => {
      if (event.type === 'approval' && event.unasked)
        refused.push({ name: event.name, reason: event.reason });
    },
  });
  try {
    if (agent.resumed) for (const note of agent.resumed.notes) writeErr(`resume: ${note}\n`);
    const text = task ?? (agent.resumed ? 'Continue where you left off.' : undefined);
    if (!text) throw new TackError('USAGE', 'no task given', { hint: 'tack run "<what to do>"' });
    const result = await runWithInterrupt(agent, text);
    if (!options.json) write('\n');
    if (refused.length > 0) writeErr(refusedSummary(refused));
    writeErr(`session ${agent.session.id} (tack run --resume ${agent.session.id.split('-').at(-1)} "...")\n`);
    return exitCodeOf(result.reason, refused.length);
  } finally {
    closePrompts();
    await agent.close();
  }
}

/** Which calls a headless run refused without asking, and the three ways to let them through next time. */
function refusedSummary(refused: ReadonlyArray<{ name: string; reason: string }>): string {
  const byTool = new Map<string, string>();
  for (const { name, reason } of refused) if (!byTool.has(name)) byTool.set(name, reason);
  const lines = [...byTool].map(([name, reason]) => `  ${name}: ${reason}`);
  const example = JSON.stringify({ permissions: { allow: [...byTool.keys()].slice(0, 2) } });
  return (
    `${refused.length} call${refused.length === 1 ? ' was' : 's were'} refused: nobody could be asked to approve ${refused.length === 1 ? 'it' : 'them'}\n` +
    `${lines.join('\n')}\n` +
    'To allow them: run in a terminal (you are asked), pass --approve auto-read-only (tools hinted read-only), ' +
    `or add an allow rule to tack.json, e.g. ${example}\n`
  );
}

/**
 * Whether `tack chat` draws its full-screen interface: both ends are a terminal that can take it, and the user
 * did not ask for the line mode. Anything else (a pipe, CI, TERM=dumb, --plain) gets the line-based chat.
 * CI is read as Ink reads it (`CI` or `CONTINUOUS_INTEGRATION` set, not "0" or "false"): there Ink only draws
 * the last frame when the app exits, so a full screen would stay blank for the whole conversation.
 */
export function wantsFullScreen(
  options: Pick<AgentCliOptions, 'plain'>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  return (
    options.plain !== true &&
    process.stdin.isTTY === true &&
    isTerminal('stdout') &&
    env.TERM !== 'dumb' &&
    env.TACK_PLAIN !== '1' &&
    !flagSet(env.CI) &&
    !flagSet(env.CONTINUOUS_INTEGRATION)
  );
}

function flagSet(value: string | undefined): boolean {
  return value !== undefined && value !== '0' && value !== 'false';
}

/**
 * `tack chat`: the full-screen interface in a terminal (src/tui, loaded only here), else the line mode; with stdin
 * not a terminal (`printf 'question\n/exit\n' | tack chat --plain`) each line is a turn or a command. Nothing is
 * refused: a pipe cannot answer an approval, so calls that would ask are refused as `tack run` refuses them.
 */
export async function chatCommand(options: AgentCliOptions): Promise<number> {
  return traced(() =>
    wantsFullScreen(options) && screenInstalled() ? fullScreenChat(options) : lineChat(options),
  );
}

/** What the full-screen chat draws with: optional packages of tack, part of the command line's install (README). */
const SCREEN_PACKAGES = ['ink', 'react', 'marked', 'marked-terminal'];

/** Whether the full-screen chat can load; if not, says so and why, and the chat goes on in the line mode. */
function screenInstalled(): boolean {
  try {
    requirePackages('The full-screen chat', SCREEN_PACKAGES);
    return true;
  } catch (error) {
    if (!TackError.isInstance(error)) throw error;
    warn(`${error.message}: the chat runs in the line mode. ${error.hint ?? ''}`);
    return false;
  }
}

async function fullScreenChat(options: AgentCliOptions): Promise<number> {
  // NO_COLOR (https://no-color.org): every chalk the interface loads reads FORCE_COLOR, so it is set first.
  const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '';
  if (noColor) process.env.FORCE_COLOR = '0';
  // Ink and React take a while to load (seconds on a busy machine): they load while the configuration is read
  // and the session starts (the screen's state lives in modules without them).
  const screen = import('../../entries/tui.js');
  screen.catch(() => {
    // Awaited below; a failure to load is reported there.
  });
  const config = await loadCliConfig(options);
  const model = resolveModel(options.model ?? config.agent.model);
  const tui = createChatTui(model.spec);
  // The screen is drawn before the session has started (MCP servers take seconds, a cold `npx` one much longer):
  // the chat shows them coming up and takes input meanwhile.
  const starting = open(options, {
    frontend: tui,
    config,
    model,
    onHost: tui.onHost,
    onWarning: tui.onWarning,
  });
  let agent: RunningAgent | undefined;
  starting.then(
    (started) => {
      agent ??= started;
    },
    () => {
      // runChatTui ends the chat and rethrows the error.
    },
  );
  try {
    const { runChatTui } = await screen;
    return await runChatTui(starting, tui, {
      cwd: process.cwd(),
      window: config.agent.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
      masker: secretMaskerFor(config),
      noColor,
      // /resume and /model: the session started as `tack chat --resume <id>` starts it, into the same screen.
      switcher: {
        model,
        resolveModel: (spec) => resolveModel(spec),
        start: ({ resume, model }) => open({ ...options, resume }, { frontend: tui, config, model }),
        onAgent: (next) => {
          agent = next;
        },
      },
    });
  } finally {
    if (!agent) {
      // Left while the servers were still coming up: stop them rather than wait for a slow one, then close
      // what the start made.
      await tui.progress.host?.close();
      agent = await starting.catch(() => undefined);
    }
    if (agent) {
      await agent.close();
      sayHowToResume(agent);
    }
  }
}

/** The last line of a chat: how to come back to it. */
function sayHowToResume(agent: RunningAgent): void {
  writeErr(`session ${agent.session.id} (tack chat --resume ${agent.session.id.split('-').at(-1)})\n`);
}

/**
 * The line-based chat: answers on stdout, everything else on stderr, questions at a prompt. With stdin not a
 * terminal the lines are read from it (no prompt), one turn or command each, until its end or /exit; the exit code
 * is 0 when every turn completed, else `tack run`'s code for the first that did not (4 for calls refused unasked).
 */
async function lineChat(options: AgentCliOptions): Promise<number> {
  const config = await loadCliConfig(options);
  let model = resolveModel(options.model ?? config.agent.model);
  const piped = process.stdin.isTTY !== true;
  const refused: Array<{ name: string; reason: string }> = [];
  const onEvent = (event: AgentEvent) => {
    if (event.type === 'approval' && event.unasked) refused.push({ name: event.name, reason: event.reason });
  };
  let agent = await open(options, { config, model, onEvent });
  const lines: InputLines | undefined = piped ? inputLines() : undefined;
  let code = 0;
  const listed: ResumeList = { rows: [] };
  /** The running agent was closed and none replaced it (a failed switch): nothing to close at the end. */
  let closed = false;
  const commands = '/tools /skills /cost /compact /resume /model /exit';

  /**
   * Continues session `resume` on `next` (the same steps as the full screen's /resume and /model): the running
   * session closes first (one writer per transcript); one that cannot be opened brings the chat back.
   */
  const switchTo = async (resume: string, next: ResolvedModel) => {
    const old = agent;
    await old.close();
    try {
      agent = await open({ ...options, resume }, { config, model: next, onEvent });
      model = next;
    } catch (error) {
      warn(`cannot open session ${resume}: ${errorMessage(error)}`);
      // If the session it was on cannot be opened again either, that error ends the chat (nothing is left open).
      closed = true;
      agent = await open({ ...options, resume: old.session.id }, { config, model, onEvent });
      closed = false;
    }
    for (const note of agent.resumed?.notes ?? []) warn(`resume: ${note}`);
    const turns = agent.session.messages.filter((m) => m.role === 'user').length;
    writeErr(`session ${agent.session.id}, ${model.spec}; ${turns} earlier message(s)\n`);
  };

  try {
    writeErr(`tack chat: session ${agent.session.id}; ${commands}\n`);
    for (;;) {
      let line: string;
      if (lines) {
        const next = await lines.next();
        if (next === undefined) return code; // end of input
        line = next.trim();
      } else {
        try {
          line = (await ask('\n> ')).trim();
        } catch {
          return code; // stdin closed
        }
      }
      if (line === '') continue;
      const [name, ...rest] = line.split(/\s+/);
      const arg = rest.join(' ');
      if (name === '/exit' || name === '/quit') return code;
      if (name === '/tools') {
        print(
          agent.session
            .tools()
            .map((t) => `${t.name}${t.server ? `  (${t.server})` : ''}`)
            .join('\n'),
        );
      } else if (name === '/skills') {
        const part = agent.session.systemParts.find((p) => p.name === 'skills index');
        print(part?.text ?? 'no skills');
      } else if (name === '/cost') {
        print(usageText(agent.session.usage));
        // After a fallback, what each model's steps took, at its own prices.
        const byModel = agent.session.usageByModel;
        if (byModel.size > 1)
          for (const [spec, m] of byModel)
            print(`  ${spec}: ${m.inputTokens} in, ${m.outputTokens} out, $${m.costUsd.toFixed(4)}`);
      } else if (name === '/compact') {
        const done = await agent.session.compact();
        if (!done) print('nothing to compact');
      } else if (name === '/model') {
        if (!arg) {
          print(`${model.spec} (/model <provider:id> switches from the next turn)`);
          continue;
        }
        let next: ResolvedModel;
        try {
          next = resolveModel(arg);
        } catch (error) {
          warn(`/model ${arg}: ${errorMessage(error)}`);
          continue;
        }
        await switchTo(agent.session.id, next);
      } else if (name === '/resume') {
        const picked = await resumeTarget(agent, arg, listed);
        if (picked !== undefined) await switchTo(picked, model);
      } else {
        // Prompt and skill commands, @file and @server:uri, as the full screen sends them.
        if (name?.startsWith('/') && !isUserCommand(agent, name)) {
          print(`unknown command ${name}: ${commands} (and the prompt and skill commands)`);
          continue;
        }
        let turn: Awaited<ReturnType<typeof prepareTurn>>;
        try {
          turn = await prepareTurn(agent, line, process.cwd());
        } catch (error) {
          warn(
            TackError.isInstance(error) && error.hint
              ? `${error.message} (${error.hint})`
              : errorMessage(error),
          );
          continue;
        }
        for (const note of turn.notes) writeErr(`${note}\n`);
        const before = refused.length;
        const result = await runWithInterrupt(agent, turn.message);
        write('\n');
        if (code === 0) code = exitCodeOf(result.reason, refused.length - before);
      }
    }
  } finally {
    lines?.close();
    if (refused.length > 0) writeErr(refusedSummary(refused));
    closePrompts();
    if (!closed) {
      await agent.close();
      sayHowToResume(agent);
    }
  }
}

/** How many of the folder's sessions /resume lists in the line mode. */
const RESUME_LIST = 10;

/** The sessions /resume listed last, so `/resume 2` names one. */
interface ResumeList {
  rows: SessionRow[];
}

/**
 * The line mode's /resume: alone it lists the folder's earlier sessions (into `listed`); with a number of that list,
 * an id or an id's tail it gives the session to continue. Undefined when there is none to continue (it says why).
 */
async function resumeTarget(
  agent: RunningAgent,
  arg: string,
  listed: ResumeList,
): Promise<string | undefined> {
  const sessions = agent.store?.sessions;
  if (!sessions) {
    warn('/resume: the tack store is not open (use tack chat --resume <id>)');
    return undefined;
  }
  if (!arg) {
    try {
      listed.rows = await earlierSessions(sessions, {
        cwd: process.cwd(),
        current: agent.session.id,
        limit: RESUME_LIST,
      });
    } catch (error) {
      warn(`/resume: cannot read the session index: ${errorMessage(error)}`);
      return undefined;
    }
    print(
      listed.rows.length === 0
        ? 'no earlier sessions in this folder'
        : `${listed.rows.map((row, i) => `${i + 1}. ${sessionSummary(row)}`).join('\n')}\n/resume <number or id> continues one`,
    );
    return undefined;
  }
  // One or two digits name an entry of the last list, never an id prefix: `/resume 7` must not open whichever
  // session's id happens to start with 7. Anything longer (an all-digit id tail too) is an id.
  let picked = arg;
  if (/^\d{1,2}$/.test(arg)) {
    const index = Number(arg);
    if (index < 1 || index > listed.rows.length) {
      warn(
        listed.rows.length === 0
          ? `/resume ${arg}: no list to pick from; /resume lists the earlier sessions`
          : `/resume ${arg}: the list has entries 1 to ${listed.rows.length}`,
      );
      return undefined;
    }
    picked = listed.rows[index - 1]!.id;
  }
  try {
    // An ambiguous prefix is told before anything closes.
    await sessions.findByPrefix(picked);
  } catch (error) {
    warn(`/resume ${arg}: ${errorMessage(error)}`);
    return undefined;
  }
  return picked;
}

/** `tack context`: what the next turn would send, part by part, with token counts. */
export async function contextCommand(options: AgentCliOptions): Promise<number> {
  const config = await loadCliConfig(options);
  const model = options.model ?? config.agent.model;
  // The context does not depend on the model and none is called: no key is needed to show it.
  const agent = await startAgent({
    config,
    model: {
      model: 'none',
      spec: model ?? 'none',
      provider: 'none',
      id: model?.slice(model.indexOf(':') + 1) ?? 'none',
    },
    transcript: false,
    trustProject: options.trustProject === true,
    approve: 'never',
    onWarning: (warning) => warn(warning.message),
  });
  try {
    // Counted through the store's cache of counts: a second look at the same context loads no tokenizer.
    const cache = agent.host?.store?.tokenCounts;
    const parts = agent.session.systemParts;
    const partTokens = await countTokensMany(
      parts.map((part) => part.text),
      cache,
      model,
    );
    const rows: Array<{ part: string; source: string; tokens: number }> = parts.map((part, i) => ({
      part: `system: ${part.name}`,
      source: part.source ?? '',
      tokens: partTokens[i]!,
    }));
    const tools = agent.session.tools();
    const toolTokens = await toolDefinitionsTokens(tools, cache, model);
    const byServer = new Map<string, { tools: number; tokens: number }>();
    tools.forEach((tool, i) => {
      const key = tool.server ?? 'tack';
      const entry = byServer.get(key) ?? { tools: 0, tokens: 0 };
      entry.tools++;
      entry.tokens += toolTokens[i]!;
      byServer.set(key, entry);
    });
    for (const [server, { tools, tokens }] of byServer)
      rows.push({ part: `tools: ${server}`, source: `${tools} tools`, tokens });
    rows.push({
      part: 'history',
      source: `${agent.session.messages.length} messages`,
      tokens: estimateTokens(agent.session.messages),
    });
    const total = rows.reduce((n, r) => n + r.tokens, 0);
    if (options.json) {
      printJson({
        model: model ?? null,
        parts: rows,
        total,
        counted: {
          tokenizer: tokenCounting(model).tokenizer,
          tools: TOOL_TOKENS_BASIS,
          history: 'estimated',
        },
        system: systemPrompt(agent.session.systemParts),
      });
    } else {
      print(
        table(
          ['PART', 'TOKENS', 'SOURCE'],
          [...rows.map((r) => [r.part, String(r.tokens), r.source]), ['total', String(total), '']],
        ),
      );
      print(
        `\nTOKENS (${tokenCounting(model).label}): system: the text of each part, sent in this order, stable first; tools: ${TOOL_TOKENS_BASIS}, as \`tack tools\` counts them; history: estimated.`,
      );
    }
    return 0;
  } finally {
    await agent.close();
  }
}

interface EvalCase {
  id?: string;
  prompt: string;
  /** A substring (or /regex/) the answer must contain. */
  expect?: string;
}

/**
 * `tack eval <prompts.jsonl>`: each prompt in a fresh session with the current guidelines; the outputs are
 * recorded with the guidelines hash, so a guidelines change can be compared before it ships.
 */
export async function evalCommand(file: string, options: AgentCliOptions): Promise<number> {
  const cases = readPromptsFile(file)
    .split('\n')
    .map((line, i) => ({ line, i }))
    .filter(({ line }) => line.trim() !== '')
    .map(({ line, i }) => {
      try {
        const parsed = JSON.parse(line) as EvalCase;
        if (typeof parsed.prompt !== 'string') throw new Error('"prompt" must be a string');
        return parsed;
      } catch (error) {
        throw new TackError('USAGE', `${file}:${i + 1}: ${(error as Error).message}`, {
          hint: 'Each line: {"id": "...", "prompt": "...", "expect": "substring or /regex/"}',
        });
      }
    });
  const config = await loadCliConfig(options);
  const outDir = join(config.paths.stateDir, 'evals');
  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, `${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`);
  const records: string[] = [];
  let failed = 0;
  for (const [i, c] of cases.entries()) {
    const agent = await open({ ...options, approve: options.approve ?? 'never' }, { json: false });
    try {
      let answer = '';
      const result = await agent.session.run(c.prompt);
      answer = result.answer ?? '';
      const pass = c.expect === undefined ? undefined : matches(answer, c.expect);
      if (pass === false || result.reason !== 'completed') failed++;
      records.push(
        JSON.stringify({
          id: c.id ?? String(i + 1),
          prompt: c.prompt,
          answer,
          reason: result.reason,
          pass: pass ?? null,
          guidelinesHash: agent.session.guidelines.hash,
          model: options.model ?? config.agent.model,
          session: agent.session.id,
          usage: result.usage,
        }),
      );
      // The answer streamed to stdout as it came; end its line so the next case and the summary start apart.
      endAnswerLine();
      writeErr(`${c.id ?? i + 1}: ${result.reason}${pass === undefined ? '' : pass ? ' pass' : ' FAIL'}\n`);
    } finally {
      await agent.close();
    }
  }
  writeFileSync(out, `${records.join('\n')}\n`);
  print(
    `${cases.length} prompts, ${failed} failed or unfinished; outputs with the guidelines hash in ${out}`,
  );
  return failed > 0 ? 1 : 0;
}

/** The prompts file's text; a file that cannot be read is a usage error naming it, not a crash. */
function readPromptsFile(file: string): string {
  try {
    return readFileSync(resolve(file), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'not found' : code === 'EISDIR' ? 'is a folder, not a file' : errorMessage(error);
    throw new TackError('USAGE', `prompts file ${file}: ${why}`, {
      subject: { file },
      hint: 'Give a JSONL file with one {"id": "...", "prompt": "...", "expect": "substring or /regex/"} per line: tack eval prompts.jsonl',
      cause: error,
    });
  }
}

function matches(answer: string, expect: string): boolean {
  const regex = /^\/(.*)\/([a-z]*)$/.exec(expect);
  return regex ? new RegExp(regex[1]!, regex[2]).test(answer) : answer.includes(expect);
}
