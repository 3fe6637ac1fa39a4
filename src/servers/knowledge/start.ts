import type { KnowledgeBase } from '../../knowledge/knowledge.js';
import { knowledgeTools } from '../../knowledge/tools.js';
import type { NativeTool } from '../../tools/native.js';
import { type HttpOptions, type Served, serveHttp, serveOnStdio } from '../serve.js';
import { knowledgeServerFactory } from './server.js';

/** The knowledge to serve, its extra tools, and the transport. */
export interface KnowledgeServerOptions {
  base: KnowledgeBase;
  /** More tools to serve next to search_knowledge and read_concept (run_computation). */
  tools?: readonly NativeTool[];
  /** Serve over Streamable HTTP instead of stdio. */
  http?: HttpOptions | undefined;
  /** The clock staleness is judged by (default `Date.now`). */
  now?: () => number;
}

/** `tack serve-knowledge`: the bundles over MCP, stdio or HTTP. */
export async function startKnowledgeServer(options: KnowledgeServerOptions): Promise<Served> {
  const now = options.now ?? Date.now;
  const tools = [...knowledgeTools(options.base, { now }), ...(options.tools ?? [])];
  const factory = knowledgeServerFactory(options.base, tools, now);
  return options.http ? serveHttp(factory, options.http) : serveOnStdio(factory);
}
