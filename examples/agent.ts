/**
 * The agent harness from a program: startAgent (everything from tack.json, as `tack run` does), a tool of your
 * own, approvals and elicitation answered by your code, the events as they happen; then AgentSession.create for
 * a session wired by hand, and the terminal chat (tack/tui) over the same agent. Needs a model's key
 * (ANTHROPIC_API_KEY here). Run it after `npm run build`, from the repository's root, with:
 * node dist/examples/agent.js
 */

import {
  type ChatTui,
  createChatTui,
  type RunChatOptions,
  runChatTui,
  type SessionSwitch,
} from '../src/entries/tui.js';
import {
  type AgentEvent,
  type AgentInteraction,
  type AgentOptions,
  AgentSession,
  type ApprovalAnswer,
  type ApprovalRequest,
  type ApproveMode,
  type Approver,
  type ElicitationAnswer,
  type ElicitationQuestion,
  type EndReason,
  type Limits,
  loadConfig,
  type NativeTool,
  type NativeToolContext,
  type NativeToolResult,
  type ResolvedModel,
  type RunningAgent,
  type RunResult,
  resolveModel,
  type SamplingRequest,
  type StartAgentOptions,
  startAgent,
  startTelemetry,
  type Telemetry,
  type Usage,
} from '../src/index.js';

if (!process.env.ANTHROPIC_API_KEY) {
  console.log('Set ANTHROPIC_API_KEY to run this example.');
  process.exit(0);
}

// Traces and metrics go to OTEL_EXPORTER_OTLP_ENDPOINT when it is set; nothing is loaded otherwise.
const telemetry: Telemetry = await startTelemetry();

// A native tool: the shape of every tool tack itself gives the model.
const clock: NativeTool = {
  name: 'current_time',
  description: 'The current time, as an ISO 8601 string.',
  inputSchema: { type: 'object', properties: {} },
  execute: async (
    _input: Record<string, unknown>,
    context?: NativeToolContext,
  ): Promise<NativeToolResult> => ({
    text: `${new Date().toISOString()} (step ${context?.step ?? '-'})`,
  }),
};

// Every call that must ask comes here: the tool, its server, its capability labels and the full arguments.
const approver: Approver = async (request: ApprovalRequest): Promise<ApprovalAnswer> =>
  request.readOnlyHint
    ? { decision: 'allow' }
    : { decision: 'deny', reason: `${request.tool} may change something` };

// What MCP servers ask of the user: elicitation (a form or a URL) and sampling (the server borrows the model).
const interaction: AgentInteraction = {
  elicit: async (question: ElicitationQuestion): Promise<ElicitationAnswer> => {
    console.log(`${question.server} asks: ${question.message}`);
    return { action: 'decline' };
  },
  approveSampling: async (request: SamplingRequest) => request.maxTokens <= 1_000,
};

const approve: ApproveMode = 'ask';
const limits: Partial<Limits> = { maxSteps: 10, maxCostUsd: 0.5 };
const options: StartAgentOptions = {
  config: loadConfig({ configFile: 'examples/tack.json' }),
  model: 'anthropic:claude-sonnet-4-5',
  approve,
  approver,
  interaction,
  limits,
  transcript: false,
  session: { tools: [clock] },
  onEvent: (event: AgentEvent) => {
    if (event.type === 'text-delta') process.stdout.write(event.text);
    if (event.type === 'tool-call') console.log(`\n→ ${event.name} ${JSON.stringify(event.arguments)}`);
  },
};
const agent: RunningAgent = await startAgent(options);
try {
  const result: RunResult = await agent.session.run('What is the weather in Lisbon, and what time is it?');
  const reason: EndReason = result.reason;
  const usage: Usage = result.usage;
  console.log(`\n${reason} in ${result.steps} steps, $${usage.costUsd.toFixed(4)}`);
} finally {
  await agent.close();
}

// A session wired by hand: no configuration file, no servers, just the model and your tools.
const model: ResolvedModel = resolveModel('anthropic:claude-sonnet-4-5');
const sessionOptions: AgentOptions = { model, tools: [clock], transcript: false };
const session = await AgentSession.create(sessionOptions);
console.log((await session.run('What time is it?')).answer);
session.close();

// The full-screen chat (`tack chat`) over an agent started with its approver, interaction and event handler.
export async function chat(): Promise<number> {
  const tui: ChatTui = createChatTui('anthropic:claude-sonnet-4-5');
  const running = startAgent({
    config: loadConfig(),
    model: 'anthropic:claude-sonnet-4-5',
    approver: tui.approver,
    interaction: tui.interaction,
    onEvent: tui.onEvent,
    onHost: tui.onHost,
  });
  const switcher: SessionSwitch | undefined = undefined; // /model and /resume need one; without, they say so
  const chatOptions: RunChatOptions = { cwd: process.cwd(), window: 200_000, switcher };
  return runChatTui(running, tui, chatOptions);
}

await telemetry.shutdown();
