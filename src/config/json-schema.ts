import * as z from 'zod';
import { TackConfigFileSchema } from './schema.js';

/**
 * The JSON Schema editors use to complete and check tack.json (`"$schema": "./node_modules/tack/schema/tack.schema.json"`),
 * generated from the zod schema tack validates with, so the two cannot drift.
 */
export function configJsonSchema(): Record<string, unknown> {
  return { ...z.toJSONSchema(TackConfigFileSchema, { io: 'input' }), title: 'tack.json' };
}
