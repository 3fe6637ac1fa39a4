import { realpathSync, statSync } from 'node:fs';

/** The real path, or undefined when it does not exist or cannot be resolved (a probe, not an error). */
export function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `path` is a directory (following links); false when it cannot be read. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
