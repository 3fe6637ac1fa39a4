import { useEffect, useMemo, useState } from 'preact/hooks';
import { q } from '../api';
import { callThroughGate } from '../calls';
import { BarChart, Json, Labels, Load, ResultView, SchemaForm } from '../components';
import { href, useApi } from '../hooks';
import type { CallToolResult, ServersView, ToolRow } from '../types';
import { AppFrame } from './app-frame';

const PAGE = 100;

export function ServersPage() {
  const load = useApi<ServersView>('/servers');
  // Servers start in the background: poll while any is still starting, so the page fills in as they connect.
  const starting = load.data?.servers.some((s) => s.status === 'connecting' || s.status === 'idle') ?? false;
  useEffect(() => {
    if (!starting) return;
    const timer = setTimeout(load.reload, 500);
    return () => clearTimeout(timer);
  }, [load.data]);
  return (
    <>
      <Load load={load}>
        {(view) => (
          <>
            <h1>Servers and tools</h1>
            <div class="cards">
              <div class="card">
                <b>{view.servers.filter((s) => s.status === 'connected').length}</b> of {view.servers.length}{' '}
                servers connected
              </div>
              <div class="card">
                <b>{view.tools}</b> tools
              </div>
              <div class="card" data-testid="inline-cost">
                inline: <b>{view.inlineTokens}</b> tokens every step (
                {((100 * view.inlineTokens) / view.contextWindow).toFixed(1)} % of {view.contextWindow})
              </div>
              {view.deferred && view.deferredTokens !== undefined ? (
                <div class="card" data-testid="deferred-cost">
                  deferred: <b>{view.deferredTokens}</b> tokens a step (search_tools, call_tool,
                  always-loaded): a session defers (toolSearch {view.mode})
                </div>
              ) : (
                <div class="card" data-testid="no-deferral">
                  a session sends every definition (toolSearch {view.mode}
                  {view.mode === 'auto' ? ': it defers past 10 % of the window or 40 tools' : ''})
                </div>
              )}
            </div>
            <ServersTable view={view} />
            <h2>Tool-definition tokens per server</h2>
            <BarChart
              label="tokens per server"
              horizontal
              height={Math.max(120, view.perServer.length * 28 + 40)}
              labels={view.perServer.map((s) => s.server)}
              datasets={[
                { label: 'tokens', data: view.perServer.map((s) => s.tokens), backgroundColor: '#4f6bed' },
              ]}
            />
          </>
        )}
      </Load>
      <ToolsTable servers={load.data?.servers.map((s) => s.name) ?? []} version={load.data?.tools ?? 0} />
    </>
  );
}

