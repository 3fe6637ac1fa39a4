import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from './helpers/project.js';

/** The fixture servers run as real processes from dist/: fail early, and clearly, when they were not built. */
export default function setup(): void {
  const probe = join(FIXTURES, 'stdio-server.js');
  if (!existsSync(probe)) {
    throw new Error(`${probe} is missing: run \`npm run build\` (npm test does it for you).`);
  }
}
