import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ConfigSource, loadConfig, parseConfigText } from '../../src/config/load.js';
import { TackError } from '../../src/errors.js';
import { tempProject } from '../helpers/project.js';

/**
 * Configuration files are written by people and by tools, and a project's may come from anyone: whatever the
 * text, loading ends in a configuration or a CONFIG_INVALID error naming the file, never in another exception.
 * Seeded (the same inputs on every run); a failure prints the seed and the shrunk input.
 */
const RUNS = { seed: 1313, numRuns: 300 };

/** Values a server entry's fields might hold, hostile ones included. */
const anyValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant('${UNSET_VAR}'),
  fc.constant('${HOME:-x}'),
  fc.constant('__proto__'),
  fc.array(fc.string(), { maxLength: 4 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
);

const entry = fc.dictionary(
  fc.constantFrom(
    'command',
    'args',
    'env',
    'cwd',
    'type',
    'url',
    'headers',
    'enabled',
    'startupTimeoutMs',
    'callTimeoutMs',
    'disabledTools',
    'enabledTools',
    'oauth',
    'alwaysLoad',
    '__proto__',
    'constructor',
  ),
  anyValue,
  { maxKeys: 6 },
);

const configObject = fc.record(
  {
    mcpServers: fc.oneof(fc.dictionary(fc.string({ maxLength: 12 }), entry, { maxKeys: 4 }), anyValue),
    serve: fc.oneof(
      fc.dictionary(fc.constantFrom('token', 'namespace', 'toolSearch', 'x'), anyValue),
      anyValue,
    ),
    skills: fc.oneof(fc.array(fc.string()), anyValue),
    limits: fc.oneof(
      fc.dictionary(fc.constantFrom('jsonDepth', 'scanBytes', 'docsFiles'), anyValue),
      anyValue,
    ),
    permissions: fc.oneof(
      fc.dictionary(fc.constantFrom('allow', 'ask', 'deny'), fc.array(fc.string())),
      anyValue,
    ),
    agent: fc.oneof(fc.dictionary(fc.constantFrom('model', 'maxSteps', 'hooks'), anyValue), anyValue),
    knowledge: anyValue,
  },
  { requiredKeys: [] },
);

/** Text that is JSON of a config-like object, any JSON value, deep nesting, or broken JSON. */
const configText = fc.oneof(
  configObject.map((value) => JSON.stringify(value)),
  fc.json({ depthSize: 'medium' }),
  fc
    .integer({ min: 1, max: 20_000 })
    .map((depth) => `{"mcpServers":${'['.repeat(depth)}${']'.repeat(depth)}}`),
  fc.string().map((text) => `{"mcpServers": ${text}`),
  fc.string(),
  fc.constant('\uFEFF{"mcpServers": {}}'),
);

const sources: ConfigSource[] = [
  { file: '/project/tack.json', scope: 'project', format: 'tack' },
  { file: '/project/.mcp.json', scope: 'project', format: 'mcp.json' },
];

describe('configuration fuzz', () => {
  it('parseConfigText reports problems and never throws, whatever the text', () => {
    fc.assert(
      fc.property(configText, fc.constantFrom(...sources), (text, source) => {
        const parsed = parseConfigText(text, source, { HOME: '/home/u' });
        for (const issue of parsed.issues) {
          expect(issue.file).toBe(source.file);
          expect(typeof issue.message).toBe('string');
        }
        for (const server of parsed.servers) expect(typeof server.name).toBe('string');
      }),
      RUNS,
    );
  });

  it('loadConfig gives a configuration or CONFIG_INVALID naming the file', () => {
    using project = tempProject();
    fc.assert(
      fc.property(configText, (text) => {
        project.write('tack.json', text);
        try {
          const config = loadConfig({ cwd: project.dir, env: project.env });
          expect(Array.isArray(config.servers)).toBe(true);
        } catch (error) {
          expect(TackError.isInstance(error)).toBe(true);
          expect((error as TackError).code).toBe('CONFIG_INVALID');
          expect((error as TackError).subject.file).toMatch(/tack\.json$/);
        }
      }),
      { ...RUNS, numRuns: 100 },
    );
  });
});
