import { useEffect, useMemo, useState } from 'preact/hooks';
import { q, stream } from '../api';
import { BarChart, Json, Load } from '../components';
import { href, useApi } from '../hooks';
import { RequestLine } from '../requests';
import type {
  Approval,
  ApprovalAsked,
  ModelFallback,
  SessionDetail,
  SessionRow,
  SubagentEvent,
  TimelineEvent,
  ToolResult,
} from '../types';

const SHOWN = 200;

export function SessionsPage() {
  const load = useApi<SessionRow[]>('/sessions');
  const [filter, setFilter] = useState('');
  const [limit, setLimit] = useState(SHOWN);
  return (
    <Load load={load}>
      {(rows) => {
        const wanted = filter.toLowerCase();
        const shown = wanted
          ? rows.filter((r) =>
              `${r.id} ${r.title ?? ''} ${r.model} ${r.status}`.toLowerCase().includes(wanted),
            )
          : rows;
        return (
          <>
            <h1>Sessions</h1>
            <div class="toolbar">
              <input
                type="search"
                aria-label="filter sessions"
                placeholder="filter sessions"
                value={filter}
                onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
              />
              <span class="muted">
                {shown.length} of {rows.length}
              </span>
            </div>
            <table class="grid" data-testid="sessions-table">
              <thead>
                <tr>
                  <th>session</th>
                  <th>started</th>
                  <th>status</th>
                  <th>model</th>
                  <th>steps</th>
                  <th>tokens in/out</th>
                  <th>cost</th>
                  <th>title</th>
                </tr>
              </thead>
              <tbody>
                {shown.slice(0, limit).map((r) => (
                  <tr key={r.id}>
                    <td>
                      <a href={href('sessions', r.id)}>{r.id}</a>
                      {r.parentId && <span class="label">sub-agent</span>}
                    </td>
                    <td>{r.startedAt.slice(0, 19).replace('T', ' ')}</td>
                    <td>
                      <span class={`state state-${r.status}`}>{r.status}</span>
                    </td>
                    <td>{r.model}</td>
                    <td class="num">{r.steps}</td>
                    <td class="num">
                      {r.inputTokens}/{r.outputTokens}
                    </td>
                    <td class="num">${r.costUsd.toFixed(4)}</td>
                    <td>{r.title ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {shown.length > limit && (
              <button type="button" onClick={() => setLimit(limit + SHOWN * 5)}>
                show more
              </button>
            )}
          </>
        );
      }}
    </Load>
  );
}

/** Tool calls joined with their approval and result, per step. */
interface Step {
  step: number;
  events: TimelineEvent[];
  input: number;
  /** Of `input`, the tokens the provider read from its prompt cache. */
  cached: number;
  output: number;
  cost: number;
}

function steps(events: TimelineEvent[]): Step[] {
  const empty = (step: number): Step => ({ step, events: [], input: 0, cached: 0, output: 0, cost: 0 });
  const out: Step[] = [empty(0)];
  for (const event of events) {
    if (event.type === 'step-start') out.push(empty(event.step));
    const current = out[out.length - 1]!;
    current.events.push(event);
    if (event.type === 'usage') {
      current.input += event.stepUsage.inputTokens;
      current.cached += Math.min(event.stepUsage.cachedInputTokens, event.stepUsage.inputTokens);
      current.output += event.stepUsage.outputTokens;
      current.cost += event.stepUsage.costUsd;
    }
  }
  return out.filter((s) => s.events.length > 0);
}

export function SessionPage(props: { id: string }) {
  const load = useApi<SessionDetail>(`/sessions/${q(props.id)}`);
  const [live, setLive] = useState<TimelineEvent[]>([]);
  const [streaming, setStreaming] = useState(false);
  const detail = load.data;
  useEffect(() => {
    setLive([]);
    if (detail?.liveness !== 'live' || detail.events.some((e) => e.type === 'session-end')) return;
    // A run in progress: the transcript as it is written, from where the page's copy ends.
    const controller = new AbortController();
    let ended = false;
    setStreaming(true);
    stream(
      `/sessions/${q(props.id)}/live?offset=${detail.offset}`,
      (event) => {
        if ((event as TimelineEvent).type === 'session-end') ended = true;
        setLive((events) => [...events, event as TimelineEvent]);
      },
      controller.signal,
    )
      .then(() => {
        // The stream stopped with no end: the session's process is gone. The page asks again what it is now.
        if (!ended && !controller.signal.aborted) load.reload();
      })
      .catch(() => {})
      .finally(() => setStreaming(false));
    return () => controller.abort();
  }, [detail, props.id]);
  const events = useMemo(() => [...(detail?.events ?? []), ...live], [detail, live]);
  const byStep = useMemo(() => steps(events), [events]);
  const calls = useMemo(() => callsOf(events), [events]);
  const childIds = useMemo(() => new Set(detail?.children.map((c) => c.id)), [detail]);
  const numbers = useMemo(() => requestNumbers(events), [events]);
  return (
    <Load load={load}>
      {(d) => {
        const end = events.find((e) => e.type === 'session-end');
        const chartSteps = byStep.filter((s) => s.step > 0);
        return (
          <>
            <p>
              <a href={href('sessions')}>← sessions</a>
            </p>
            <h1>{d.session.title ?? d.session.id}</h1>
            <p>
              <code>{d.session.id}</code> · {d.session.model} ·{' '}
              <span class={`state state-${end ? end.reason : d.session.status}`}>
                {end ? end.reason : d.session.status}
              </span>
              {streaming && (
                <span class="live" data-testid="live">
                  {' '}
                  ● live
                </span>
              )}
              {d.liveness === 'abandoned' && !end && (
                <span class="muted" data-testid="abandoned">
                  {' '}
                  (the process that ran it is gone and wrote no end)
                </span>
              )}{' '}
              · {d.session.steps} steps · {d.session.inputTokens}/{d.session.outputTokens} tokens · $
              {d.session.costUsd.toFixed(4)}
            </p>
            {d.session.parentId && (
              <p>
                sub-agent of <a href={href('sessions', d.session.parentId)}>{d.session.parentId}</a>
              </p>
            )}
            {d.children.length > 0 && (
              <p>
                sub-agents:{' '}
                {d.children.map((c) => (
                  <a key={c.id} href={href('sessions', c.id)}>
                    {c.id}{' '}
                  </a>
                ))}
              </p>
            )}
            {d.problems.map((p) => (
              <p key={p} class="error small">
                {p}
              </p>
            ))}
            {chartSteps.length > 0 && (
              <>
                <h2>Tokens and cost per step</h2>
                <BarChart
                  label="tokens per step"
                  stacked
                  height={200}
                  labels={chartSteps.map((s) => `step ${s.step} ($${s.cost.toFixed(4)})`)}
                  datasets={[
                    {
                      label: 'input tokens read from the cache',
                      data: chartSteps.map((s) => s.cached),
                      backgroundColor: '#7fb8a4',
                    },
                    {
                      label: 'input tokens',
                      data: chartSteps.map((s) => s.input - s.cached),
                      backgroundColor: '#4f6bed',
                    },
                    {
                      label: 'output tokens',
                      data: chartSteps.map((s) => s.output),
                      backgroundColor: '#e8a33d',
                    },
                  ]}
                />
              </>
            )}
            <h2>Timeline</h2>
            <ol class="timeline" data-testid="timeline">
              {byStep.map((s) => (
                <li key={s.step} class="step">
                  <h3>{s.step === 0 ? 'start' : `step ${s.step}`}</h3>
                  {s.events.map((e) => (
                    <TimelineItem
                      key={e.seq}
                      event={e}
                      calls={calls}
                      indexed={childIds}
                      session={props.id}
                      numbers={numbers}
                    />
                  ))}
                </li>
              ))}
            </ol>
          </>
        );
      }}
    </Load>
  );
}

/**
 * Each model call's step number across the session (by its transcript line): the n-th `request` in timeline order
 * is step n, as the API (and `tack sessions show`) number them, whatever run it belongs to.
 */
function requestNumbers(events: TimelineEvent[]): Map<number, number> {
  const numbers = new Map<number, number>();
  for (const e of events) if (e.type === 'request') numbers.set(e.seq, numbers.size + 1);
  return numbers;
}

/** What became of each tool call (its approval, the wait for a person, its result) and a sub-agent's work. */
interface CallInfo {
  asked?: ApprovalAsked;
  approval?: Approval;
  result?: ToolResult;
  subagent?: {
    sessionId: string;
    description: string;
    events: SubagentEvent[];
    end?: Extract<TimelineEvent, { type: 'subagent-end' }>;
  };
}

function callsOf(events: TimelineEvent[]): Map<string, CallInfo> {
  const map = new Map<string, CallInfo>();
  const info = (callId: string) => {
    const entry = map.get(callId) ?? {};
    map.set(callId, entry);
    return entry;
  };
  for (const e of events) {
    if (e.type === 'approval-request') info(e.callId).asked = e;
    else if (e.type === 'approval') info(e.callId).approval = e;
    else if (e.type === 'tool-result') info(e.callId).result = e;
    else if (e.type === 'subagent-start')
      info(e.callId).subagent = { sessionId: e.sessionId, description: e.description, events: [] };
    else if (e.type === 'subagent') {
      const entry = info(e.callId);
      entry.subagent ??= { sessionId: e.sessionId, description: '', events: [] };
      entry.subagent.events.push(e.event);
    } else if (e.type === 'subagent-end') {
      const entry = info(e.callId);
      entry.subagent ??= { sessionId: e.sessionId, description: '', events: [] };
      entry.subagent.end = e;
    }
  }
  return map;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A tool call with its approval, the wait for a person, its time and (in the details) arguments and result. */
function CallLine(props: {
  call: Extract<SubagentEvent, { type: 'tool-call' }>;
  info: CallInfo | undefined;
}) {
  const { call, info } = props;
  const wait = info?.approval?.waitMs ?? info?.result?.waitMs;
  return (
    <>
      <code>{call.name}</code>
      {info?.result && <span class="muted"> {info.result.durationMs} ms</span>}
      {info?.approval && (
        <span class={`label approval-${info.approval.decision}`} title={info.approval.reason}>
          {info.approval.decision} ({info.approval.by})
        </span>
      )}
      {info?.asked && (
        <span class="muted small" data-testid="asked" title={info.asked.why}>
          {' '}
          asked{wait !== undefined ? `, answered in ${seconds(wait)}` : ', waiting for an answer'}
        </span>
      )}
      <details>
        <summary>arguments and result</summary>
        <Json value={call.arguments} />
        {info?.result && <pre class={info.result.isError ? 'error' : ''}>{info.result.text}</pre>}
      </details>
    </>
  );
}

/** A sub-agent's steps and calls, nested under the `task` call that started it. */
function SubagentWork(props: { work: NonNullable<CallInfo['subagent']>; indexed: Set<string> }) {
  const { work } = props;
  const inner = callsOf(work.events.map((event, seq) => ({ ...event, seq, at: '' }) as TimelineEvent));
  return (
    <div class="subagent-work" data-testid="subagent">
      <p class="small">
        sub-agent{' '}
        {/* Sub-agents keep no transcript of their own unless one was indexed: link only to what exists. */}
        {props.indexed.has(work.sessionId) ? (
          <a href={href('sessions', work.sessionId)}>{work.sessionId}</a>
        ) : (
          <code>{work.sessionId}</code>
        )}
        {work.description && <>: {work.description}</>}
        {work.end ? (
          <span class="muted">
            {' '}
            · {work.end.reason} after {work.end.steps} steps · {work.end.usage.inputTokens}/
            {work.end.usage.outputTokens} tokens · ${work.end.usage.costUsd.toFixed(4)}
          </span>
        ) : (
          <span class="live"> ● running</span>
        )}
      </p>
      <ol>
        {work.events.map((e, i) => {
          if (e.type === 'step-start')
            return (
              <li key={i} class="muted small">
                step {e.step}
              </li>
            );
          if (e.type === 'tool-call')
            return (
              <li key={i} class="item tool-call">
                <b>tool </b>
                <CallLine call={e} info={inner.get(e.callId)} />
              </li>
            );
          if (e.type === 'notice')
            return (
              <li key={i} class="item notice">
                {e.text}
              </li>
            );
          if (e.type === 'model-fallback')
            return (
              <li key={i} class="item notice">
                <FallbackLine event={e} />
              </li>
            );
          if (e.type === 'error')
            return (
              <li key={i} class="item error">
                {e.message}
              </li>
            );
          return null;
        })}
      </ol>
    </div>
  );
}

function FallbackLine(props: { event: ModelFallback }) {
  const e = props.event;
  return (
    <>
      <b>fallback</b> step {e.step}: {e.from} failed ({e.reason}); now on {e.to}
    </>
  );
}

function TimelineItem(props: {
  event: TimelineEvent;
  calls: Map<string, CallInfo>;
  indexed: Set<string>;
  session: string;
  /** Step numbers across the session of the `request` events, by seq. */
  numbers: Map<number, number>;
}) {
  const e = props.event;
  switch (e.type) {
    case 'request':
      return <RequestLine session={props.session} number={props.numbers.get(e.seq) ?? 0} event={e} />;
    case 'message':
      if (e.role === 'tool') return null;
      return (
        <div class={`item message role-${e.role}`}>
          <b>{e.role}</b>
          {e.text && <pre>{e.text}</pre>}
          {e.toolCalls.length > 0 && <span class="muted"> asks for {e.toolCalls.join(', ')}</span>}
        </div>
      );
    case 'tool-call': {
      const info = props.calls.get(e.callId);
      return (
        <div class={`item tool-call${e.name === 'task' ? ' sub-agent' : ''}`} data-testid="tool-call">
          <b>{e.name === 'task' ? 'sub-agent ' : 'tool '}</b>
          <CallLine call={e} info={info} />
          {info?.subagent && <SubagentWork work={info.subagent} indexed={props.indexed} />}
        </div>
      );
    }
    case 'compaction':
      return (
        <div class="item compaction">
          <b>compaction</b> {e.tokensBefore} → {e.tokensAfter} tokens ({e.elided} tool results elided,{' '}
          {e.summarized} messages summarised)
        </div>
      );
    case 'notice':
      return (
        <div class="item notice">
          {e.text}
          {e.definition && (
            <>
              {' '}
              <a href={href('security')}>
                {e.definition.status === 'held' ? 'review it' : 'accepted'} on the security page
              </a>
            </>
          )}
        </div>
      );
    case 'model-fallback':
      return (
        <div class="item notice">
          <FallbackLine event={e} />
        </div>
      );
    case 'error':
      return <div class="item error">{e.message}</div>;
    case 'session-end':
      return (
        <div class="item end">
          <b>end</b>: {e.reason} ({e.detail}) · {e.total.inputTokens}/{e.total.outputTokens} tokens · $
          {e.total.costUsd.toFixed(4)}
        </div>
      );
    case 'session-start':
      return (
        <div class="item muted">
          started in {e.cwd} with {e.model}
          {e.fallback && e.fallback.length > 0 && ` (fallback: ${e.fallback.join(', ')})`}
        </div>
      );
    // Shown with the call they belong to (CallLine, SubagentWork), or in the chart (usage).
    default:
      return null;
  }
}
