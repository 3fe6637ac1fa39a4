import { errorMessage } from '../errors.js';
import { sendWarning, type WarningSink } from '../util/warnings.js';
import { TackStore } from './store.js';

/**
 * The store of a configuration's state directory, opened once by whoever composes tack (the CLI, startAgent,
 * startGateway) and handed to the parts that use it; they never open one themselves. A store that cannot be
 * opened is a warning, not a failure: tack works without it, probing every server's era at every start and
 * keeping no pins, trust, audit or sessions.
 */
export function openStore(paths: { storeFile: string }, onWarning?: WarningSink): TackStore | undefined {
  try {
    return TackStore.open(paths.storeFile);
  } catch (error) {
    sendWarning(onWarning, { code: 'STORE_DISABLED', message: `store disabled: ${errorMessage(error)}` });
    return undefined;
  }
}
