/**
 * Using tack as a library: load the configuration, start the host, look at the catalog, call a tool.
 * Run it after `npm run build` with: node dist/examples/library.js
 */
import { fileURLToPath } from 'node:url';
import { loadConfig, McpHost, TackError } from '../src/index.js';

const config = loadConfig({
  configFile: fileURLToPath(new URL('../../examples/tack.json', import.meta.url)),
});
await using host = await McpHost.start({ config });

for (const server of host.servers()) {
  console.log(`${server.name}: ${server.status}, ${server.era ?? '-'} era, ${server.counts.tools} tools`);
}
console.log(host.catalog.tools.map((tool) => tool.name).join('\n'));

const result = await host.callTool('mcp__weather__get_forecast', { city: 'Lisbon' });
console.log(result.content);

try {
  await host.callTool('mcp__weather__get_forcast', { city: 'Lisbon' });
} catch (error) {
  if (TackError.isInstance(error)) console.log(`${error.code}: ${error.message} (${error.hint})`);
}
