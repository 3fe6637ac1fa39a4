import * as z from 'zod';
import { CAPABILITIES } from '../security/capabilities.js';
import { LimitsSchema } from './limits.js';
import { ScanSchema } from './scan.js';
import { ToolSearchSchema } from './tool-search.js';

/**
 * The shape of `tack.json` (and of the `mcpServers` block tack reads from `.mcp.json` and the user config).
 * Server entries are exactly Claude Code's / Claude Desktop's, plus tack's optional lifecycle fields, so an
 * existing `.mcp.json` works unchanged. `schema/tack.schema.json` is generated from these definitions.
 */

export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Node fires timers above 2^31-1 ms at once; a day is more than any start or call should take anyway. */
export const MAX_TIMEOUT_MS = 86_400_000;

/** A duration in milliseconds a timer can hold (Node fires longer ones at once). */
const timeoutMs = (description: string) =>
  z.number().int().positive().max(MAX_TIMEOUT_MS).optional().describe(description);

const lifecycleFields = {
  enabled: z.boolean().optional().describe('Set to false to keep the entry without starting the server.'),
  startupTimeoutMs: timeoutMs(
    `How long the server may take to start and answer its first listing (default ${DEFAULT_STARTUP_TIMEOUT_MS} ms; a cold \`npx -y\` start takes ~20 s).`,
  ),
  callTimeoutMs: timeoutMs(
    `How long one request may run without a progress notification (default ${DEFAULT_CALL_TIMEOUT_MS} ms).`,
  ),
  alwaysLoad: z
    .union([z.boolean(), z.array(z.string())])
    .optional()
    .describe(
      "When the agent defers tool definitions (tool search), still send these every step: true for all of this server's tools, or a list of tool names.",
    ),
  trusted: z
    .boolean()
    .optional()
    .describe(
      "Trust this server's annotations: its tools hinted read-only run without asking. Default false: hints from a server are claims, not facts.",
    ),
  capabilities: z
    .record(z.string(), z.array(z.enum(CAPABILITIES)))
    .optional()
    .describe(
      "Capability labels per tool (the server's own tool name, or `*` for every tool of this server): untrusted-input, private-data, egress, destructive. They replace tack's guesses for that tool; the lethal-trifecta guard reads them (`tack tools --security` shows every label and where it came from).",
    ),
  enabledTools: z
    .array(z.string())
    .optional()
    .describe('Only these tools are exposed (tool names as the server reports them; `*` matches any run).'),
  disabledTools: z
    .array(z.string())
    .optional()
    .describe('These tools are hidden (applied after enabledTools; `*` matches any run).'),
};

/** The profiles tack ships; a custom profile may not take one of these names. */
export const BUILTIN_SANDBOX_PROFILES = ['none', 'read-only', 'workspace-write', 'package-runner'] as const;

/** `host:port`, the host a name or an IP literal (IPv6 in brackets), optionally `*.` for every subdomain. */
export const NETWORK_RULE_PATTERN =
  /^(\*\.)?([A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\]):([1-9][0-9]{0,4})$/;

const sandboxPaths = (what: string) =>
  z
    .array(z.string().min(1))
    .optional()
    .describe(
      `${what}; added to the profile's. \`\${workspace}\` is the project root, \`~\` the home folder, \`\${VAR}\` expands, a relative path is relative to the project root; symlinks are resolved before binding.`,
    );

export const SandboxPolicySchema = z
  .object({
    profile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The profile this policy starts from: read-only (the default), workspace-write, package-runner, none, or one of sandbox.profiles.',
      ),
    network: z
      .union([
        z.boolean(),
        z.array(
          z.string().regex(NETWORK_RULE_PATTERN, { error: 'expected host:port, e.g. "api.example.com:443"' }),
        ),
      ])
      .optional()
      .describe(
        'false: no network at all (own network namespace); true: the host network; ["host:port", "*.example.com:443"]: only these, through a filtering HTTP proxy tack runs outside the sandbox (HTTP_PROXY / HTTPS_PROXY).',
      ),
    read: sandboxPaths('Paths the process may read (besides the read-only root file system)'),
    write: sandboxPaths('Paths the process may write'),
    home: z
      .boolean()
      .optional()
      .describe(
        'false (default): the home folder is hidden except the paths named in read and write; true: it is visible, read-only.',
      ),
    required: z
      .boolean()
      .optional()
      .describe(
        'true (default): without a supported sandbox on this platform the process does not start, and says why; false: it starts unsandboxed with a warning.',
      ),
  })
  .strict();

