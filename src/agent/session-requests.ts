import { countTokens } from '../tokens/count.js';
import { isRecord } from '../util/is-record.js';
import { printable } from '../util/printable.js';
import type { Usage } from './events.js';
import { type RebuiltBody, rebuildBody } from './request-record.js';
import { readTranscript, type TranscriptEvent } from './transcript.js';

type RequestEvent = Extract<TranscriptEvent, { type: 'request' }>;

/** One element of a request's lists (a message, a tool definition, a system block), as a step sent it. */
export interface RequestPart {
  /** The body's list it is in: `messages`, `tools`, `system`, `input`... */
  list: string;
  index: number;
  /** First 16 hex digits of the SHA-256 of its JSON (request-record.ts `partHash`). */
  hash: string;
  /** Its JSON's length in bytes; undefined when the transcript does not have it (the size cap). */
  bytes?: number;
  /** Its JSON's tokens (the model's tokenizer when known, else the estimate: tokens/count.ts). */
  tokens?: number;
  /** What it is, in a few words: a role and the start of its text, a tool's name. */
  label: string;
  /** It carries a prompt cache breakpoint (`cache_control`). */
  breakpoint: boolean;
  /** The step that sent it first: equal to the step's own number for what is new in it. */
  firstStep: number;
}

/** One model call of a session, as its transcript recorded it. */
export interface StepRequest {
  /** 1-based, across the whole session: every model call is a step, a fallback's retry of a failed one too. */
  number: number;
  /** The transcript line of its record. */
  seq: number;
  at: string;
  /** The run (user message) it belongs to, 1-based, and its step number within that run. */
  run: number;
  runStep: number;
  /** `provider:model` it was sent to. */
  model: string;
  outcome: 'answered' | 'failed';
  /** The body's length in bytes and SHA-256, as sent. */
  bytes: number;
  sha256: string;
  /** The hash of the prefix before the history (step-start's), equal from step to step while it can be cached. */
  prefixHash?: string;
  /** What the provider reported for the call (absent for a failed one). */
  usage?: Usage;
  parts: RequestPart[];
  /** How many parts it sent, and how many of them no earlier step had sent (counted even when `parts` is not listed). */
  partCount: number;
  newParts: number;
  /** Parts the transcript does not have: a rebuild of this step cannot be exact. */
  missing: number;
}

const isStringRecord = (value: unknown, item: (v: unknown) => boolean): boolean =>
  isRecord(value) && Object.values(value).every(item);

/**
 * A `request` line as this build writes it. A transcript is a file anyone could have edited: a line of another
 * shape is left out (and the steps are numbered without it) rather than trusted.
 */
function isRequestRecord(event: TranscriptEvent): event is RequestEvent {
  if (event.type !== 'request') return false;
  const e = event as Partial<Record<keyof RequestEvent, unknown>>;
  return (
    typeof e.skeleton === 'string' &&
    typeof e.sha256 === 'string' &&
    typeof e.bytes === 'number' &&
    typeof e.model === 'string' &&
    typeof e.step === 'number' &&
    (e.outcome === 'answered' || e.outcome === 'failed') &&
    isStringRecord(e.parts, (v) => typeof v === 'string') &&
    isStringRecord(e.lists, (v) => Array.isArray(v) && v.every((h) => typeof h === 'string'))
  );
}

/** The session's request records, in order. */
function requestRecords(events: readonly TranscriptEvent[]): RequestEvent[] {
  return events.filter(isRequestRecord);
}

/** Every part the session's records stored, by hash, up to (and including) the line `last`. */
function storedParts(records: readonly RequestEvent[], last = Number.POSITIVE_INFINITY): Map<string, string> {
  const parts = new Map<string, string>();
  for (const record of records) {
    if (record.seq > last) break;
    for (const [hash, json] of Object.entries(record.parts)) parts.set(hash, json);
  }
  return parts;
}

const PREVIEW = 60;

function firstText(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'string') return value;
  if (depth > 4 || typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      const text = firstText(item, depth + 1);
      if (text) return text;
    }
    return undefined;
  }
  const record = value as Record<string, unknown>;
  for (const key of ['text', 'content', 'output', 'input']) {
    const text = firstText(record[key], depth + 1);
    if (text) return text;
  }
  return undefined;
}

function hasBreakpoint(element: Record<string, unknown>): boolean {
  if ('cache_control' in element) return true;
  const content = element.content;
  return (
    Array.isArray(content) &&
    content.some((block) => typeof block === 'object' && block !== null && 'cache_control' in block)
  );
}

