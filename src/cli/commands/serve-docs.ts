import { join } from 'node:path';
import { startDocsServer } from '../../servers/docs/start.js';
import { printErr } from '../output.js';
import { parseListen, untilStopped } from '../serving.js';
import { type GlobalOptions, loadCliConfig } from '../with-host.js';

export interface ServeDocsOptions extends GlobalOptions {
  http?: string;
  watch?: boolean;
}

/** `tack serve-docs <folder> [--http [host:]port] [--no-watch]` */
export async function serveDocsCommand(folder: string, options: ServeDocsOptions): Promise<number> {
  const config = await loadCliConfig(options);
  const server = await startDocsServer({
    folder,
    http: options.http === undefined ? undefined : parseListen(options.http),
    // Over HTTP the token and allowed hosts come from the configuration's serve section, as for tack serve.
    serve: options.http === undefined ? undefined : config.serve,
    watch: options.watch !== false,
    // limits.docsFileBytes, docsDepth, docsFiles and docsTotalBytes from tack.json.
    limits: config.limits,
    cacheDir: join(config.paths.stateDir, 'indexes'),
    // Through the output layer: a problem quotes a document's path or words.
    onError: (error) => printErr(`tack serve-docs: ${error.message}`),
    onWarning: (message) => printErr(`tack serve-docs: ${message}`),
  });
  printErr(
    `tack serve-docs: ${server.library.size} documents from ${server.library.root}` +
      `${server.url ? ` at ${server.url}` : ' on stdio'}${options.watch === false ? '' : ', watching for edits'}\n`,
  );
  await untilStopped(Boolean(server.url));
  await server.close();
  return 0;
}
