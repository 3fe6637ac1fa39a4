import { useState } from 'preact/hooks';
import { post, q } from '../api';
import { Diff, Json, Load } from '../components';
import { useApi } from '../hooks';

interface Held {
  server: string;
  identity: string;
  kind: string;
  name: string;
  status: string;
  reason: string;
  since: string;
  sha256: string;
  diff: string;
}

interface Finding {
  code: string;
  severity: string;
  message: string;
  match: string;
  decoded?: string;
  location: unknown;
}

interface SecurityView {
  held: Held[];
  findings: Array<{ tool: string; server: string; findings: Finding[] }>;
  trifecta: { untrustedInput: string[]; privateData: string[]; egress: string[] };
  trust: {
    projectRoot: string;
    verdict?: {
      trusted: boolean;
      basis?: string;
      changed: string[];
      neverTrusted: boolean;
      trustedAt?: string;
      problem?: string;
    };
    heldBack?: Record<string, unknown>;
  };
  store: boolean;
}

interface AuditEntry {
  at: string;
  client: string;
  server: string;
  tool: string;
  argsSha256: string;
  durationMs: number;
  outcome: string;
  detail?: string;
}

export function SecurityPage() {
  const [version, setVersion] = useState(0);
  const load = useApi<SecurityView>('/security', version);
  const [message, setMessage] = useState<string>();
  return (
    <Load load={load}>
      {(view) => (
        <>
          <h1>Security</h1>
          <h2>Held definitions</h2>
          {message && (
            <p class="notice" role="status">
              {message}
            </p>
          )}
          {view.held.length === 0 ? (
            <p class="muted" data-testid="no-held">
              Nothing is held back.
            </p>
          ) : (
            view.held.map((h) => (
              <section class="held" key={`${h.identity}/${h.kind}/${h.name}`} data-testid="held">
                <h3>
                  {h.kind} <code>{h.name || '(instructions)'}</code> of {h.server}{' '}
                  <span class={`pin pin-${h.status}`}>{h.status}</span>
                </h3>
                <p>{h.reason}</p>
                <Diff text={h.diff} />
                <button
                  type="button"
                  class="primary"
                  onClick={async () => {
                    try {
                      await post('/pins/accept', {
                        identity: h.identity,
                        kind: h.kind,
                        name: h.name,
                        sha256: h.sha256,
                      });
                      setMessage(
                        `accepted ${h.kind} ${h.name || '(instructions)'} of ${h.server} (sha256 ${h.sha256.slice(0, 12)})`,
                      );
                    } catch (error) {
                      setMessage((error as Error).message);
                    }
                    setVersion((v) => v + 1);
                  }}
                >
                  Accept sha256 {h.sha256.slice(0, 12)}
                </button>
              </section>
            ))
          )}
          <h2>Project trust</h2>
          <TrustView trust={view.trust} />
          <h2>Lethal trifecta</h2>
          <p>
            untrusted input: {view.trifecta.untrustedInput.length} tools · private data:{' '}
            {view.trifecta.privateData.length} · egress: {view.trifecta.egress.length}
            {view.trifecta.untrustedInput.length > 0 &&
            view.trifecta.privateData.length > 0 &&
            view.trifecta.egress.length > 0
              ? ' — all three legs present: once untrusted input is read, every egress call asks.'
              : ' — not complete.'}
          </p>
          <h2>Scan findings</h2>
          {view.findings.length === 0 ? (
            <p class="muted">No findings in the tool definitions.</p>
          ) : (
            <table class="grid" data-testid="findings">
              <thead>
                <tr>
                  <th>tool</th>
                  <th>code</th>
                  <th>severity</th>
                  <th>finding</th>
                  <th>evidence</th>
                </tr>
              </thead>
              <tbody>
                {view.findings.slice(0, 500).flatMap((t) =>
                  t.findings.map((f, i) => (
                    <tr key={`${t.tool}-${i}`}>
                      <td>{t.tool}</td>
                      <td>
                        <code>{f.code}</code>
                      </td>
                      <td class={`sev-${f.severity}`}>{f.severity}</td>
                      <td>{f.message}</td>
                      <td>
                        <code class="evidence">{f.match.slice(0, 200)}</code>
                        {f.decoded && <div class="small">decoded: {f.decoded.slice(0, 200)}</div>}
                      </td>
                    </tr>
                  )),
                )}
              </tbody>
            </table>
          )}
          <AuditView />
        </>
      )}
    </Load>
  );
}

