import { VERSION } from '../version.js';
import { serverRows } from './catalog.js';
import type { Route } from './routes.js';
import { heldDefinitions } from './security.js';
import { listSessions } from './sessions.js';

/** The console's front page: the version, the project, the servers and how much there is on each page. */
export const overviewRoutes: Route[] = [
  {
    method: 'GET',
    path: 'overview',
    async json({ context: { host, config } }) {
      const sessions = host.store ? (await listSessions(host.store)).length : 0;
      return {
        version: VERSION,
        projectRoot: config.projectRoot,
        servers: serverRows(host),
        sessions,
        held: (await heldDefinitions(host.store, config)).length,
        bundles: config.knowledge.bundles.length,
        store: host.store !== undefined,
      };
    },
  },
];
