/**
 * Using tack as a library: load the configuration, start the host, look at the catalog, call a tool.
 * Run it after `npm run build` with: node dist/examples/library.js
 */
import { fileURLToPath } from 'node:url';
import {
  type Catalog,
  type CatalogTool,
  type ConfigWarning,
  type ConnectionStatus,
  countTokens,
  type ErrorSubject,
  errorMessage,
  type HostEvent,
  type HostOptions,
  type HttpServerConfig,
  type LoadConfigOptions,
  loadConfig,
  McpHost,
  type ModelToolDefinition,
  openStore,
  type RequestCallOptions,
  type RestartPolicy,
  type ServerConfig,
  type ServerConnection,
  type ServerStatus,
  type StdioServerConfig,
  type StoreLocation,
  type TackConfig,
  TackError,
  type TackErrorCode,
  type TackStore,
  type TackWarning,
  type TackWarningCode,
  toolDefinitionTokens,
  VERSION,
  type WarningSink,
} from '../src/index.js';

// loadConfig merges the user's file, the project's .mcp.json and tack.json; `configFile` names one file instead.
const options: LoadConfigOptions = {
  configFile: fileURLToPath(new URL('../../examples/tack.json', import.meta.url)),
};
const config: TackConfig = loadConfig(options);
const warnings: ConfigWarning[] = config.warnings;
for (const warning of warnings) console.log(`${warning.file}: ${warning.path}: ${warning.message}`);
for (const server of config.servers) {
  const entry: ServerConfig = server;
  if (entry.transport === 'stdio') {
    const stdio: StdioServerConfig = entry;
    console.log(`${stdio.name}: ${stdio.command} ${stdio.args.join(' ')}`);
  } else {
    const remote: HttpServerConfig = entry;
    console.log(`${remote.name}: ${remote.url}`);
  }
}

// Warnings (a store that cannot open, a held definition) go to a sink; silent without one.
const onWarning: WarningSink = (warning: TackWarning) => {
  const code: TackWarningCode = warning.code;
  console.error(`${code}: ${warning.message}`);
};

// The store keeps era verdicts, pins, trust, OAuth tokens and sessions; without one tack works, keeping none.
const location: StoreLocation = { paths: config.paths };
const store: TackStore | undefined = await openStore(location, onWarning);
console.log(`tack ${VERSION}, store: ${store?.engine ?? 'none'}`);
await store?.close();
// A throwaway SQLite store, for tests: TackStore.open(':memory:').

const restartPolicy: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 30_000 };
const hostOptions: HostOptions = { config, restartPolicy, logDir: false };
await using host = await McpHost.start(hostOptions);
const unsubscribe = host.on((event: HostEvent) => {
  if (event.type === 'status') console.log(`${event.server} is ${event.status}`);
});

for (const server of host.servers()) {
  const status: ServerStatus = server;
  const state: ConnectionStatus = status.status;
  console.log(`${status.name}: ${state}, ${status.era ?? '-'} era, ${status.counts.tools} tools`);
}
const catalog: Catalog = host.catalog;
console.log(catalog.tools.map((tool) => tool.name).join('\n'));

// What a definition costs the model, with the tokenizer `tack tools` uses (Qwen3; it also mends schemas first).
const first: CatalogTool | undefined = catalog.tools[0];
if (first) {
  const definition: ModelToolDefinition = {
    name: first.name,
    description: first.definition.description ?? '',
    inputSchema: first.definition.inputSchema,
  };
  console.log(`${first.name}: ${await toolDefinitionTokens(definition)} tokens`);
  console.log(`its description alone: ${await countTokens(definition.description)} tokens`);
}

const call: RequestCallOptions = {
  timeoutMs: 10_000,
  onProgress: (progress) => console.error(`progress ${progress.progress}`),
};
const result = await host.callTool('mcp__weather__get_forecast', { city: 'Lisbon' }, call);
console.log(result.content);

// One server's connection: its lists, its state, its last error.
const weather: ServerConnection = host.connection('weather');
console.log(weather.tools.length, weather.lastError?.message);

try {
  await host.callTool('mcp__weather__get_forcast', { city: 'Lisbon' });
} catch (error) {
  if (TackError.isInstance(error)) {
    const code: TackErrorCode = error.code;
    const subject: ErrorSubject = error.subject;
    console.log(`${code}: ${error.message} (${error.hint}) ${subject.tool ?? ''}`);
  } else console.log(errorMessage(error));
}
unsubscribe();
