import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StdioServerConfig, TackConfig } from '../../config/load.js';
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_STARTUP_TIMEOUT_MS } from '../../config/schema.js';

/** The server name the configured bundles get in `tack serve` (its tools: knowledge__search_knowledge, ...). */
export const KNOWLEDGE_SERVER = 'knowledge';
/** How the gateway hands a postgres URL (credentials) to its knowledge server: never on the command line. */
export const POSTGRES_URL_ENV = 'TACK_POSTGRES_URL';

/**
 * The configured knowledge bundles as one more upstream of `tack serve`: `tack serve-knowledge` as a stdio child,
 * so it gets the gateway's naming, audit, timeouts and crash handling like any server. Undefined without bundles,
 * or when the configuration already has a server of that name (the user's entry wins).
 */
export function knowledgeServerConfig(config: TackConfig): StdioServerConfig | undefined {
  const { bundles, runtimes } = config.knowledge;
  if (bundles.length === 0 || config.servers.some((s) => s.name === KNOWLEDGE_SERVER)) return undefined;
  return {
    name: KNOWLEDGE_SERVER,
    transport: 'stdio',
    command: process.execPath,
    args: [
      tackBin(),
      'serve-knowledge',
      ...bundles.map((b) => (b.name ? `${b.name}=${b.path}` : b.path)),
      ...(runtimes.sqlite ? ['--sqlite', runtimes.sqlite.database] : []),
    ],
    env: runtimes.postgres ? { [POSTGRES_URL_ENV]: runtimes.postgres.url } : {},
    cwd: config.projectRoot,
    enabled: true,
    startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
    callTimeoutMs: DEFAULT_CALL_TIMEOUT_MS,
    enabledTools: undefined,
    trusted: true,
    alwaysLoad: false,
    disabledTools: undefined,
    source: config.sources.at(-1) ?? {
      file: join(config.projectRoot, 'tack.json'),
      scope: 'project',
      format: 'tack',
    },
  };
}

/** bin/tack.js of this package, found from this module whether it runs from src/ (tests) or dist/src/. */
function tackBin(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'bin', 'tack.js'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('bin/tack.js not found above this module');
    dir = parent;
  }
  return join(dir, 'bin', 'tack.js');
}
