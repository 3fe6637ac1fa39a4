import { useState } from 'preact/hooks';
import { q } from '../api';
import { Load } from '../components';
import { href, useApi } from '../hooks';
import { cutAtWord } from '../text';

interface SkillsView {
  index?: { text: string; tokens: number; budgetTokens: number; dropped: string[] };
  skills: Array<{
    name: string;
    description: string;
    scope: string;
    path: string;
    indexTokens: number;
    shortened: boolean;
    dropped: boolean;
    /** The poisoning scan's verdict (absent for a skill a server serves: scanned when activated). */
    scan?: ScanSummary;
  }>;
  /** Found but invalid: not offered to the model, with the validator's reasons. */
  invalid: Array<{ name: string; scope: string; path: string; reasons: string[] }>;
  warnings: string[];
}

interface ScanSummary {
  verdict: 'clean' | 'warn' | 'block';
  score: number;
}

interface SkillView {
  name: string;
  description: string;
  scope: string;
  dir: string;
  valid: boolean;
  body: string;
  bodyTokens: number;
  files: string[];
  issues: Array<{ severity: string; rule: string; file: string; line: number; message: string }>;
  scan?: ScanSummary & {
    findings: Array<{
      code: string;
      severity: string;
      file: string;
      line: number;
      message: string;
      match: string;
    }>;
  };
}

/** The poisoning scan's verdict as a badge: nothing for a clean skill. */
function ScanBadge(props: { scan: ScanSummary | undefined }) {
  const v = props.scan?.verdict;
  if (!v || v === 'clean') return null;
  return (
    <span class={`label sev-${v === 'block' ? 'high' : 'medium'}`} data-testid="skill-scan-badge">
      {v === 'block' ? 'held by the poisoning scan' : 'poisoning scan: warn'}
    </span>
  );
}

export function SkillsPage() {
  const load = useApi<SkillsView>('/skills');
  return (
    <Load load={load}>
      {(view) => (
        <>
          <h1>Skills</h1>
          {view.index ? (
            <p data-testid="skills-index-cost">
              The tier-1 index costs <b>{view.index.tokens}</b> tokens every turn (budget{' '}
              {view.index.budgetTokens})
              {view.index.dropped.length > 0 ? `; ${view.index.dropped.length} skills dropped` : ''}.
            </p>
          ) : (
            <p class="muted">No skills.</p>
          )}
          {view.warnings.map((w) => (
            <p key={w} class="notice small">
              {w}
            </p>
          ))}
          <table class="grid" data-testid="skills-table">
            <thead>
              <tr>
                <th>skill</th>
                <th>scope</th>
                <th>index tokens</th>
                <th>description</th>
              </tr>
            </thead>
            <tbody>
              {view.skills.slice(0, 1000).map((s) => (
                <tr key={s.name}>
                  <td>
                    <a href={href('skills', s.name)}>{s.name}</a>
                    <ScanBadge scan={s.scan} />
                    {s.dropped ? (
                      <span class="label">dropped</span>
                    ) : s.shortened ? (
                      <span class="label">shortened</span>
                    ) : null}
                  </td>
                  <td>{s.scope}</td>
                  <td class="num">{s.indexTokens}</td>
                  <Description text={s.description} />
                </tr>
              ))}
            </tbody>
          </table>
          {view.invalid.length > 0 && (
            <>
              <h2>Invalid: not offered</h2>
              <table class="grid" data-testid="skills-invalid">
                <thead>
                  <tr>
                    <th>skill</th>
                    <th>scope</th>
                    <th>why</th>
                  </tr>
                </thead>
                <tbody>
                  {view.invalid.slice(0, 1000).map((s) => (
                    <tr key={s.path}>
                      <td>
                        <a href={href('skills', s.name)}>{s.name}</a>
                        <span class="label">invalid</span>
                      </td>
                      <td>{s.scope}</td>
                      <td class="muted">{s.reasons.join('; ')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          {view.index && (
            <details>
              <summary>the index as the model gets it</summary>
              <pre>{view.index.text}</pre>
            </details>
          )}
        </>
      )}
    </Load>
  );
}

export function SkillPage(props: { name: string }) {
  const load = useApi<SkillView>(`/skills/${q(props.name)}`);
  const [file, setFile] = useState<string>();
  const fileLoad = useApi<{ path: string; text: string; truncated: boolean; binary: boolean }>(
    file ? `/skills/${q(props.name)}/file?path=${q(file)}` : undefined,
  );
  return (
    <Load load={load}>
      {(s) => (
        <>
          <p>
            <a href={href('skills')}>← skills</a>
          </p>
          <h1>{s.name}</h1>
          <p>
            {s.scope} · {s.dir} · body {s.bodyTokens} tokens
            {s.valid ? null : <span class="label">invalid: not offered</span>}
            <ScanBadge scan={s.scan} />
          </p>
          {s.scan && s.scan.findings.length > 0 && (
            <>
              <h2>Poisoning scan</h2>
              <ul data-testid="skill-scan-findings">
                {s.scan.findings.map((f, k) => (
                  <li key={k} class={`sev-${f.severity}`}>
                    {f.file}:{f.line}: {f.severity} {f.code}: {f.message} <code>{f.match}</code>
                  </li>
                ))}
              </ul>
            </>
          )}
          <h2>Validation</h2>
          {s.issues.filter((i) => i.rule !== 'poisoning').length === 0 ? (
            <p class="muted">No findings.</p>
          ) : (
            <ul data-testid="skill-issues">
              {s.issues
                .filter((i) => i.rule !== 'poisoning')
                .map((i, k) => (
                  <li key={k} class={`sev-${i.severity}`}>
                    {i.file}:{i.line}: {i.severity}: {i.message}
                  </li>
                ))}
            </ul>
          )}
          <h2>Files</h2>
          <ul>
            {s.files.map((f) => (
              <li key={f}>
                <button type="button" class="link" onClick={() => setFile(f)}>
                  {f}
                </button>
              </li>
            ))}
          </ul>
          {file && (
            <Load load={fileLoad}>
              {(f) => <pre data-testid="skill-file">{f.binary ? '(binary file)' : f.text}</pre>}
            </Load>
          )}
          <h2>Body (tier 2)</h2>
          <pre data-testid="skill-body">{s.body}</pre>
        </>
      )}
    </Load>
  );
}

/** A description cut at a word to fit the table, the whole of it in the tooltip. */
function Description(props: { text: string }) {
  const shown = cutAtWord(props.text, 200);
  return (
    <td class="muted" title={shown.cut ? props.text : undefined} data-testid="skill-description">
      {shown.text}
    </td>
  );
}
