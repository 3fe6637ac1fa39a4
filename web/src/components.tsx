import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartDataset,
  Legend,
  LinearScale,
  Tooltip,
} from 'chart.js';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Loaded } from './hooks';
import type { ApprovalRequest, CallToolResult, CapabilityLabel } from './types';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

/** Shows a load's error or a placeholder until its data is there. */
export function Load<T>(props: { load: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (props.load.error)
    return (
      <p class="error" role="alert">
        {props.load.error.message}
      </p>
    );
  if (props.load.data === undefined) return <p class="muted">Loading…</p>;
  return <>{props.children(props.load.data)}</>;
}

/**
 * A bar chart on a canvas: labels (tool and server names, someone else's text) are drawn as pixels, never
 * parsed as markup. Animation off: the page must be readable at once.
 */
export function BarChart(props: {
  labels: string[];
  datasets: Array<ChartDataset<'bar', number[]>>;
  horizontal?: boolean;
  stacked?: boolean;
  height?: number;
  label?: string;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: { labels: props.labels, datasets: props.datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        indexAxis: props.horizontal ? 'y' : 'x',
        plugins: { legend: { display: props.datasets.length > 1 } },
        scales: { x: { stacked: props.stacked === true }, y: { stacked: props.stacked === true } },
      },
    });
    return () => chart.destroy();
  }, [props.labels, props.datasets, props.horizontal, props.stacked]);
  return (
    <div class="chart" style={{ height: `${props.height ?? 240}px` }}>
      <canvas ref={canvas} role="img" aria-label={props.label ?? 'chart'} />
    </div>
  );
}

export function Json(props: { value: unknown }) {
  return <pre class="json">{JSON.stringify(props.value, null, 2)}</pre>;
}

/** A unified diff, each line coloured by its sign. */
export function Diff(props: { text: string }) {
  return (
    <pre class="diff">
      {props.text.split('\n').map((line, i) => (
        <div
          key={i}
          class={
            line.startsWith('+') && !line.startsWith('+++')
              ? 'add'
              : line.startsWith('-') && !line.startsWith('---')
                ? 'del'
                : line.startsWith('@@')
                  ? 'hunk'
                  : ''
          }
        >
          {line || ' '}
        </div>
      ))}
    </pre>
  );
}

export function Labels(props: { labels: CapabilityLabel[]; ruledOut?: CapabilityLabel[] }) {
  return (
    <span class="labels">
      {props.labels.map((l) => (
        <span key={l.capability} class={`label cap-${l.capability}`} title={`${l.source}: ${l.why}`}>
          {l.capability}
        </span>
      ))}
      {(props.ruledOut ?? []).map((l) => (
        <span key={`no-${l.capability}`} class="label ruled-out" title={`${l.source}: ${l.why}`}>
          no {l.capability}
        </span>
      ))}
    </span>
  );
}

/** Text blocks of a tool result, a summary of the other blocks, and structuredContent. */
export function ResultView(props: { result: CallToolResult }) {
  const { result } = props;
  return (
    <div class={result.isError ? 'result is-error' : 'result'} data-testid="tool-result">
      {result.isError && <strong>The tool reported an error.</strong>}
      {result.content.map((block, i) =>
        block.type === 'text' ? (
          <pre key={i}>{block.text}</pre>
        ) : (
          <p key={i} class="muted">
            [{block.type}
            {block.mimeType ? ` ${block.mimeType}` : ''}]
          </p>
        ),
      )}
      {result.structuredContent !== undefined && <Json value={result.structuredContent} />}
    </div>
  );
}

/**
 * The approval question, as `tack chat` asks it at the terminal: which tool of which server, why it asks, the
 * description's digest, the labels and the full arguments (secrets masked by the server).
 */
export function ApprovalDialog(props: {
  request: ApprovalRequest;
  onAnswer: (decision: 'allow' | 'deny', remember?: 'session') => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const { request } = props;
  return (
    <dialog
      ref={dialog}
      class="approval"
      aria-label="Approve tool call"
      onCancel={() => props.onAnswer('deny')}
    >
      <h2>Allow this call?</h2>
      <dl>
        <dt>Tool</dt>
        <dd>
          <code>{request.tool}</code>
          {request.server ? ` on server ${request.server}` : ''}
        </dd>
        <dt>Why it asks</dt>
        <dd>{request.why}</dd>
        <dt>Description</dt>
        <dd>
          {request.description.slice(0, 400)}
          <br />
          <small class="muted">sha256 {request.descriptionSha256.slice(0, 16)}</small>
        </dd>
        <dt>Capabilities</dt>
        <dd>
          <Labels labels={request.capabilities} ruledOut={request.ruledOut ?? []} />
        </dd>
        <dt>Arguments</dt>
        <dd>
          <Json value={request.arguments} />
        </dd>
      </dl>
      <div class="buttons">
        <button type="button" class="primary" onClick={() => props.onAnswer('allow')}>
          Allow once
        </button>
        <button type="button" onClick={() => props.onAnswer('allow', 'session')}>
          Allow for this console session
        </button>
        <button type="button" class="danger" onClick={() => props.onAnswer('deny')}>
          Deny
        </button>
      </div>
    </dialog>
  );
}

interface Schema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  default?: unknown;
}

/**
 * A form generated from a tool's input schema: strings, numbers, booleans and enums as inputs, anything else as
 * JSON; "raw JSON" edits the whole argument object. Values are parsed on submit, so a bad one is named.
 */
