import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { findProjectRoot } from '../config/paths.js';
import {
  DEFAULT_HOOK_TIMEOUT_MS,
  HOOK_EVENTS,
  type HookEntry,
  type HookEvent,
  type HooksConfig,
} from '../config/schema.js';
import { TackError } from '../errors.js';
import { pushAll } from '../util/arrays.js';
import { isRecord } from '../util/is-record.js';
import { type CappedRunResult, runCapped } from '../util/run-capped.js';

export { DEFAULT_HOOK_TIMEOUT_MS, HOOK_EVENTS, type HookEntry, type HookEvent, type HooksConfig };

/**
 * User commands run at session start and stop and around tool calls, as in Claude Code: one shell line each,
 * the event as JSON on stdin (Claude Code's field names, so existing hook scripts work unchanged), a decision as
 * JSON on stdout or exit code 2. A hook that fails in any other way is a warning: a broken script must not
 * silently block every tool call, and must not silently allow one either (it gives no decision; the policy does).
 */

/** Bytes kept of a hook's stdout and of its stderr each: a decision is small, context should be too. */
const MAX_OUTPUT_BYTES = 64 * 1024;

/** What a hook reads on stdin: Claude Code's input, with `hook_event_name` and `cwd` filled in by `runHooks`. */
export interface HookPayload {
  session_id: string;
  transcript_path?: string;
  cwd?: string;
  /** Model-visible name (`mcp__server__tool`, `activate_skill`); what `matcher` is tested against. */
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
  /** PostToolUse only. */
  tool_response?: unknown;
  /** SessionStart: `startup`, `resume`, `clear` or `compact`, as in Claude Code. */
  source?: string;
  /** Stop: true when the session is already continuing because a Stop hook blocked, so a hook can avoid loops. */
  stop_hook_active?: boolean;
  [field: string]: unknown;
}

export type HookDecision = 'allow' | 'deny' | 'ask';

export interface HookResult {
  /** Absent when no hook decided: the normal approval policy applies. On Stop, `deny` means "do not stop yet". */
  decision?: HookDecision;
  /** The reasons given by the hooks whose decision won, one per line. */
  reason?: string;
  /** Text for the model, in hook order. */
  additionalContext: string[];
  /** For the user (never the model): failures, timeouts, unparseable output, hooks' systemMessage. */
  warnings: string[];
}

export interface RunHooksOptions {
  cwd: string;
  /** Added to the safe environment (the SDK's default: PATH, HOME, USER, SHELL, TERM, LOGNAME). */
  env?: Record<string, string>;
  /** `$TACK_PROJECT_DIR`; default `findProjectRoot(cwd)`. */
  projectDir?: string;
  signal?: AbortSignal;
}

/** A hook's warnings, as the notices a session says them with (for the user, never the model). */
export function hookNotices(warnings: readonly string[]): Array<{ type: 'notice'; text: string }> {
  return warnings.map((warning) => ({ type: 'notice', text: `hook: ${warning}` }));
}

const RANK: Record<HookDecision, number> = { allow: 1, ask: 2, deny: 3 };

/**
 * Runs every hook of `event` whose matcher fits, in parallel (as Claude Code does), and merges what they say:
 * deny wins over ask over allow, because one hook's objection must not be outvoted by another's approval.
 */
export async function runHooks(
  hooks: HooksConfig | undefined,
  event: HookEvent,
  payload: HookPayload,
  options: RunHooksOptions,
): Promise<HookResult> {
  const result: HookResult = { additionalContext: [], warnings: [] };
  const entries = (hooks?.[event] ?? []).filter((entry) => matches(entry, event, payload, result.warnings));
  if (!entries.length) return result;
  throwIfAborted(options.signal);

  const input = JSON.stringify({ ...payload, hook_event_name: event, cwd: payload.cwd ?? options.cwd });
  const projectDir = options.projectDir ?? findProjectRoot(options.cwd);
  const env: Record<string, string> = {
    ...getDefaultEnvironment(),
    ...options.env,
    TACK_SESSION_ID: payload.session_id,
    TACK_PROJECT_DIR: projectDir,
    // Claude Code's name for the same folder, which existing hook scripts use to find themselves.
    CLAUDE_PROJECT_DIR: projectDir,
  };
  const runs = await Promise.all(
    entries.map((entry) =>
      // Hooks are user-written shell lines, as in Claude Code: `sh -c`, the payload on stdin.
      runCapped(['/bin/sh', '-c', entry.command], {
        cwd: options.cwd,
        env,
        input,
        timeoutMs: entry.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
        maxOutputBytes: MAX_OUTPUT_BYTES,
        signal: options.signal,
      }).then((run) => ({ ...run, timeoutMs: entry.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS })),
    ),
  );
  throwIfAborted(options.signal);

  const reasons: Record<HookDecision, string[]> = { allow: [], ask: [], deny: [] };
  entries.forEach((entry, index) => {
    const answer = interpret(entry, event, runs[index]!);
    pushAll(result.warnings, answer.warnings);
    pushAll(result.additionalContext, answer.additionalContext);
    if (!answer.decision) return;
    if (answer.reason) reasons[answer.decision].push(answer.reason);
    if (!result.decision || RANK[answer.decision] > RANK[result.decision]) result.decision = answer.decision;
  });
  if (result.decision && reasons[result.decision].length) result.reason = reasons[result.decision].join('\n');
  return result;
}

