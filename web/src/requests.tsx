import { useMemo, useState } from 'preact/hooks';
import { q } from './api';
import { Load } from './components';
import { useApi } from './hooks';
import type { StepRequest, StepRequestView, TimelineEvent } from './types';

type RequestEvent = Extract<TimelineEvent, { type: 'request' }>;

const count = (n: number) => n.toLocaleString('en-US');

/** A model call in the timeline, one line; its detail (fetched when opened) below it. */
export function RequestLine(props: { session: string; number: number; event: RequestEvent }) {
  const [open, setOpen] = useState(false);
  const e = props.event;
  return (
    <div class={`item request request-${e.outcome}`} data-testid="request">
      <b>request</b> step {props.number} · {e.model} · {count(e.bytes)} bytes ·{' '}
      <span class={e.outcome === 'failed' ? 'error' : ''}>{e.outcome}</span>{' '}
      <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'hide what was sent' : 'what was sent'}
      </button>
      {open && <RequestDetail session={props.session} number={props.number} />}
    </div>
  );
}

function usageLine(step: StepRequest): string {
  const u = step.usage;
  if (!u) return step.outcome === 'failed' ? 'nothing: the call failed' : 'not reported';
  return `${count(u.inputTokens)} in (${count(u.cachedInputTokens)} cached) / ${count(u.outputTokens)} out`;
}

function exactLine(view: StepRequestView): string {
  if (view.exact) return 'rebuilt byte for byte: its sha256 is the one taken when it was sent';
  if (view.missing.length > 0)
    return `not exact: ${view.missing.length} part(s) were not recorded (over the size cap) and stand as null`;
  return 'not exact: the transcript masked a secret the request carried, so its sha256 differs from what was sent';
}

/** The body indented for reading; undefined when it does not parse (a body cut at the cap). */
function pretty(body: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(body) as unknown, null, 2);
  } catch {
    return undefined;
  }
}

/**
 * What step `number` sent: the provider's usage, the prefix hash, its parts, and the body rebuilt from the
 * transcript, as sent by default. All of it is the transcript's text, shown as text.
 */
function RequestDetail(props: { session: string; number: number }) {
  const load = useApi<StepRequestView>(`/sessions/${q(props.session)}/requests/${props.number}`);
  return (
    <Load load={load}>
      {(view) => (
        <div class="request-detail" data-testid="request-detail">
          <p class="small">
            run {view.step.run}, step {view.step.runStep} · provider reported {usageLine(view.step)} · prefix{' '}
            <code>{view.step.prefixHash ?? '-'}</code> · sha256 <code>{view.step.sha256}</code>
          </p>
          <table class="grid" data-testid="request-parts">
            <thead>
              <tr>
                <th>list</th>
                <th>#</th>
                <th>hash</th>
                <th>tokens</th>
                <th>sent first</th>
                <th>part</th>
              </tr>
            </thead>
            <tbody>
              {view.step.parts.map((part) => (
                <tr key={`${part.list}-${part.index}`}>
                  <td>{part.list}</td>
                  <td class="num">{part.index}</td>
                  <td>
                    <code>{part.hash}</code>
                  </td>
                  <td class="num">{part.tokens === undefined ? '?' : count(part.tokens)}</td>
                  <td>{part.firstStep === view.step.number ? 'new' : `step ${part.firstStep}`}</td>
                  <td>
                    {part.breakpoint && (
                      <span class="label breakpoint" title="a prompt cache breakpoint (cache_control)">
                        cache breakpoint
                      </span>
                    )}{' '}
                    {part.label}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class={view.exact ? 'exact' : 'error'} data-testid="request-exact">
            {exactLine(view)}
          </p>
          <RequestBody session={props.session} view={view} />
        </div>
      )}
    </Load>
  );
}

function RequestBody(props: { session: string; view: StepRequestView }) {
  const { view } = props;
  const [indented, setIndented] = useState(false);
  const readable = useMemo(() => (indented ? pretty(view.body) : undefined), [indented, view.body]);
  return (
    <>
      <div class="toolbar">
        <button type="button" aria-pressed={indented} onClick={() => setIndented(!indented)}>
          {indented ? 'as sent' : 'pretty-printed'}
        </button>
        {indented && readable === undefined && (
          <span class="muted small">not JSON as shown (cut at the cap): shown as sent</span>
        )}
        {view.truncated !== undefined && (
          <span class="muted small" data-testid="request-truncated">
            cut at 2 MiB: {count(view.truncated)} more bytes not shown;{' '}
            <code>
              tack sessions show {props.session} --step {view.step.number} --request
            </code>{' '}
            prints all of it
          </span>
        )}
      </div>
      <pre class="request-body" data-testid="request-body">
        {readable ?? view.body}
      </pre>
    </>
  );
}