/** A policy: a profile name, a policy object, or false (no sandbox). */
export const SandboxFieldSchema = z
  .union([z.literal(false), z.string().min(1), SandboxPolicySchema], {
    error: 'expected a profile name, a sandbox policy object or false',
  })
  .describe(
    'Run this process in a sandbox tack enforces (Linux: bubblewrap): a profile name (read-only, workspace-write, package-runner, none, or one of sandbox.profiles), a policy object, or false for none.',
  );

export const SandboxSettingsSchema = z
  .object({
    profiles: z
      .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/), SandboxPolicySchema)
      .optional()
      .describe('Named policies, used by name in mcpServers.<name>.sandbox and below.'),
    defaultForServers: SandboxFieldSchema.optional().describe(
      'The sandbox of every stdio server that sets none of its own (default none: opt-in).',
    ),
    skillScripts: SandboxFieldSchema.optional().describe(
      'The sandbox skill scripts run in (default workspace-write without network; without a supported sandbox they run with a warning).',
    ),
  })
  .strict()
  .describe('Sandbox profiles and defaults for stdio servers and skill scripts (see docs/security.md).');

export type SandboxPolicyEntry = z.infer<typeof SandboxPolicySchema>;
export type SandboxField = z.infer<typeof SandboxFieldSchema>;
export type SandboxSettings = z.infer<typeof SandboxSettingsSchema>;

const stringMap = z.record(z.string(), z.string());

/** Letters, digits, `_` and `-`; no `__` and no trailing `_`, so `mcp__<server>__<tool>` parses back unambiguously. */
export const SERVER_NAME_PATTERN = /^(?!.*__)[A-Za-z0-9_-]*[A-Za-z0-9-]$/;

export const StdioServerEntrySchema = z
  .object({
    type: z.literal('stdio').optional(),
    command: z.string().min(1).describe('Executable to start; `${VAR}` and `${VAR:-default}` expand.'),
    args: z.array(z.string()).optional().describe('Arguments; `${VAR}` expands.'),
    env: stringMap
      .optional()
      .describe(
        'Variables for the server. The server sees only these plus a safe default set (PATH, HOME, ...), never the whole environment of tack.',
      ),
    cwd: z
      .string()
      .optional()
      .describe(
        'Working directory, relative to the config file (default: the directory of the config file).',
      ),
    sandbox: SandboxFieldSchema.optional(),
    ...lifecycleFields,
  })
  .describe('A local server started as a child process and spoken to over stdin/stdout.');

export const OAuthSettingsSchema = z
  .object({
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A client id registered with the authorization server beforehand; without one, tack registers itself (dynamic client registration).',
      ),
    clientSecret: z
      .string()
      .min(1)
      .optional()
      .describe('The secret of a confidential pre-registered client; put it in `${VAR}`.'),
    scopes: z
      .array(z.string().min(1))
      .optional()
      .describe(
        'Scopes to ask for when the server names none (in its 401 challenge or its resource metadata, which come first).',
      ),
    callbackPort: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .describe(
        'Loopback port the browser is sent back to (http://127.0.0.1:<port>/callback); default a free port. Set it when a pre-registered client names a fixed redirect URI.',
      ),
  })
  .strict();

/** On by default: a server that answers 401 with OAuth metadata starts the login; `false` turns it off. */
const oauthField = z
  .union([z.literal(false), OAuthSettingsSchema])
  .optional()
  .describe(
    'OAuth for this server (on by default when the server asks for it, unless the entry sends its own Authorization header): settings, or false to turn it off. Log in with `tack auth <server>`.',
  );

