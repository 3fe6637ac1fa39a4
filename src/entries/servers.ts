/**
 * `tack/servers`: the MCP servers tack ships (docs search, knowledge, skills) and the gateway behind `tack serve`.
 */

export { type DocsServerOptions, type RunningDocsServer, startDocsServer } from '../servers/docs/start.js';
export { type GatewayServeOptions, type RunningGateway, startGateway } from '../servers/gateway/start.js';
export { type KnowledgeServerOptions, startKnowledgeServer } from '../servers/knowledge/start.js';
export type { HttpOptions, Served } from '../servers/serve.js';
export {
  type RunningSkillsServer,
  type SkillsServerOptions,
  startSkillsServer,
} from '../servers/skills/start.js';
