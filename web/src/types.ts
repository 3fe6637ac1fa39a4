/** The JSON the console's API answers with (src/console/*.ts on the server). */
export interface CapabilityLabel {
  capability: string;
  source: string;
  why: string;
}

export interface ServerRow {
  name: string;
  transport: string;
  status: string;
  disabledReason?: string;
  era?: string;
  eraSource?: string;
  protocolVersion?: string;
  serverInfo?: { name: string; version: string };
  counts: { tools: number; resources: number; resourceTemplates: number; prompts: number };
  connectMs?: number;
  restarts: number;
  error?: { code: string; message: string; hint?: string; details: string[] };
  diagnostics: string[];
  sandbox: string;
  package?: PackageView;
}

/** What a package runner ran (`pkg@1.2.3`); `pinned` false when the command names no fixed version (`fix` pins it). */
export interface PackageView {
  label: string;
  runner: string;
  requested: string;
  pinned: 'exact' | 'digest' | false;
  fix?: string;
}

export interface ToolRow {
  name: string;
  server: string;
  tool: string;
  title: string;
  summary: string;
  tokens: number;
  alwaysLoad: boolean;
  capabilities: CapabilityLabel[];
  ruledOut: CapabilityLabel[];
  pin: string;
  held?: string;
  app?: string;
  visibility: string[];
}

export interface ServersView {
  servers: ServerRow[];
  perServer: Array<{ server: string; tools: number; tokens: number }>;
  inlineTokens: number;
  /** Only when a session defers. */
  deferredTokens?: number;
  deferred: boolean;
  mode: string;
  contextWindow: number;
  tools: number;
}

export interface ApprovalRequest {
  callId: string;
  tool: string;
  server?: string;
  description: string;
  descriptionSha256: string;
  arguments: unknown;
  readOnlyHint: boolean;
  capabilities: CapabilityLabel[];
  ruledOut?: CapabilityLabel[];
  why: string;
}

export interface ContentBlock {
  type: string;
  text?: string;
  mimeType?: string;
  [key: string]: unknown;
}

export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
}

export type CallOutcome =
  | { status: 'done'; result: CallToolResult; decision: string }
  | { status: 'denied'; reason: string }
  | { status: 'ask'; approvalId: string; request: ApprovalRequest };

export interface SessionRow {
  id: string;
  parentId?: string;
  startedAt: string;
  updatedAt: string;
  cwd: string;
  model: string;
  title?: string;
  status: string;
  file: string;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens?: number;
  costUsd: number;
}

/**
 * The events a session's page shows: the harness's `AgentEvent` union (src/agent/events.ts) as the console
 * serves it (src/console/sessions.ts: messages reduced to role and text, long text cut). test/console/types.test.ts
 * holds the two together: a member the harness adds or changes fails the type check until it is mirrored here.
 */
export type Approval = {
  type: 'approval';
  callId: string;
  name: string;
  decision: string;
  by: string;
  reason: string;
  unasked?: true;
  waitMs?: number;
};
export type ToolCall = {
  type: 'tool-call';
  step: number;
  callId: string;
  name: string;
  arguments: unknown;
  server?: string;
};
export type ToolResult = {
  type: 'tool-result';
  callId: string;
  name: string;
  isError: boolean;
  text: string;
  savedTo?: string;
  durationMs: number;
  waitMs?: number;
};
export type ApprovalAsked = {
  type: 'approval-request';
  callId: string;
  name: string;
  server?: string;
  why: string;
};
export type StepStart = { type: 'step-start'; step: number; tools: number; prefixHash?: string };
export type UsageEvent = { type: 'usage'; step: number; stepUsage: Usage; total: Usage; model?: string };
export type ModelFallback = {
  type: 'model-fallback';
  step: number;
  from: string;
  to: string;
  reason: string;
};
export type Notice = {
  type: 'notice';
  text: string;
  definition?: { server: string; kind: string; name: string; status: string; why: string };
};
export type ErrorEvent = { type: 'error'; message: string; code?: string };
/** What a sub-agent passes up, nested in `subagent` events. */
export type SubagentEvent =
  | StepStart
  | ToolCall
  | ApprovalAsked
  | Approval
  | ToolResult
  | UsageEvent
  | ModelFallback
  | Notice
  | ErrorEvent;

