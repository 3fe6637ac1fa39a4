import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { REPO } from '../helpers/project.js';

describe('schema/tack.schema.json', () => {
  it('is the JSON Schema generated from the zod schema (run `npm run schema` when this fails)', () => {
    const published = JSON.parse(readFileSync(join(REPO, 'schema', 'tack.schema.json'), 'utf8'));
    expect(published).toEqual(configJsonSchema());
  });

  it('describes the three transports and the server name rule', () => {
    const schema = configJsonSchema() as {
      properties: {
        mcpServers: { propertyNames: { pattern: string }; additionalProperties: { anyOf: unknown[] } };
      };
    };
    const servers = schema.properties.mcpServers;
    expect(servers.additionalProperties.anyOf).toHaveLength(3);
    const name = new RegExp(servers.propertyNames.pattern);
    expect(['docs', 'my-server', 'a_b', 'x1'].every((n) => name.test(n))).toBe(true);
    expect(['a__b', 'a_', 'my server', ''].some((n) => name.test(n))).toBe(false);
  });
});
