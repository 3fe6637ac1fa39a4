import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every .ts file under `dir`, for the tests that hold a rule over the source code. */
export function tsSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? tsSources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}
