import { TackError } from '../../errors.js';
import type { ComputationContract, ComputationParameter } from '../computation.js';
import { parseTimeValue } from '../time.js';

/** A checked value: what the driver receives as a bind value. Optional parameters left out are `null`. */
export type ParameterValue = string | number | boolean | null;

/** The parameter types tack can check, and the spellings it reads as each. */
export type ParameterType = 'integer' | 'number' | 'string' | 'boolean' | 'date' | 'datetime';

const TYPE_ALIASES: Record<string, ParameterType> = {
  integer: 'integer',
  int: 'integer',
  number: 'number',
  float: 'number',
  double: 'number',
  string: 'string',
  text: 'string',
  boolean: 'boolean',
  bool: 'boolean',
  date: 'date',
  datetime: 'datetime',
  timestamp: 'datetime',
  timestamptz: 'datetime',
};

/** What each type accepts, for messages. */
const EXPECTED: Record<ParameterType, string> = {
  integer: 'an integer (a JSON number without a fraction, within ±2^53)',
  number: 'a finite number',
  string: 'a string',
  boolean: 'true or false',
  date: 'a calendar date written YYYY-MM-DD',
  datetime: 'an ISO 8601 datetime with a UTC offset, such as 2026-06-30T14:00:00Z',
};

const EXAMPLE: Record<ParameterType, string> = {
  integer: '2026',
  number: '12.5',
  string: '"EUR"',
  boolean: 'true',
  date: '"2026-06-30"',
  datetime: '"2026-06-30T14:00:00Z"',
};

/** A value of `type` as JSON text (`2026`, `"EUR"`): hints show it in whatever form their caller writes values. */
export function exampleValue(type: ParameterType): string {
  return EXAMPLE[type];
}

export function parameterType(parameter: ComputationParameter): ParameterType | undefined {
  return TYPE_ALIASES[parameter.type.toLowerCase()];
}

/**
 * Checks the values a caller (usually the model) supplies for a computation's declared parameters, and returns
 * them typed: every declared parameter present, optional ones left out as `null`. Strict by design: `"2026"` is
 * not an integer, unknown names are refused, and nothing is coerced, because a value that needed guessing is a
 * value the caller should restate. The values only ever reach the driver as bind values; this check is what
 * makes them the values they claim to be, not what keeps them out of the SQL text.
 */
export function checkParameters(
  contract: ComputationContract,
  values: Record<string, unknown>,
  conceptPath?: string,
): Record<string, ParameterValue> {
  const subject = (name?: string) => ({
    ...(conceptPath ? { file: conceptPath } : {}),
    ...(name ? { path: `parameters.${name}` } : {}),
  });
  const declared = contract.parameters;
  const shape = declared.map((p) => `${p.name}: ${p.type}${p.required ? '' : '?'}`).join(', ') || 'none';
  if (typeof values !== 'object' || values === null || Array.isArray(values))
    throw new TackError('COMPUTATION_INPUT', 'the parameter values must be an object of name → value', {
      subject: subject(),
      hint: `Pass an object with the declared parameters (${shape}).`,
    });

  const unknown = Object.keys(values).filter((k) => !declared.some((p) => p.name === k));
  if (unknown.length > 0)
    throw new TackError(
      'COMPUTATION_INPUT',
      `unknown parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}: this computation declares ${shape}`,
      {
        subject: subject(unknown[0]),
        hint: 'Supply values only for the declared parameters; the computation itself cannot be changed.',
      },
    );

  const checked: Record<string, ParameterValue> = {};
  for (const parameter of declared) {
    const type = parameterType(parameter);
    if (type === undefined)
      throw new TackError(
        'COMPUTATION_FAILED',
        `parameter "${parameter.name}" has type "${parameter.type}", which tack cannot check`,
        {
          subject: subject(parameter.name),
          hint: `Declare it as one of ${Object.keys(TYPE_ALIASES).join(', ')} in the concept.`,
        },
      );
    const value = values[parameter.name];
    if (value === undefined || value === null) {
      if (parameter.required)
        throw new TackError('COMPUTATION_INPUT', `missing required parameter "${parameter.name}" (${type})`, {
          subject: subject(parameter.name),
          hint: `Pass ${EXPECTED[type]}, for example {"${parameter.name}": ${EXAMPLE[type]}}.`,
        });
      checked[parameter.name] = null;
      continue;
    }
    if (!accepts(type, value))
      throw new TackError(
        'COMPUTATION_INPUT',
        `parameter "${parameter.name}" must be ${EXPECTED[type]}; got ${describe(value)}`,
        {
          subject: subject(parameter.name),
          hint: `Pass {"${parameter.name}": ${EXAMPLE[type]}}. Values are bound to the query, never written into it.`,
        },
      );
    checked[parameter.name] = value as ParameterValue;
  }
  return checked;
}

function accepts(type: ParameterType, value: unknown): boolean {
  switch (type) {
    case 'integer':
      // Beyond 2^53 a JSON number is already rounded: the value bound would not be the value meant.
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && isCalendarDate(value);
    case 'datetime':
      return typeof value === 'string' && isDatetimeWithOffset(value);
  }
}

/** RFC 3339: what the datetime type binds, stricter than what a bundle may write (no space, no bare hour offset). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

function isCalendarDate(text: string): boolean {
  const parsed = parseTimeValue(text);
  return parsed?.form === 'date' && parsed.raw === text;
}

function isDatetimeWithOffset(text: string): boolean {
  return RFC3339.test(text) && parseTimeValue(text)?.form === 'datetime';
}

function describe(value: unknown): string {
  const kind = Array.isArray(value)
    ? 'a list'
    : typeof value === 'object'
      ? 'an object'
      : `the ${typeof value}`;
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  return `${kind} ${shown.length > 80 ? `${shown.slice(0, 77)}...` : shown}`;
}