/** A part in a few words: `tool search_docs`, `user: What is…`, `system: You are…`. */
function describePart(list: string, json: string | undefined): { label: string; breakpoint: boolean } {
  if (json === undefined) return { label: `${list} (not recorded: over the size cap)`, breakpoint: false };
  let element: unknown;
  try {
    element = JSON.parse(json);
  } catch {
    return { label: `${list} (unreadable)`, breakpoint: false };
  }
  if (typeof element !== 'object' || element === null) return { label: list, breakpoint: false };
  const record = element as Record<string, unknown>;
  const fn = record.function as { name?: unknown } | undefined;
  const name =
    typeof record.name === 'string' ? record.name : typeof fn?.name === 'string' ? fn.name : undefined;
  const breakpoint = hasBreakpoint(record);
  if (list === 'tools' && name) return { label: `tool ${name}`, breakpoint };
  const kind =
    typeof record.role === 'string' ? record.role : typeof record.type === 'string' ? record.type : list;
  // A message that only calls tools has no text: the calls say what it is (Anthropic's blocks, OpenAI's list).
  const calls = [
    ...(Array.isArray(record.content) ? record.content : []),
    ...(Array.isArray(record.tool_calls) ? record.tool_calls : []),
  ].flatMap((block: unknown) => {
    const b = block as { type?: unknown; name?: unknown; function?: { name?: unknown } };
    const called = b.type === 'tool_use' ? b.name : b.type === 'function' ? b.function?.name : undefined;
    return typeof called === 'string' ? [`→ ${called}`] : [];
  });
  const text = printable((firstText(record) ?? calls.join(' ')).replace(/\s+/g, ' ').trim());
  const preview = text.length > PREVIEW ? `${text.slice(0, PREVIEW)}…` : text;
  return { label: preview ? `${kind}: ${preview}` : kind, breakpoint };
}

/**
 * The model calls of a session, in order, from its transcript file (`RunningAgent.transcript.file`, or what
 * `tack sessions` lists): what each sent, part by part with hashes and token counts, and what the provider
 * reported. A transcript written before requests were recorded has none.
 */
export function readSessionSteps(file: string): Promise<StepRequest[]> {
  return stepRequests(readTranscript(file).events);
}

/**
 * Step `step`'s request body (numbered as readSessionSteps numbers them), rebuilt from the transcript file; `exact`
 * says it is byte for byte what the provider received. Undefined when the session has no such step.
 */
export function rebuildStepRequest(file: string, step: number): RebuiltStep | undefined {
  return rebuildStep(readTranscript(file).events, step);
}

/** A step's body as rebuilt, and which call it was. */
export type RebuiltStep = RebuiltBody & { seq: number; model: string };

/** The model calls of a session from its transcript's events: readSessionSteps on events already read. */
export function stepRequests(events: readonly TranscriptEvent[]): Promise<StepRequest[]> {
  return collectSteps(events, () => true);
}

/** The model calls with their figures and part counts but no parts listed: what a list of the steps shows. */
export function stepSummaries(events: readonly TranscriptEvent[]): Promise<StepRequest[]> {
  return collectSteps(events, () => false);
}

/**
 * Step `number` alone, as stepRequests gives it (undefined when there is none), and how many steps the session has.
 * Only its parts are described and counted: every step lists the whole history, so describing every step of a
 * thousand-step session takes tens of seconds.
 */
export async function stepRequest(
  events: readonly TranscriptEvent[],
  number: number,
): Promise<{ step: StepRequest | undefined; steps: number }> {
  const requests = await collectSteps(events, (n) => n === number);
  return { step: requests[number - 1], steps: requests.length };
}

/** The model calls; the parts of those `detailed` picks are listed, the others' left empty. */
async function collectSteps(
  events: readonly TranscriptEvent[],
  detailed: (number: number) => boolean,
): Promise<StepRequest[]> {
  const parts = storedParts(requestRecords(events));
  const tokens = new Map<string, number>();
  const firstStep = new Map<string, number>();
  // A part is counted with the tokenizer of the first step that sent it, whichever step is described.
  const firstModel = new Map<string, string>();
  const requests: StepRequest[] = [];
  let run = 1;
  let prefixHash: string | undefined;
  for (const event of events) {
    if (event.type === 'session-end') run++;
    else if (event.type === 'step-start') prefixHash = event.prefixHash;
    else if (event.type === 'usage') {
      const last = requests.at(-1);
      if (last && last.outcome === 'answered' && last.usage === undefined && last.runStep === event.step)
        last.usage = event.stepUsage;
    } else if (isRequestRecord(event)) {
      const number = requests.length + 1;
      const request: StepRequest = {
        number,
        seq: event.seq,
        at: event.at,
        run,
        runStep: event.step,
        model: event.model,
        outcome: event.outcome,
        bytes: event.bytes,
        sha256: event.sha256,
        ...(prefixHash ? { prefixHash } : {}),
        parts: [],
        partCount: 0,
        newParts: 0,
        missing: 0,
      };
      for (const [list, hashes] of Object.entries(event.lists)) {
        for (const [index, hash] of hashes.entries()) {
          const json = parts.get(hash);
          if (json === undefined) request.missing++;
          request.partCount++;
          if (!firstStep.has(hash)) {
            request.newParts++;
            firstStep.set(hash, number);
            firstModel.set(hash, event.model);
          }
          if (!detailed(number)) continue;
          if (json !== undefined && !tokens.has(hash))
            tokens.set(hash, await countTokens(json, firstModel.get(hash) ?? event.model));
          request.parts.push({
            list,
            index,
            hash,
            ...(json !== undefined ? { bytes: Buffer.byteLength(json), tokens: tokens.get(hash) } : {}),
            ...describePart(list, json),
            firstStep: firstStep.get(hash) ?? number,
          });
        }
      }
      requests.push(request);
    }
  }
  return requests;
}

/** rebuildStepRequest on events already read: step `number`'s body from its record and the stored parts. */
export function rebuildStep(events: readonly TranscriptEvent[], number: number): RebuiltStep | undefined {
  const records = requestRecords(events);
  const record = records[number - 1];
  if (!record) return undefined;
  return { ...rebuildBody(record, storedParts(records, record.seq)), seq: record.seq, model: record.model };
}
