import { formatKnowledgeIssue } from '../../knowledge/issues.js';
import { KnowledgeBase } from '../../knowledge/knowledge.js';
import { computationTool, openRuntimes } from '../../knowledge/runtimes.js';
import { startKnowledgeServer } from '../../servers/knowledge/start.js';
import { printErr, warn } from '../output.js';
import { httpFromOptions, untilStopped } from '../serving.js';
import { loadCliConfig } from '../with-host.js';
import { bundleRoots, type KnowledgeOptions, knowledgeLoadOptions, runtimeSettings } from './knowledge.js';

export interface ServeKnowledgeOptions extends KnowledgeOptions {
  http?: string;
  sqlite?: string;
  postgres?: string;
}

/** `tack serve-knowledge [bundle...] [--http [host:]port]`: knowledge bundles over MCP. */
export async function serveKnowledgeCommand(options: ServeKnowledgeOptions): Promise<number> {
  const config = await loadCliConfig(options);
  const base = await KnowledgeBase.load(await bundleRoots(options, config), knowledgeLoadOptions(config));
  for (const bundle of base.bundles) {
    for (const issue of bundle.issues.filter((i) => i.severity === 'error'))
      warn(`${formatKnowledgeIssue(issue, bundle.name)} (left out)`);
  }
  const runtimes = await openRuntimes(runtimeSettings(options, config));
  const server = await startKnowledgeServer({
    base,
    tools: runtimes.executors.length > 0 ? [computationTool(base, runtimes)] : [],
    http: httpFromOptions(options.http, config.serve),
  });
  printErr(
    `tack serve-knowledge: ${base.size} concepts in ${base.bundles.length} bundles${server.url ? ` at ${server.url}` : ' on stdio'}\n`,
  );
  await untilStopped(Boolean(server.url));
  await server.close();
  await runtimes.close();
  return 0;
}
