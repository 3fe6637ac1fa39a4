import type { Concept } from './concept.js';
import type { IssueSink } from './issues.js';
import { atxHeading } from './links.js';

/** A typed, named hole the model may fill (§10.2); binding semantics follow `runtime`. */
export interface ComputationParameter {
  name: string;
  type: string;
  required: boolean;
}

/** The contract of an `Attested Computation` concept (§10.2), read from its front matter and body. */
export interface ComputationContract {
  /** REQUIRED for the type; undefined when missing (a warning, and nothing can run it). */
  runtime?: string;
  parameters: ComputationParameter[];
  /** `computation`: a path (§6.2) to the file holding the computation, instead of a body fence. */
  file?: string;
  /** The body's `# Computation` code block, when there is no `computation` file. */
  inline?: { text: string; line: number; info: string };
  executor?: { resource?: string; receipt: string[] };
  attester?: { resource?: string };
}

/** Parameter names become bind variables (`@year`): keep them to what every SQL dialect binds. */
const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function readComputationContract(concept: Concept, sink: IssueSink): ComputationContract {
  const { data } = concept;
  const line = (key: string) => concept.keyLines.get(key);
  const contract: ComputationContract = { parameters: [] };
  if (typeof data.runtime === 'string' && data.runtime.trim() !== '') contract.runtime = data.runtime.trim();
  else
    sink.warn(
      'computation-runtime',
      '`runtime` is required for an Attested Computation (it says how the computation runs)',
      line('runtime') ?? 1,
    );

  if (data.parameters !== undefined && data.parameters !== null) {
    if (!Array.isArray(data.parameters))
      sink.warn(
        'computation-parameters',
        '`parameters` should be a list of { name, type, required }',
        line('parameters'),
      );
    else
      data.parameters.forEach((entry, i) => {
        const p = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
        if (typeof p.name !== 'string' || !PARAMETER_NAME.test(p.name)) {
          sink.warn(
            'computation-parameters',
            `\`parameters[${i}].name\` must be an identifier (letters, digits, _)`,
            line('parameters'),
          );
          return;
        }
        if (contract.parameters.some((q) => q.name === p.name)) {
          sink.warn('computation-parameters', `parameter "${p.name}" is declared twice`, line('parameters'));
          return;
        }
        contract.parameters.push({
          name: p.name,
          type: typeof p.type === 'string' ? p.type.trim().toLowerCase() : 'string',
          required: p.required === true,
        });
      });
  }

  if (typeof data.computation === 'string' && data.computation.trim() !== '')
    contract.file = data.computation.trim();
  else if (data.computation !== undefined && data.computation !== null)
    sink.warn(
      'field-shape',
      '`computation` should be a path to the file holding the computation',
      line('computation'),
    );
  const inline = computationBlock(concept.body, concept.bodyLine);
  if (inline && !contract.file) contract.inline = inline;
  if (inline && contract.file)
    sink.warn(
      'computation-twice',
      'both a `computation` file and a # Computation code block: the file is the computation',
      line('computation'),
    );
  if (!inline && !contract.file)
    sink.warn(
      'computation-missing',
      'no computation: add a `computation` path or a code block under # Computation',
      concept.bodyLine,
    );

  const shape = (key: string, expected: string) =>
    sink.warn('field-shape', `\`${key}\` should be ${expected}`, line(key.split('.')[0]!));
  const executor = mapping(data.executor);
  if (executor) {
    const receipt = executor.receipt;
    if (receipt !== undefined && !(Array.isArray(receipt) && receipt.every((r) => typeof r === 'string')))
      shape(
        'executor.receipt',
        'a list of the field names a run returns, such as [job_id, executed_sql, result]',
      );
    contract.executor = {
      ...(typeof executor.resource === 'string' ? { resource: executor.resource } : {}),
      receipt: Array.isArray(receipt) ? receipt.filter((r) => typeof r === 'string') : [],
    };
  } else if (data.executor !== undefined && data.executor !== null)
    shape('executor', 'a mapping { resource, receipt }');
  const attester = mapping(data.attester);
  if (attester)
    contract.attester = typeof attester.resource === 'string' ? { resource: attester.resource } : {};
  else if (data.attester !== undefined && data.attester !== null) shape('attester', 'a mapping { resource }');
  return contract;
}

function mapping(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * The first code block under a `# Computation` heading (any level), fenced (``` or ~~~) or indented by four
 * spaces as in the spec's own examples. Hand-written: a Markdown parser would be a dependency for one lookup,
 * and the rules needed here (headings outside fences, one block) are a few lines.
 */
export function computationBlock(
  body: string,
  bodyLine = 1,
): { text: string; line: number; info: string } | undefined {
  const lines = body.split('\n');
  let fence: string | undefined;
  let inSection = false;
  let level = 0;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const open = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)/.exec(text);
    if (fence === undefined && open) {
      if (inSection) {
        const marker = open[2]!;
        const indent = open[1]!.length;
        const out: string[] = [];
        for (let j = i + 1; j < lines.length; j++) {
          const l = lines[j]!;
          if (new RegExp(`^ {0,3}${marker[0]}{${marker.length},}\\s*$`).test(l))
            return { text: out.join('\n'), line: bodyLine + i + 1, info: open[3] ?? '' };
          out.push(l.slice(Math.min(indent, l.length - l.trimStart().length)));
        }
        return { text: out.join('\n'), line: bodyLine + i + 1, info: open[3] ?? '' };
      }
      fence = open[2]!;
      continue;
    }
    if (fence !== undefined) {
      if (new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`).test(text)) fence = undefined;
      continue;
    }
    const heading = atxHeading(text);
    if (heading) {
      if (inSection && heading.level <= level) return undefined;
      if (heading.text.toLowerCase() === 'computation') {
        inSection = true;
        level = heading.level;
      }
      continue;
    }
    if (inSection && /^( {4}|\t)\S/.test(text)) {
      const out: string[] = [];
      let j = i;
      for (; j < lines.length; j++) {
        const l = lines[j]!;
        if (/^( {4}|\t)/.test(l)) out.push(l.replace(/^( {4}|\t)/, ''));
        else if (l.trim() === '') out.push('');
        else break;
      }
      while (out.length > 0 && out[out.length - 1] === '') out.pop();
      return { text: out.join('\n'), line: bodyLine + i, info: '' };
    }
  }
  return undefined;
}
