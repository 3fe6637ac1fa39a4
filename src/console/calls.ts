import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { type ApprovalAnswer, ApprovalGate, type ApprovalRequest, type Approver } from '../agent/approval.js';
import type { AgentEvent } from '../agent/events.js';
import { type AgentTool, mcpAgentTools } from '../agent/toolset.js';
import type { TackConfig } from '../config/load.js';
import { errorMessage, TackError } from '../errors.js';
import type { McpHost } from '../mcp/host.js';
import { RuleSet } from '../security/rules.js';
import { canonicalJson, sha256Hex } from '../util/canonical-json.js';
import { maskSecrets } from '../util/secrets.js';
import { toolOf } from './catalog.js';
import { argumentsOf, type Route } from './routes.js';

/** How long a question put to the page waits for its answer before it counts as denied. */
export const ANSWER_TIMEOUT_MS = 10 * 60_000;

export type CallOutcome =
  | { status: 'done'; result: CallToolResult; decision: string }
  | { status: 'denied'; reason: string }
  /** The gate asks the person: the page shows `request` and answers at `/api/approvals/<id>`. */
  | { status: 'ask'; approvalId: string; request: ApprovalRequest };

interface Pending {
  answer: (answer: ApprovalAnswer) => void;
  outcome: Promise<CallOutcome>;
  timer: NodeJS.Timeout;
}

/**
 * Tool calls made from the page, through the harness's `ApprovalGate`: deny rules, the trifecta guard, allow
 * and ask rules, trusted read-only hints, then the person. A call that would ask answers the HTTP request with
 * the question (arguments included); the call itself waits until the page answers, and that answer's request
 * gets the result. One gate for the console's lifetime, so "allow for this session" lasts until it stops.
 */
export class ConsoleCalls {
  readonly #host: McpHost;
  readonly #config: TackConfig;
  readonly #gate: ApprovalGate;
  readonly #pending = new Map<string, Pending>();
  readonly events: AgentEvent[] = [];

  constructor(host: McpHost, config: TackConfig) {
    this.#host = host;
    this.#config = config;
    this.#gate = new ApprovalGate({
      mode: 'ask',
      rules: new RuleSet(config.permissions),
      emit: (event) => {
        this.events.push(event);
        if (this.events.length > 500) this.events.shift();
      },
    });
  }

  /** The tool as the harness gates it: labels, trusted hints and sandbox facts from the configuration. */
  #agentTool(name: string): AgentTool {
    const entry = this.#host.catalog.getTool(name);
    if (!entry) throw new TackError('UNKNOWN_TOOL', `no tool named ${name}`, { subject: { tool: name } });
    const settings = new Map(this.#config.servers.map((s) => [s.name, s]));
    return mcpAgentTools(this.#host, settings, [entry])[0]!;
  }

  /**
   * Calls `name` with `args`. `held` names tools the pin guard holds back: never called, as a session would
   * never offer them. `source` says who asked (the page's form, or an MCP App view) for the audit log.
   */
  call(name: string, args: Record<string, unknown>, held: boolean, source: string): Promise<CallOutcome> {
    if (held)
      return Promise.resolve({
        status: 'denied',
        reason: `${name} is held back by its pin: review and accept it on the security page first`,
      });
    const tool = this.#agentTool(name);
    const callId = `console-${randomBytes(6).toString('hex')}`;
    const approvalId = randomBytes(16).toString('base64url');
    let asked!: (outcome: CallOutcome) => void;
    const question = new Promise<CallOutcome>((resolve) => {
      asked = resolve;
    });
    let reply: ((answer: ApprovalAnswer) => void) | undefined;
    const approver = (request: ApprovalRequest) =>
      new Promise<ApprovalAnswer>((resolve) => {
        reply = resolve;
        asked({
          status: 'ask',
          approvalId,
          request: { ...request, arguments: maskSecrets(request.arguments) },
        });
      });
    const outcome = this.#run(tool, callId, args, source, approver);
    const pending: Pending = {
      answer: (answer) => reply?.(answer),
      outcome,
      timer: setTimeout(
        () => pending.answer({ decision: 'deny', reason: 'nobody answered within 10 minutes' }),
        ANSWER_TIMEOUT_MS,
      ),
    };
    pending.timer.unref();
    this.#pending.set(approvalId, pending);
    void outcome
      .catch(() => {})
      .finally(() => {
        clearTimeout(pending.timer);
        this.#pending.delete(approvalId);
      });
    // Whichever comes first: the answer (allowed or denied without asking), or the question for the page.
    return Promise.race([question, outcome]);
  }

  /** The page's answer to a question; resolves with the call's outcome once it ran (or was refused). */
  async answer(approvalId: string, answer: ApprovalAnswer): Promise<CallOutcome> {
    const pending = this.#pending.get(approvalId);
    if (!pending)
      throw new TackError('USAGE', 'no question with that id is waiting', {
        hint: 'It was answered already, or it timed out: call the tool again.',
      });
    // `always` would write the user's config from a web page: offered at the terminal only.
    pending.answer({ ...answer, ...(answer.remember === 'always' ? { remember: 'session' as const } : {}) });
    return pending.outcome;
  }

  async #run(
    tool: AgentTool,
    callId: string,
    args: Record<string, unknown>,
    source: string,
    approver: Approver,
  ): Promise<CallOutcome> {
    const decision = await this.#gate.decide(tool, callId, args, approver);
    const started = Date.now();
    // A row that cannot be written must not fail the call (nor become an unhandled rejection).
    const audit = (outcome: 'ok' | 'tool-error' | 'failed' | 'denied', detail?: string) =>
      void this.#host.store?.audit
        .record({
          at: new Date(started).toISOString(),
          client: `tack console (${source})`,
          server: tool.server ?? '',
          tool: tool.serverToolName ?? tool.name,
          argsSha256: sha256Hex(canonicalJson(args)),
          durationMs: Date.now() - started,
          outcome,
          ...(detail ? { detail } : {}),
        })
        .catch(() => {});
    if (!decision.allowed) {
      audit('denied', decision.reason);
      return { status: 'denied', reason: decision.reason };
    }
    try {
      const result = await this.#host.callTool(tool.name, args);
      this.#gate.noteResult(tool);
      audit(result.isError ? 'tool-error' : 'ok');
      return { status: 'done', result, decision: decision.reason };
    } catch (error) {
      audit('failed', errorMessage(error));
      throw error;
    }
  }
}

/** A tool called from its page's form, and the page's answer to a question the gate put. */
export const callRoutes: Route[] = [
  {
    method: 'POST',
    path: 'tools/:tool/call',
    async json({ context, params, body }) {
      const { row } = await toolOf(context, params.tool!);
      const args = argumentsOf((await body()).arguments);
      return context.calls.call(row.name, args, row.held !== undefined, 'form');
    },
  },
  {
    method: 'POST',
    path: 'approvals/:approval',
    async json({ context, params, body }) {
      const { decision, remember } = await body();
      const answer: ApprovalAnswer = {
        decision: decision === 'allow' ? 'allow' : 'deny',
        ...(remember === 'session' ? { remember: 'session' as const } : {}),
      };
      return context.calls.answer(params.approval!, answer);
    },
  },
];
