import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configJsonSchema } from '../src/config/json-schema.js';

/** Writes schema/tack.schema.json from the zod schema; `npm run schema`. A test fails when it is stale. */
const target = fileURLToPath(new URL('../../schema/tack.schema.json', import.meta.url));
writeFileSync(target, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target}`);
