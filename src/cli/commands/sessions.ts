import { basename, join } from 'node:path';
import { rebuildStep, type StepRequest, stepRequest, stepSummaries } from '../../agent/session-requests.js';
import { findTranscript, readTranscript } from '../../agent/transcript.js';
import { TackError } from '../../errors.js';
import { openConfiguredStore } from '../../store/open.js';
import { type SessionRow, sessionSummary } from '../../store/sessions.js';
import { printable } from '../../util/printable.js';
import { isTerminal, print, printErr, printJson, printListing, table, write } from '../output.js';
import { cliStoreLocation, type GlobalOptions } from '../with-host.js';

export interface SessionsListOptions extends GlobalOptions {
  all?: boolean;
  limit?: string;
}

export interface SessionShowOptions extends GlobalOptions {
  step?: string;
  request?: boolean;
}

/** `tack sessions [--all] [--limit N]`: this folder's sessions (every folder's with --all), newest first. */
export async function sessionsListCommand(options: SessionsListOptions): Promise<number> {
  const limit = Math.max(1, Number(options.limit ?? 20) || 20);
  const store = await openConfiguredStore(cliStoreLocation(options));
  let rows: SessionRow[];
  try {
    rows = await store.sessions.list({ limit, ...(options.all ? {} : { cwd: process.cwd() }) });
  } finally {
    await store.close();
  }
  return printListing(
    options,
    rows,
    options.all
      ? 'No sessions yet: `tack run` and `tack chat` record theirs.'
      : "No sessions started in this folder (`tack sessions --all` lists every folder's).",
    () => rows.map((row) => sessionSummary(row)).join('\n'),
  );
}

function tokensOf(request: StepRequest): string {
  const u = request.usage;
  if (!u) return request.outcome === 'failed' ? 'failed' : '-';
  const cached = u.cachedInputTokens > 0 ? ` (${u.cachedInputTokens} cached)` : '';
  return `${u.inputTokens}${cached} in / ${u.outputTokens} out`;
}

/** The steps of a session, one line each. */
function stepsTable(requests: readonly StepRequest[]): string {
  return table(
    ['STEP', 'RUN.STEP', 'MODEL', 'BYTES', 'TOKENS (PROVIDER)', 'PREFIX', 'NEW PARTS'],
    requests.map((r) => [
      String(r.number),
      `${r.run}.${r.runStep}`,
      printable(r.model),
      String(r.bytes),
      tokensOf(r),
      printable(r.prefixHash ?? '-'),
      `${r.newParts} of ${r.partCount}`,
    ]),
  );
}

/** One step: what it sent, part by part. */
function stepDetail(request: StepRequest): string {
  const lines = [
    // A transcript is a file: what it says is made printable before it reaches the terminal.
    printable(
      `step ${request.number} (run ${request.run}, step ${request.runStep}) to ${request.model}, ${request.outcome}, at ${request.at}`,
    ),
    printable(
      `body: ${request.bytes} bytes, sha256 ${request.sha256}${request.prefixHash ? `; prefix ${request.prefixHash}` : ''}`,
    ),
    `provider reported: ${tokensOf(request)}`,
    '',
    table(
      ['LIST', '#', 'HASH', 'TOKENS', 'SENT FIRST', 'PART'],
      request.parts.map((p) => [
        printable(p.list),
        String(p.index),
        printable(p.hash),
        p.tokens === undefined ? '?' : String(p.tokens),
        p.firstStep === request.number ? 'new' : `step ${p.firstStep}`,
        `${p.breakpoint ? '[cache breakpoint] ' : ''}${p.label}`,
      ]),
    ),
  ];
  const counted = request.parts.reduce((sum, p) => sum + (p.tokens ?? 0), 0);
  lines.push(
    '',
    `parts: ${request.parts.length}, ${counted} tokens counted over their JSON; the provider's count above is the one billed`,
  );
  if (request.missing > 0)
    lines.push(
      `${request.missing} part(s) were not recorded (over the size cap): --request cannot rebuild it exactly`,
    );
  return lines.join('\n');
}

/**
 * `tack sessions show <session> [--step N [--request]]`: a session's steps; one step's parts; or its request body,
 * rebuilt from the transcript, on stdout exactly as the provider received it.
 */
export async function sessionShowCommand(id: string, options: SessionShowOptions): Promise<number> {
  // The store is an index of the transcript files under the state folder; without a row the files are scanned.
  const location = cliStoreLocation(options);
  const store = await openConfiguredStore(location);
  let file: string;
  try {
    file = await findTranscript(join(location.paths.stateDir, 'sessions'), id, store.sessions);
  } finally {
    await store.close();
  }
  const { events, problems } = readTranscript(file);
  for (const problem of problems) printErr(`note: ${file}: ${problem}`);
  if (options.step === undefined) {
    const requests = await stepSummaries(events);
    if (options.request)
      throw new TackError('USAGE', '--request needs --step', {
        hint: 'Give the step: tack sessions show S --step 3 --request',
      });
    if (options.json) {
      printJson({ file, steps: requests });
      return 0;
    }
    print(`session ${basename(file, '.jsonl')}: ${file}`);
    print(
      requests.length === 0
        ? 'No model calls recorded (a transcript older than request records has none).'
        : stepsTable(requests),
    );
    return 0;
  }
  const number = Number(options.step);
  const { step: request, steps } = Number.isInteger(number)
    ? await stepRequest(events, number)
    : { step: undefined, steps: (await stepSummaries(events)).length };
  if (!request)
    throw new TackError('USAGE', `--step ${options.step}: the session has steps 1 to ${steps}`, {
      subject: { file },
      hint: `List them with tack sessions show ${id}.`,
    });
  if (!options.request) {
    if (options.json) printJson(request);
    else print(stepDetail(request));
    return 0;
  }
  const rebuilt = rebuildStep(events, number);
  if (!rebuilt) return 1;
  // The bytes as sent and nothing else, so that they can be compared or replayed; a terminal gets a line end.
  write(rebuilt.text);
  if (isTerminal('stdout')) write('\n');
  if (rebuilt.exact) printErr(`rebuilt byte for byte: sha256 ${printable(request.sha256)} is what was sent`);
  else
    printErr(
      rebuilt.missing.length > 0
        ? `not exact: ${rebuilt.missing.length} part(s) were not recorded (over the size cap) or are damaged in the transcript, and stand as null`
        : 'not exact: the transcript masked a secret the request carried (its sha256 differs from what was sent)',
    );
  return rebuilt.exact ? 0 : 1;
}
