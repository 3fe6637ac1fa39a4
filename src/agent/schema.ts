import { isRecord } from '../util/is-record.js';

/**
 * Tool input schemas as providers accept them. MCP servers send any JSON Schema; providers take subsets:
 * Anthropic and OpenAI want an object at the root and reject `anyOf`/`oneOf`/`allOf` there; OpenAI rejects a
 * `required` name missing from `properties`; some servers send `$schema` draft markers, boolean sub-schemas or
 * no `properties` at all. A schema a provider rejects fails the whole turn, so it is mended here instead, and
 * every change is reported (the model may then send arguments the server checks and refuses: an error the
 * model can act on, unlike a failed turn).
 */
export interface SanitizedSchema {
  schema: Record<string, unknown>;
  /** What was changed, in words; empty when the schema was taken as it was. */
  changes: string[];
}

const DROP = ['$schema', '$id', '$comment'];

export function sanitizeSchema(input: unknown): SanitizedSchema {
  const changes: string[] = [];
  const root = isRecord(input) ? clean(input, changes, '') : {};
  if (!isRecord(input)) changes.push('no schema: an object with any properties');
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const variants = root[key];
    if (!Array.isArray(variants)) continue;
    // Merge the variants' properties into one object; which combination is valid is left to the server.
    const properties: Record<string, unknown> = { ...(isRecord(root.properties) ? root.properties : {}) };
    for (const v of variants)
      if (isRecord(v) && isRecord(v.properties)) Object.assign(properties, v.properties);
    delete root[key];
    root.properties = properties;
    changes.push(`root ${key} merged into one object (the server checks which combination is valid)`);
  }
  if (root.type !== 'object') {
    if (root.type !== undefined) changes.push(`root type ${JSON.stringify(root.type)} replaced by object`);
    root.type = 'object';
  }
  if (!isRecord(root.properties)) root.properties = {};
  if (Array.isArray(root.required)) {
    const properties = root.properties as Record<string, unknown>;
    const kept = root.required.filter(
      (name): name is string => typeof name === 'string' && name in properties,
    );
    if (kept.length !== root.required.length) {
      changes.push('required names without a property dropped');
      root.required = kept;
    }
  }
  return { schema: root, changes };
}

function clean(node: Record<string, unknown>, changes: string[], path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROP.includes(key)) {
      if (path === '' && key === '$schema') continue; // a draft marker: nothing lost, not worth a notice
      changes.push(`${path || 'root'}: ${key} dropped`);
      continue;
    }
    if ((key === 'properties' || key === '$defs' || key === 'definitions') && isRecord(value)) {
      const props: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(value)) {
        if (typeof sub === 'boolean') {
          props[name] = {};
          changes.push(`${path}${name}: boolean schema replaced by {}`);
        } else props[name] = isRecord(sub) ? clean(sub, changes, `${path}${name}.`) : sub;
      }
      out[key] = props;
    } else if ((key === 'items' || key === 'additionalProperties') && isRecord(value)) {
      out[key] = clean(value, changes, `${path}${key}.`);
    } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
      out[key] = value.map((v) => (isRecord(v) ? clean(v, changes, path) : v));
    } else out[key] = value;
  }
  return out;
}
