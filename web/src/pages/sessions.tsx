import { useEffect, useMemo, useState } from 'preact/hooks';
import { q, stream } from '../api';
import { BarChart, Json, Load } from '../components';
import { href, useApi } from '../hooks';
import type { SessionDetail, SessionRow, TimelineEvent } from '../types';

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
  output: number;
  cost: number;
}

function steps(events: TimelineEvent[]): Step[] {
  const out: Step[] = [{ step: 0, events: [], input: 0, output: 0, cost: 0 }];
  for (const event of events) {
    if (event.type === 'step-start') out.push({ step: event.step, events: [], input: 0, output: 0, cost: 0 });
    const current = out[out.length - 1]!;
    current.events.push(event);
    if (event.type === 'usage') {
      current.input += event.stepUsage.inputTokens;
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
    if (!detail || detail.events.some((e) => e.type === 'session-end')) return;
    // A run in progress: the transcript as it is written, from where the page's copy ends.
    const controller = new AbortController();
    setStreaming(true);
    stream(
      `/sessions/${q(props.id)}/live?offset=${detail.offset}`,
      (event) => setLive((events) => [...events, event as TimelineEvent]),
      controller.signal,
    )
      .catch(() => {})
      .finally(() => setStreaming(false));
    return () => controller.abort();
  }, [detail, props.id]);
  const events = useMemo(() => [...(detail?.events ?? []), ...live], [detail, live]);
  const byStep = useMemo(() => steps(events), [events]);
  const results = useMemo(() => {
    const map = new Map<string, TimelineEvent>();
    for (const e of events)
      if (e.type === 'tool-result' || e.type === 'approval') map.set(`${e.type}:${e.callId}`, e);
    return map;
  }, [events]);
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
                      label: 'input tokens',
                      data: chartSteps.map((s) => s.input),
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
                    <TimelineItem key={e.seq} event={e} results={results} />
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

function TimelineItem(props: { event: TimelineEvent; results: Map<string, TimelineEvent> }) {
  const e = props.event;
  switch (e.type) {
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
      const approval = props.results.get(`approval:${e.callId}`);
      const result = props.results.get(`tool-result:${e.callId}`);
      return (
        <div class={`item tool-call${e.name === 'task' ? ' sub-agent' : ''}`} data-testid="tool-call">
          <b>{e.name === 'task' ? 'sub-agent ' : 'tool '}</b>
          <code>{e.name}</code>
          {result?.type === 'tool-result' && <span class="muted"> {result.durationMs} ms</span>}
          {approval?.type === 'approval' && (
            <span class={`label approval-${approval.decision}`} title={approval.reason}>
              {approval.decision} ({approval.by})
            </span>
          )}
          <details>
            <summary>arguments and result</summary>
            <Json value={e.arguments} />
            {result?.type === 'tool-result' && <pre class={result.isError ? 'error' : ''}>{result.text}</pre>}
          </details>
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
      return <div class="item notice">{e.text}</div>;
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
        </div>
      );
    default:
      return null;
  }
}