export const HttpServerEntrySchema = z
  .object({
    type: z.literal('http').optional(),
    url: z
      .string()
      .min(1)
      .describe('Streamable HTTP endpoint; falls back to legacy SSE when the server has no Streamable HTTP.'),
    headers: stringMap.optional().describe('Headers sent on every request; put tokens here as `${VAR}`.'),
    oauth: oauthField,
    ...lifecycleFields,
  })
  .describe('A remote server over Streamable HTTP.');

export const SseServerEntrySchema = z
  .object({
    type: z.literal('sse'),
    url: z.string().min(1).describe('Legacy HTTP+SSE endpoint (the stream URL, often ending in /sse).'),
    headers: stringMap.optional(),
    oauth: oauthField,
    ...lifecycleFields,
  })
  .describe('A remote server over the legacy HTTP+SSE transport (2024-11-05).');

export const ServerEntrySchema = z.union([
  StdioServerEntrySchema,
  HttpServerEntrySchema,
  SseServerEntrySchema,
]);

export const ServeSchema = z
  .object({
    token: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Bearer token every HTTP client of `tack serve` (and the other tack servers) must send; `${VAR}` expands. Required to bind beyond 127.0.0.1.',
      ),
    allowedHosts: z
      .array(z.string().min(1))
      .optional()
      .describe('Host names accepted in the Host and Origin headers when serving beyond 127.0.0.1.'),
    namespace: z
      .boolean()
      .optional()
      .describe(
        'tack serve: prefix tool and prompt names with <server>__ and resource URIs with tack://<server>/ (default true). false serves upstream names unchanged (on a clash the first server in configuration order wins).',
      ),
    toolSearch: z
      .enum(['auto', 'on', 'off'])
      .optional()
      .describe(
        'tack serve: offer search_tools + call_tool instead of every upstream tool (on; auto past 40 tools; default off), for hosts that load all definitions eagerly.',
      ),
    instance: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,32}$/)
      .optional()
      .describe(
        "tack serve --http behind a load balancer: this instance's name (letters, digits, -), put before its 2025-era session ids as `<instance>.<id>` so the balancer can route a session to the instance that holds it (docs/deploy.md).",
      ),
    drainTimeoutMs: z
      .number()
      .int()
      .min(0)
      .max(3_600_000)
      .optional()
      .describe(
        'tack serve --http: on SIGTERM, how long requests in flight may take to finish before the process leaves anyway (default 30000). New connections are refused and /readyz answers 503 meanwhile.',
      ),
    codeMode: z
      .enum(['off', 'on'])
      .optional()
      .describe(
        "tack serve: also offer run_code (a script that calls every served tool as `await mcp.<server>.<tool>(args)`, each call checked and audited as a direct tools/call) and code_api (the scripts' TypeScript declarations). Default off.",
      ),
  })
  .strict()
  .describe('How tack serves MCP over HTTP.');

export const StoreSchema = z
  .object({
    url: z
      .string()
      .min(1)
      .optional()
      .describe(
        "postgres://user:password@host:5432/database: keep tack's state (pins, audit log, trust, OAuth tokens, sessions, caches) on a PostgreSQL server several tack instances share, instead of SQLite in the state directory. `${VAR}` expands; TACK_STORE_URL wins over it. Read from the user file or a --config file only, never from a project file.",
      ),
    poolSize: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe('Connections each tack process keeps to the PostgreSQL store (default 10).'),
  })
  .strict()
  .describe('Where tack keeps its state (default: a SQLite file in the state directory).');

export const SkillFoldersSchema = z
  .array(z.string().min(1))
  .describe(
    'Folders of Agent Skills (each holding skill folders with a SKILL.md), after the project and user scopes; relative to this file, `~` and `${VAR}` expand.',
  );