export function SchemaForm(props: {
  schema: unknown;
  onSubmit: (args: Record<string, unknown>) => void;
  busy?: boolean;
}) {
  const schema = (props.schema ?? {}) as Schema;
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const [values, setValues] = useState<Record<string, string>>({});
  const [raw, setRaw] = useState<string | undefined>(properties.length === 0 ? '{}' : undefined);
  const [problem, setProblem] = useState<string>();
  const typeOf = (s: Schema) => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type) ?? 'json';
  const submit = (event: Event) => {
    event.preventDefault();
    try {
      if (raw !== undefined) {
        const parsed = JSON.parse(raw) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new Error('arguments must be a JSON object');
        props.onSubmit(parsed as Record<string, unknown>);
        return;
      }
      const args: Record<string, unknown> = {};
      for (const [name, sub] of properties) {
        const text = values[name];
        const type = typeOf(sub);
        if (type === 'boolean') {
          if (text !== undefined) args[name] = text === 'true';
          continue;
        }
        if (text === undefined || text === '') {
          if (required.has(name)) throw new Error(`${name} is required`);
          continue;
        }
        if (sub.enum) args[name] = sub.enum.find((v) => String(v) === text) ?? text;
        else if (type === 'string') args[name] = text;
        else if (type === 'number' || type === 'integer') {
          const n = Number(text);
          if (Number.isNaN(n)) throw new Error(`${name} must be a number`);
          args[name] = n;
        } else args[name] = JSON.parse(text) as unknown;
      }
      setProblem(undefined);
      props.onSubmit(args);
    } catch (error) {
      setProblem((error as Error).message);
    }
  };
  return (
    <form class="schema-form" onSubmit={submit}>
      {raw === undefined ? (
        properties.map(([name, sub]) => {
          const type = typeOf(sub);
          const id = `arg-${name}`;
          const set = (value: string) => setValues({ ...values, [name]: value });
          return (
            <div class="field" key={name}>
              <label for={id}>
                {name}
                {required.has(name) ? ' *' : ''} <small class="muted">{type}</small>
              </label>
              {sub.enum ? (
                <select id={id} name={name} onChange={(e) => set((e.target as HTMLSelectElement).value)}>
                  <option value="">—</option>
                  {sub.enum.map((v) => (
                    <option key={String(v)} value={String(v)}>
                      {String(v)}
                    </option>
                  ))}
                </select>
              ) : type === 'boolean' ? (
                <input
                  id={id}
                  name={name}
                  type="checkbox"
                  onChange={(e) => set(String((e.target as HTMLInputElement).checked))}
                />
              ) : type === 'string' || type === 'number' || type === 'integer' ? (
                type === 'string' ? (
                  <input
                    id={id}
                    name={name}
                    type="text"
                    onInput={(e) => set((e.target as HTMLInputElement).value)}
                  />
                ) : (
                  <input
                    id={id}
                    name={name}
                    type="number"
                    step="any"
                    onInput={(e) => set((e.target as HTMLInputElement).value)}
                  />
                )
              ) : (
                <textarea
                  id={id}
                  name={name}
                  rows={3}
                  placeholder="JSON"
                  onInput={(e) => set((e.target as HTMLTextAreaElement).value)}
                />
              )}
              {sub.description && <small class="muted">{sub.description.slice(0, 300)}</small>}
            </div>
          );
        })
      ) : (
        <textarea
          aria-label="arguments as JSON"
          rows={6}
          value={raw}
          onInput={(e) => setRaw((e.target as HTMLTextAreaElement).value)}
        />
      )}
      {problem && <p class="error">{problem}</p>}
      <div class="buttons">
        <button type="submit" class="primary" disabled={props.busy}>
          Call
        </button>
        {properties.length > 0 && (
          <button type="button" onClick={() => setRaw(raw === undefined ? '{}' : undefined)}>
            {raw === undefined ? 'Raw JSON' : 'Form'}
          </button>
        )}
      </div>
    </form>
  );
}

/**
 * Markdown as Preact elements, never as HTML: headings, fenced code, lists, paragraphs and inline code. Links
 * stay text (a concept's link is shown, not followed). Enough to read a concept; nothing in it can run.
 */
export function Markdown(props: { text: string }) {
  const out: ComponentChildren[] = [];
  const lines = props.text.split('\n');
  let i = 0;
  let para: string[] = [];
  const flush = () => {
    if (para.length > 0) out.push(<p key={`p${i}`}>{inline(para.join(' '))}</p>);
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.startsWith('```')) {
      flush();
      const code: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.startsWith('```')) code.push(lines[i++]!);
      out.push(<pre key={`c${i}`}>{code.join('\n')}</pre>);
    } else if (/^#{1,6}\s/.test(line)) {
      flush();
      const level = Math.min(6, (line.match(/^#+/)?.[0].length ?? 1) + 2);
      const H = `h${level}` as 'h3';
      out.push(<H key={`h${i}`}>{inline(line.replace(/^#+\s*/, ''))}</H>);
    } else if (/^\s*[-*]\s/.test(line)) {
      flush();
      const items: string[] = [];
      while (i < lines.length && /^\s*[-*]\s/.test(lines[i]!))
        items.push(lines[i++]!.replace(/^\s*[-*]\s/, ''));
      i--;
      out.push(
        <ul key={`u${i}`}>
          {items.map((item, k) => (
            <li key={k}>{inline(item)}</li>
          ))}
        </ul>,
      );
    } else if (line.trim() === '') flush();
    else para.push(line);
    i++;
  }
  flush();
  return <div class="markdown">{out}</div>;
}

function inline(text: string): ComponentChildren[] {
  return text
    .split(/(`[^`]+`)/)
    .map((part, i) =>
      part.startsWith('`') && part.endsWith('`') && part.length > 1 ? (
        <code key={i}>{part.slice(1, -1)}</code>
      ) : (
        part
      ),
    );
}