function ServersTable(props: { view: ServersView }) {
  return (
    <table class="grid" data-testid="servers-table">
      <thead>
        <tr>
          <th>name</th>
          <th>state</th>
          <th>transport</th>
          <th>era</th>
          <th>server</th>
          <th>tools</th>
          <th>connect</th>
          <th>sandbox</th>
        </tr>
      </thead>
      <tbody>
        {props.view.servers.map((s) => (
          <tr key={s.name}>
            <td>
              <a href={href('servers', 'server', s.name)}>{s.name}</a>
              {s.counts.prompts + s.counts.resources + s.counts.resourceTemplates > 0 && (
                <div class="muted small">
                  {s.counts.prompts} prompts, {s.counts.resources + s.counts.resourceTemplates} resources
                </div>
              )}
            </td>
            <td>
              <span class={`state state-${s.status}`}>{s.status}</span>
              {s.error && <div class="error small">{s.error.message}</div>}
              {s.disabledReason && <div class="muted small">{s.disabledReason}</div>}
            </td>
            <td>{s.transport}</td>
            <td>
              {s.era ?? '-'}
              {s.eraSource === 'cache' ? ' (cached)' : ''} {s.protocolVersion ?? ''}
            </td>
            <td>
              {s.serverInfo ? `${s.serverInfo.name} ${s.serverInfo.version}` : '-'}
              {s.package && (
                <div class={s.package.pinned ? 'muted small' : 'error small'} data-testid="server-package">
                  {s.package.label} ({s.package.runner}){s.package.pinned ? '' : ' unpinned'}
                </div>
              )}
            </td>
            <td>{s.counts.tools}</td>
            <td>{s.connectMs === undefined ? '-' : `${s.connectMs} ms`}</td>
            <td>{s.sandbox}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ToolsTable(props: { servers: string[]; version: number }) {
  const [filter, setFilter] = useState('');
  const [server, setServer] = useState('');
  const [limit, setLimit] = useState(PAGE);
  const load = useApi<{ total: number; rows: ToolRow[] }>(
    `/tools?q=${q(filter)}&server=${q(server)}&limit=${limit}&sort=tokens`,
    props.version,
  );
  const top = useMemo(() => load.data?.rows.slice(0, 25) ?? [], [load.data]);
  return (
    <>
      <h2>Tools</h2>
      <div class="toolbar">
        <input
          type="search"
          placeholder="filter tools"
          aria-label="filter tools"
          value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
        <select
          aria-label="server"
          value={server}
          onChange={(e) => setServer((e.target as HTMLSelectElement).value)}
        >
          <option value="">all servers</option>
          {props.servers.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <Load load={load}>
        {(data) => (
          <>
            {top.length > 1 && (
              <BarChart
                label="most expensive tools"
                horizontal
                height={Math.max(120, top.length * 20 + 40)}
                labels={top.map((r) => r.name)}
                datasets={[{ label: 'tokens', data: top.map((r) => r.tokens), backgroundColor: '#8a63d2' }]}
              />
            )}
            <table class="grid" data-testid="tools-table">
              <thead>
                <tr>
                  <th>tool</th>
                  <th>tokens</th>
                  <th>capabilities</th>
                  <th>pin</th>
                  <th>description</th>
                </tr>
              </thead>
              <tbody>
                {data.rows.map((r) => (
                  <tr key={r.name}>
                    <td>
                      <a href={href('servers', 'tool', r.name)}>{r.name}</a>
                      {r.app && <span class="label app">app</span>}
                    </td>
                    <td class="num">{r.tokens}</td>
                    <td>
                      <Labels labels={r.capabilities} ruledOut={r.ruledOut} />
                    </td>
                    <td>
                      <span class={`pin pin-${r.pin.replace(/\s/g, '-')}`}>{r.pin}</span>
                    </td>
                    <td class="muted">{r.summary}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p class="muted">
              {data.rows.length} of {data.total} tools shown
              {data.rows.length < data.total && (
                <button type="button" onClick={() => setLimit(limit + PAGE * 4)}>
                  show more
                </button>
              )}
            </p>
          </>
        )}
      </Load>
    </>
  );
}

export function ToolPage(props: { name: string }) {
  const load = useApi<{ row: ToolRow; definition: { inputSchema: unknown; [key: string]: unknown } }>(
    `/tools/${q(props.name)}`,
  );
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{
    args: Record<string, unknown>;
    result?: CallToolResult;
    denied?: string;
    error?: string;
  }>();
  // Each call of an app tool gets its own view, opened as the call starts (the view sees the input at once).
  const [calls, setCalls] = useState(0);
  return (
    <Load load={load}>
      {({ row, definition }) => (
        <>
          <p>
            <a href={href('servers')}>← servers and tools</a>
          </p>
          <h1>{row.name}</h1>
          <p>
            server <b>{row.server}</b>, {row.tokens} tokens, pin{' '}
            <span class={`pin pin-${row.pin}`}>{row.pin}</span>{' '}
            <Labels labels={row.capabilities} ruledOut={row.ruledOut} />
          </p>
          {row.held && <p class="error">Held back: {row.held}</p>}
          <h2>Call</h2>
          <SchemaForm
            schema={definition.inputSchema}
            busy={busy}
            onSubmit={async (args) => {
              setBusy(true);
              setOutcome({ args });
              setCalls((n) => n + 1);
              try {
                const done = await callThroughGate(`/tools/${q(row.name)}/call`, { arguments: args });
                setOutcome(
                  done.status === 'done' ? { args, result: done.result } : { args, denied: done.reason },
                );
              } catch (error) {
                setOutcome({ args, error: (error as Error).message });
              } finally {
                setBusy(false);
              }
            }}
          />
          {outcome?.denied && (
            <p class="error" data-testid="call-denied">
              Refused: {outcome.denied}
            </p>
          )}
          {outcome?.error && <p class="error">{outcome.error}</p>}
          {outcome?.result && <ResultView result={outcome.result} />}
          {row.app && outcome && (
            <AppFrame
              key={calls}
              tool={row.name}
              args={outcome.args}
              result={outcome.result}
              cancelled={outcome.denied ?? outcome.error}
            />
          )}
          <h2>Definition</h2>
          <Json value={definition} />
        </>
      )}
    </Load>
  );
}
