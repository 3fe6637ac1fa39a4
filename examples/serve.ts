/**
 * tack/servers and tack/console: serve MCP from a program, as `tack serve-docs`, `tack serve-skills`,
 * `tack serve-knowledge` and `tack serve` do, and open the web console. Every server listens on 127.0.0.1 over
 * Streamable HTTP here (without `http` it serves stdio). Run it after `npm run build`, from the repository's root,
 * with: node dist/examples/serve.js
 */
import { type ConsoleOptions, type RunningConsole, startConsole } from '../src/entries/console.js';
import { KnowledgeBase, loadBundle } from '../src/entries/knowledge.js';
import {
  type DocsServerOptions,
  type GatewayServeOptions,
  type HttpOptions,
  type KnowledgeServerOptions,
  type RunningDocsServer,
  type RunningGateway,
  type RunningSkillsServer,
  type Served,
  type SkillsServerOptions,
  startDocsServer,
  startGateway,
  startKnowledgeServer,
  startSkillsServer,
} from '../src/entries/servers.js';
import { SkillLibrary } from '../src/entries/skills.js';
import { loadConfig } from '../src/index.js';

// Port 0: any free port; `url` says which. Host and Origin are checked; `token` adds a bearer check.
const http: HttpOptions = { host: '127.0.0.1', port: 0 };

// search_docs and read_doc over a folder of Markdown, re-indexed as files change (`watch`).
const docs: DocsServerOptions = { folder: 'docs', http, watch: false };
const docsServer: RunningDocsServer = await startDocsServer(docs);

// The Skills extension (skills/list, skill:// resources) and activate_skill / read_skill_file as tools.
const library = await SkillLibrary.discover({
  configFolders: ['examples/skills/team'],
  home: '/nonexistent',
});
const skills: SkillsServerOptions = { library, http };
const skillsServer: RunningSkillsServer = await startSkillsServer(skills);

// search_knowledge, read_concept and okf:// resources over any KnowledgeBase.
const knowledge: KnowledgeServerOptions = {
  base: new KnowledgeBase([await loadBundle('examples/knowledge/weather')]),
  http,
};
const knowledgeServer: Served = await startKnowledgeServer(knowledge);

// Every configured server behind one endpoint, with namespaced names, pins, rules and the audit log.
const config = loadConfig({ configFile: 'examples/tack.json' });
const gatewayOptions: GatewayServeOptions = { config, http, knowledge: false };
const gateway: RunningGateway = await startGateway(gatewayOptions);

// The console over the gateway's host (or, without `host`, a host of its own).
const consoleOptions: ConsoleOptions = { config, host: gateway.host, port: 0 };
const web: RunningConsole = await startConsole(consoleOptions);

console.log(docsServer.url, skillsServer.url, knowledgeServer.url, gateway.url, web.url);
for (const server of [web, gateway, knowledgeServer, skillsServer, docsServer]) await server.close();
