import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import { fixtureEntry, type TempProject, tempProject } from './project.js';

export interface StoreGateway {
  project: TempProject;
  gateway: RunningGateway;
  /** The codes of the warnings the gateway gave. */
  warnings: string[];
  /** GET /readyz's status. */
  readyz(): Promise<number>;
  close(): Promise<void>;
}

/** `tack serve --http` in this process on the PostgreSQL store at `storeUrl`, with the stdio fixture as `fx`. */
export async function gatewayOnStore(storeUrl: string): Promise<StoreGateway> {
  const project = tempProject();
  project.write('tack.json', { mcpServers: { fx: fixtureEntry('stdio-server.js') } });
  project.env.TACK_STORE_URL = storeUrl;
  const warnings: string[] = [];
  const gateway = await startGateway({
    config: project.load(),
    http: { port: 0 },
    onWarning: (w) => warnings.push(w.code),
  });
  return {
    project,
    gateway,
    warnings,
    readyz: async () => (await fetch(gateway.url!.replace(/\/mcp$/, '/readyz'))).status,
    close: async () => {
      await gateway.close().catch(() => {});
      project[Symbol.dispose]();
    },
  };
}
