import type { ServeConfig } from '../../config/load.js';
import { type HttpOptions, type Served, serveHttp, serveOnStdio } from '../serve.js';
import { DocsLibrary } from './library.js';
import type { DocsLimits } from './limits.js';
import { announceChange, buildDocsServer } from './server.js';

export interface DocsServerOptions {
  folder: string;
  /** Serve over Streamable HTTP instead of stdio. */
  http?: HttpOptions | undefined;
  /**
   * The configuration's `serve` section (`config.serve`), as `tack serve` uses it: its token and allowed hosts
   * apply over HTTP unless `http` sets its own.
   */
  serve?: Pick<ServeConfig, 'token' | 'allowedHosts'> | undefined;
  /** Re-index on edits and tell clients (default true). */
  watch?: boolean;
  /** Where watcher problems are reported (default: stderr). */
  onError?: (error: Error) => void;
  /**
   * Caps on what is read and indexed, named as under `limits` in tack.json (`config.limits` will do); each
   * defaults to DEFAULT_LIMITS's: 10 MiB per document, 32 folder levels, 20,000 documents, 256 MiB in all.
   */
  limits?: Partial<DocsLimits> | undefined;
  /**
   * A folder to keep the index in between runs (`tack serve-docs` passes `<state>/indexes`), so a restart reads
   * the documents but re-indexes only those that changed (DocsLibraryOptions.cacheDir).
   */
  cacheDir?: string | undefined;
  /**
   * Where documents left out by a cap are reported, by name, at start and while watching (default: stderr).
   */
  onWarning?: (message: string) => void;
}

export interface RunningDocsServer extends Served {
  library: DocsLibrary;
}

/** `tack serve-docs`: index the folder, watch it, and serve it over stdio or HTTP. */
export async function startDocsServer(options: DocsServerOptions): Promise<RunningDocsServer> {
  const library = await DocsLibrary.open(options.folder, {
    limits: options.limits,
    cacheDir: options.cacheDir,
  });
  library.on(
    'error',
    options.onError ?? ((error) => process.stderr.write(`tack serve-docs: ${error.message}\n`)),
  );
  const warn =
    options.onWarning ?? ((message: string) => process.stderr.write(`tack serve-docs: ${message}\n`));
  for (const message of library.warnings) warn(message);
  library.on('warning', warn);
  // Watch before serving: an edit made right after a client connects must not fall between the two.
  if (options.watch !== false) await library.watch();
  const factory = ({ era }: { era: 'modern' | 'legacy' }) => buildDocsServer(library, era);
  let served: Served;
  try {
    served = options.http
      ? await serveHttp(factory, {
          ...options.http,
          token: options.http.token ?? options.serve?.token,
          allowedHosts: options.http.allowedHosts ?? options.serve?.allowedHosts,
        })
      : serveOnStdio(factory);
  } catch (error) {
    await library.close();
    throw error;
  }
  library.on('change', (change) => announceChange(served.notifier, change));
  return {
    ...served,
    library,
    close: async () => {
      await library.close();
      await served.close();
    },
  };
}
