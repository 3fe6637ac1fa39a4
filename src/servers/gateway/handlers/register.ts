import type { Server } from '@modelcontextprotocol/server';
import type { Downstream, GatewayCore } from '../core.js';
import { complete } from './completion-complete.js';
import { getPrompt } from './prompts-get.js';
import { listPrompts } from './prompts-list.js';
import { listResourceTemplates } from './resource-templates-list.js';
import { listResources } from './resources-list.js';
import { readResource } from './resources-read.js';
import { forwardSubscriptions } from './subscriptions.js';
import { callTool } from './tools-call.js';
import { listTools } from './tools-list.js';

/** One handler per method, each in its own file; `downstream` is the connection, session or request served. */
export function registerHandlers(core: GatewayCore, server: Server, downstream: Downstream): void {
  forwardSubscriptions(core, server, downstream.era);
  server.setRequestHandler('logging/setLevel', async (request) => {
    downstream.logLevel = request.params.level;
    return {};
  });
  server.setRequestHandler('tools/list', async () => listTools(core));
  server.setRequestHandler('tools/call', (request, ctx) => callTool(core, downstream, ctx, request.params));
  server.setRequestHandler('resources/list', async () => listResources(core));
  server.setRequestHandler('resources/templates/list', async () => listResourceTemplates(core));
  server.setRequestHandler('resources/read', (request, ctx) =>
    readResource(core, downstream, ctx, request.params.uri),
  );
  server.setRequestHandler('prompts/list', async () => listPrompts(core));
  server.setRequestHandler('prompts/get', (request, ctx) => getPrompt(core, downstream, ctx, request.params));
  server.setRequestHandler('completion/complete', (request, ctx) =>
    complete(core, request.params, ctx.mcpReq.signal),
  );
}