function matches(entry: HookEntry, event: HookEvent, payload: HookPayload, warnings: string[]): boolean {
  const matcher = entry.matcher;
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  const subject =
    event === 'PreToolUse' || event === 'PostToolUse'
      ? payload.tool_name
      : event === 'SessionStart'
        ? payload.source
        : undefined;
  if (subject === undefined) return true;
  try {
    // Anchored: `mcp__github` must not also catch `mcp__github_enterprise__delete_repo`.
    return new RegExp(`^(?:${matcher})$`).test(subject);
  } catch (error) {
    warnings.push(
      `hook '${entry.command}': matcher /${matcher}/ is invalid (${(error as Error).message}); skipped`,
    );
    return false;
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  if (TackError.isInstance(signal.reason)) throw signal.reason;
  throw new TackError('REQUEST_ABORTED', 'hooks were cancelled');
}

interface Answer {
  decision?: HookDecision;
  reason?: string;
  additionalContext: string[];
  warnings: string[];
}

/** Claude Code's protocol: exit 2 blocks with stderr; exit 0 may carry JSON; anything else is a warning. */
function interpret(entry: HookEntry, event: HookEvent, run: CappedRunResult & { timeoutMs: number }): Answer {
  const name = `${event} hook '${entry.command}'`;
  const answer: Answer = { additionalContext: [], warnings: [] };
  if (run.spawnError) {
    answer.warnings.push(`${name} could not start: ${run.spawnError.message}`);
    return answer;
  }
  if (run.timedOut) {
    answer.warnings.push(`${name} timed out after ${run.timeoutMs} ms and was killed`);
    return answer;
  }
  if (run.droppedBytes > 0)
    answer.warnings.push(`${name} wrote more than ${MAX_OUTPUT_BYTES} bytes; the rest was dropped`);
  if (run.exitCode === 2) {
    answer.decision = 'deny';
    answer.reason = run.stderr.trim() || `${name} exited with code 2`;
    return answer;
  }
  if (run.exitCode !== 0) {
    const detail = run.stderr.trim().split('\n').slice(-3).join(' | ');
    const status = run.signal ? `was killed by ${run.signal}` : `exited with code ${run.exitCode}`;
    answer.warnings.push(`${name} ${status}${detail ? `: ${detail}` : ''}`);
    return answer;
  }

  const stdout = run.stdout.trim();
  if (!stdout) return answer;
  let output: unknown;
  try {
    output = JSON.parse(stdout);
  } catch {
    // Claude Code adds a SessionStart hook's plain stdout to the context; elsewhere plain output is only a log.
    if (event === 'SessionStart') answer.additionalContext.push(stdout);
    else if (stdout.startsWith('{')) answer.warnings.push(`${name} printed output that is not valid JSON`);
    return answer;
  }
  if (typeof output !== 'object' || output === null || Array.isArray(output)) {
    if (event === 'SessionStart') answer.additionalContext.push(stdout);
    return answer;
  }
  readJsonOutput(output as Record<string, unknown>, name, answer);
  return answer;
}

function readJsonOutput(output: Record<string, unknown>, name: string, answer: Answer): void {
  const specific = isRecord(output.hookSpecificOutput) ? output.hookSpecificOutput : {};
  const permission = specific.permissionDecision;
  const legacy = output.decision;
  // The newer field wins over the older one when a hook sets both, as in Claude Code.
  if (permission === 'allow' || permission === 'deny' || permission === 'ask') {
    answer.decision = permission;
    answer.reason = text(specific.permissionDecisionReason) ?? text(output.reason);
  } else if (legacy === 'block' || legacy === 'approve') {
    answer.decision = legacy === 'block' ? 'deny' : 'allow';
    answer.reason = text(output.reason);
  } else if (permission !== undefined || (legacy !== undefined && legacy !== null)) {
    answer.warnings.push(`${name} gave an unknown decision ${JSON.stringify(permission ?? legacy)}; ignored`);
  }
  // `continue: false` stops everything in Claude Code; refusing what was asked is the part of that tack can honour.
  if (output.continue === false) {
    answer.decision = 'deny';
    answer.reason = text(output.stopReason) ?? answer.reason ?? `${name} asked to stop`;
  }
  const context = text(specific.additionalContext) ?? text(output.additionalContext);
  if (context) answer.additionalContext.push(context);
  const message = text(output.systemMessage);
  if (message) answer.warnings.push(`${name}: ${message}`);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}