export type TimelineEvent = { seq: number; at: string } & (
  | { type: 'message'; role: string; text: string; toolCalls: string[] }
  | { type: 'compaction'; tokensBefore: number; tokensAfter: number; elided: number; summarized: number }
  | {
      type: 'request';
      step: number;
      model: string;
      outcome: 'answered' | 'failed';
      bytes: number;
      sha256: string;
    }
  | {
      type: 'session-start';
      sessionId: string;
      model: string;
      fallback?: string[];
      cwd: string;
      parent?: { sessionId: string; callId: string };
      pid?: number;
      hostname?: string;
    }
  | SubagentEvent
  | {
      type: 'subagent-start';
      callId: string;
      sessionId: string;
      description: string;
      tools?: string[];
      maxSteps: number;
    }
  | { type: 'subagent'; callId: string; sessionId: string; event: SubagentEvent }
  | {
      type: 'subagent-end';
      callId: string;
      sessionId: string;
      reason: string;
      detail: string;
      steps: number;
      usage: Usage;
    }
  | { type: 'session-end'; reason: string; detail: string; answer?: string; total: Usage; steps: number }
);

export interface SessionDetail {
  session: SessionRow;
  children: SessionRow[];
  events: TimelineEvent[];
  problems: string[];
  offset: number;
  /** live: still running; ended; abandoned: its process is gone without writing its end. */
  liveness: 'live' | 'ended' | 'abandoned';
}

/** One element of a step's request lists (src/agent/session-requests.ts `RequestPart`). */
export interface RequestPart {
  list: string;
  index: number;
  hash: string;
  bytes?: number;
  tokens?: number;
  label: string;
  breakpoint: boolean;
  /** The step that sent it first: the step's own number when it is new there. */
  firstStep: number;
}

/** One model call of a session (src/agent/session-requests.ts `StepRequest`). */
export interface StepRequest {
  number: number;
  seq: number;
  at: string;
  run: number;
  runStep: number;
  model: string;
  outcome: 'answered' | 'failed';
  bytes: number;
  sha256: string;
  prefixHash?: string;
  usage?: Usage;
  parts: RequestPart[];
  partCount: number;
  newParts: number;
  missing: number;
}

/** GET /api/sessions/<id>/requests/<n> (src/console/step-requests.ts). */
export interface StepRequestView {
  step: StepRequest;
  /** The body as sent, its first 2 MiB when longer. */
  body: string;
  exact: boolean;
  missing: string[];
  /** Bytes of the body left out after the cap. */
  truncated?: number;
}

/** GET /api/servers/<name>: a server's prompts, resources and templates (src/console/listings.ts). */
export interface ServerListingView {
  server: string;
  status: string;
  diagnostics: string[];
  package?: PackageView;
  /** Why the package is held (another version than the one approved): its tools and prompts wait with it. */
  packageHeld?: string;
  prompts: Array<{
    name: string;
    title?: string;
    description?: string;
    arguments: Array<{ name: string; description?: string; required?: boolean }>;
    /** The chat's `/mcp__server__prompt` usage line. */
    command?: string;
    held?: string;
  }>;
  resources: Array<{ uri: string; name: string; title?: string; description?: string; mimeType?: string }>;
  templates: Array<{
    uriTemplate: string;
    name: string;
    title?: string;
    description?: string;
    mimeType?: string;
  }>;
  counts: { prompts: number; resources: number; templates: number };
}

/** POST /api/servers/<name>/prompt: the prompt as the text of a user turn. */
export interface PromptRun {
  command: string;
  text: string;
  notes: string[];
}

/** POST /api/servers/<name>/read: the first 20 contents (src/console/listings.ts, MAX_READ_CONTENTS). */
export interface ResourceRead {
  /** How many contents the server returned. */
  total: number;
  contents: Array<{
    uri: string;
    mimeType?: string;
    text?: string;
    cutAt?: number;
    length?: number;
    bytes?: number;
  }>;
}
