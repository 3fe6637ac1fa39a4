import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { checkServerName } from '../../src/config/load.js';
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
    const samples = [
      'docs',
      'my-server',
      'a_b',
      'x1',
      '-x',
      '_a',
      'a__b',
      'a_',
      'my server',
      '',
      'é',
      'a.b',
      'a--b',
    ];
    // The editor's rule and the loader's rule (which also says why) agree on every sample.
    for (const sample of samples)
      expect(name.test(sample), sample).toBe(checkServerName(sample) === undefined);
    expect(samples.filter((n) => name.test(n))).toEqual([
      'docs',
      'my-server',
      'a_b',
      'x1',
      '-x',
      '_a',
      'a--b',
    ]);
  });
});