function TrustView(props: { trust: SecurityView['trust'] }) {
  const v = props.trust.verdict;
  const root = props.trust.projectRoot;
  if (!v || v.basis === 'nothing')
    return (
      <p class="muted" data-testid="trust">
        Nothing to trust: this project ({root}) has no servers, hooks or skills of its own (no tack.json,
        .mcp.json or skills folder).
      </p>
    );
  return (
    <div data-testid="trust">
      <p>
        <b>{v.trusted ? 'Trusted' : 'Not trusted'}</b>: {trustSentence(v, root)}
        {v.problem ? ` (${v.problem})` : ''}
      </p>
      {v.changed.length > 0 && <p>Changed since it was trusted: {v.changed.join(', ')}.</p>}
      {props.trust.heldBack && !v.trusted && (
        <>
          <p>Held back until then:</p>
          <Json value={props.trust.heldBack} />
        </>
      )}
    </div>
  );
}

/** What the verdict means, in a sentence that says what to do when something is held back. */
function trustSentence(v: NonNullable<SecurityView['trust']['verdict']>, root: string): string {
  if (v.trusted)
    switch (v.basis) {
      case 'option':
        return `this project (${root}) is trusted for this run only (--trust-project).`;
      case 'environment':
        return `this project (${root}) is trusted because TACK_TRUST_PROJECT=1 is set.`;
      default:
        return `its servers, hooks and skills run${v.trustedAt ? `, as trusted on ${v.trustedAt.slice(0, 10)}` : ''} (${root}).`;
    }
  if (v.neverTrusted)
    return `no project servers are trusted yet: its servers, hooks and skills are held back until you run \`tack trust\` in ${root}.`;
  return `its files changed since they were trusted, so its servers, hooks and skills are held back: review the changes and run \`tack trust\` in ${root} again.`;
}

function AuditView() {
  const [filter, setFilter] = useState({ server: '', tool: '', outcome: '', client: '' });
  const load = useApi<AuditEntry[]>(
    `/audit?server=${q(filter.server)}&tool=${q(filter.tool)}&outcome=${q(filter.outcome)}&client=${q(filter.client)}`,
  );
  const field = (key: keyof typeof filter, label: string) => (
    <input
      type="search"
      aria-label={label}
      placeholder={label}
      value={filter[key]}
      onInput={(e) => setFilter({ ...filter, [key]: (e.target as HTMLInputElement).value })}
    />
  );
  return (
    <>
      <h2>Audit log</h2>
      <div class="toolbar">
        {field('server', 'server')}
        {field('tool', 'tool')}
        {field('client', 'client')}
        <select
          aria-label="outcome"
          value={filter.outcome}
          onChange={(e) => setFilter({ ...filter, outcome: (e.target as HTMLSelectElement).value })}
        >
          <option value="">any outcome</option>
          {['ok', 'tool-error', 'failed', 'cancelled', 'denied'].map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </div>
      <Load load={load}>
        {(entries) =>
          entries.length === 0 ? (
            <p class="muted" data-testid="audit-empty">
              {Object.values(filter).some(Boolean)
                ? 'No audited call matches these filters.'
                : 'No calls audited yet: calls through `tack serve` and from this console are recorded here, with their outcome and duration.'}
            </p>
          ) : (
            <table class="grid" data-testid="audit">
              <thead>
                <tr>
                  <th>time</th>
                  <th>client</th>
                  <th>server</th>
                  <th>tool</th>
                  <th>outcome</th>
                  <th>duration</th>
                  <th>arguments sha256</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e, i) => (
                  <tr key={i}>
                    <td>{e.at.slice(0, 19).replace('T', ' ')}</td>
                    <td>{e.client}</td>
                    <td>{e.server}</td>
                    <td>{e.tool}</td>
                    <td title={e.detail}>{e.outcome}</td>
                    <td class="num">{e.durationMs} ms</td>
                    <td>
                      <code>{e.argsSha256.slice(0, 12)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Load>
    </>
  );
}