export const KnowledgeSchema = z
  .object({
    bundles: z
      .array(
        z.union(
          [
            z.string().min(1),
            z
              .object({
                path: z.string().min(1),
                name: z
                  .string()
                  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
                  .optional()
                  .describe('The bundle name in okf://<name>/... (default: the folder name).'),
              })
              .strict(),
          ],
          { error: 'expected a folder path, or { "path": "...", "name": "..." }' },
        ),
      )
      .optional()
      .describe(
        'OKF bundles (folders of Markdown concepts); relative to this file, `~` and `${VAR}` expand.',
      ),
    runtimes: z
      .object({
        sqlite: z
          .object({ database: z.string().min(1).describe('SQLite database file, opened read-only.') })
          .strict()
          .optional(),
        postgres: z
          .object({
            url: z
              .string()
              .min(1)
              .describe(
                'PostgreSQL connection string; put credentials in `${VAR}`. Runs in read-only transactions.',
              ),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional()
      .describe('Where attested computations run, by their `runtime`.'),
  })
  .strict()
  .describe(
    'Open Knowledge Format bundles served to the model, and the databases their computations run on.',
  );

export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'SessionStart', 'Stop'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;
/** Node fires timers above 2^31-1 ms at once. */

export const HookEntrySchema = z
  .object({
    matcher: z
      .string()
      .refine(isValidMatcher, { message: 'not a valid regular expression' })
      .optional()
      .describe(
        'Regular expression matched against the whole model-visible tool name (`mcp__github__.*`); absent, empty or `*` matches every tool. On SessionStart it is matched against the source (`startup`, `resume`); Stop ignores it.',
      ),
    command: z
      .string()
      .min(1)
      .describe(
        'Shell line run with `sh -c` in the working directory; the event arrives as JSON on stdin. $TACK_PROJECT_DIR (and $CLAUDE_PROJECT_DIR) hold the project root.',
      ),
    timeoutMs: timeoutMs(
      `How long the command may run before its process group is killed (default ${DEFAULT_HOOK_TIMEOUT_MS} ms).`,
    ),
  })
  .strict();

const hookList = z.array(HookEntrySchema);

export const HooksSchema = z
  .object({
    PreToolUse: hookList
      .optional()
      .describe(
        'Before a tool call: exit 2 or {"decision":"block"} / permissionDecision "deny" blocks it; "ask" asks the user.',
      ),
    PostToolUse: hookList
      .optional()
      .describe('After a tool call, with tool_response; may add additionalContext for the model.'),
    SessionStart: hookList
      .optional()
      .describe('When a session starts or resumes; additionalContext (or plain stdout) goes to the model.'),
    Stop: hookList.optional().describe('When the model has finished answering.'),
  })
  .strict()
  .describe('Commands run around tool calls and at session start and stop (Claude Code hook semantics).');

export type HookEntry = z.infer<typeof HookEntrySchema>;
export type HooksConfig = z.infer<typeof HooksSchema>;

/** A hook matcher: a regular expression, or `*` for every tool. */
function isValidMatcher(matcher: string): boolean {
  if (matcher === '' || matcher === '*') return true;
  try {
    new RegExp(matcher);
    return true;
  } catch {
    return false;
  }
}

const priceSchema = z
  .object({
    input: z.number().nonnegative().describe('USD per million input tokens'),
    output: z.number().nonnegative().describe('USD per million output tokens'),
    cachedInput: z.number().nonnegative().optional().describe('USD per million cached input tokens'),
    cacheWrite: z
      .number()
      .nonnegative()
      .optional()
      .describe('USD per million input tokens written to the prompt cache (default: the input price)'),
  })
  .strict();

export const AgentSchema = z
  .object({
    model: z
      .string()
      .regex(/^(anthropic|openai|openai-compatible):.+/)
      .optional()
      .describe(
        'Default model: anthropic:<id>, openai:<id> or openai-compatible:<id> (with OPENAI_BASE_URL).',
      ),
    fallback: z
      .array(z.string().regex(/^(anthropic|openai|openai-compatible):.+/))
      .optional()
      .describe(
        'Models to go on with, in order, when the current one fails after its retries with an error of its provider (overloaded, rate limited, a server error, no connection); never after a bad request or a refused key. Same form as model.',
      ),
    approve: z
      .enum(['ask', 'auto-read-only', 'never'])
      .optional()
      .describe('How calls needing approval are decided (default ask; ask without a terminal denies).'),
    maxSteps: z.number().int().positive().optional().describe('Model calls per run (default 50).'),
    maxInputTokens: z.number().int().positive().optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    maxCostUsd: z
      .number()
      .positive()
      .optional()
      .describe('Stop a session past this cost (USD, from agent.prices).'),
    wallTimeSeconds: z.number().positive().optional().describe('Stop a run after this long.'),
    contextWindow: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("The model's context window in tokens (default 200000): compaction starts at 80 %."),
    outputCapTokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Tool output the model gets at most (default 25000 tokens); the rest is saved to a file.'),
    prices: z
      .record(z.string(), priceSchema)
      .optional()
      .describe(
        'USD per million tokens by model id (without provider), added to and overriding the built-in table.',
      ),
    hooks: HooksSchema.optional(),
    toolSearch: z
      .enum(['auto', 'on', 'off'])
      .optional()
      .describe(
        'Deferred tool loading: auto (default) sends search_tools and call_tool instead of every MCP tool when the definitions pass 10 % of the context window or 40 tools; on always; off never.',
      ),
    codeMode: z
      .enum(['off', 'auto', 'on'])
      .optional()
      .describe(
        'Code mode: run_code runs a script that calls MCP tools (every call through the same approvals, rules and guard as a direct call); only its output enters the context. off (default) never; auto when the MCP tools are deferred, or from 2 of them while what code mode adds to every request (its system part and two tool definitions) stays within 400 tokens; on always.',
      ),
  })
  .strict()
  .describe('The agent harness: tack run, tack chat.');

const ruleList = (action: string) =>
  z
    .array(z.string().min(1))
    .optional()
    .describe(
      `Tool patterns to ${action}: mcp__<server>__<tool> with * globs, an optional (arg:glob) list, skill_script(<skill>/<script>).`,
    );

export const PermissionsSchema = z
  .object({
    allow: ruleList('run without asking'),
    ask: ruleList('always ask about'),
    deny: ruleList('never run'),
  })
  .strict()
  .describe(
    'Approval rules for the agent: deny wins over ask over allow; unmatched calls get the default policy.',
  );

export const TackConfigFileSchema = z
  .object({
    $schema: z.string().optional(),
    serve: ServeSchema.optional(),
    store: StoreSchema.optional(),
    skills: SkillFoldersSchema.optional(),
    knowledge: KnowledgeSchema.optional(),
    agent: AgentSchema.optional(),
    permissions: PermissionsSchema.optional(),
    limits: LimitsSchema.optional(),
    toolSearch: ToolSearchSchema.optional(),
    scan: ScanSchema.optional(),
    sandbox: SandboxSettingsSchema.optional(),
    mcpServers: z
      .record(z.string().regex(SERVER_NAME_PATTERN), ServerEntrySchema)
      .optional()
      .describe('MCP servers by name; the name becomes part of every tool name: mcp__<server>__<tool>.'),
  })
  .describe('tack project or user configuration.');

export type StdioServerEntry = z.infer<typeof StdioServerEntrySchema>;
export type HttpServerEntry = z.infer<typeof HttpServerEntrySchema>;
export type SseServerEntry = z.infer<typeof SseServerEntrySchema>;
export type OAuthSettings = z.infer<typeof OAuthSettingsSchema>;

/** Which schema an untyped entry is checked against: Claude's format leaves `type` out for stdio and often for HTTP. */
export function entrySchemaFor(entry: Record<string, unknown>) {
  if (entry.type === 'sse') return { transport: 'sse' as const, schema: SseServerEntrySchema };
  if (entry.type === 'http') return { transport: 'http' as const, schema: HttpServerEntrySchema };
  if (entry.type === 'stdio' || 'command' in entry)
    return { transport: 'stdio' as const, schema: StdioServerEntrySchema };
  if ('url' in entry && entry.type === undefined)
    return { transport: 'http' as const, schema: HttpServerEntrySchema };
  return undefined;
}

/** Keys an entry may carry, for warning about the rest (other hosts add their own, such as `disabled`). */
export function knownKeys(schema: z.ZodObject): ReadonlySet<string> {
  return new Set(Object.keys(schema.shape));
}
