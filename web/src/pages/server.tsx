import { useState } from 'preact/hooks';
import { post, q } from '../api';
import { Load } from '../components';
import { href, useApi } from '../hooks';
import type { PromptRun, ResourceRead, ServerListingView } from '../types';

/**
 * One server's prompts, resources and templates. The console has no conversation to put them in, so a prompt is
 * run here (the text `tack chat` would send for `/mcp__server__prompt`) and a resource read here (what
 * `@server:uri` would attach), both through the console's API.
 */
export function ServerPage(props: { name: string }) {
  const load = useApi<ServerListingView>(`/servers/${q(props.name)}`);
  return (
    <Load load={load}>
      {(view) => (
        <>
          <p>
            <a href={href('servers')}>← servers and tools</a>
          </p>
          <h1>{view.server}</h1>
          <p>
            <span class={`state state-${view.status}`}>{view.status}</span> — {view.counts.prompts} prompts,{' '}
            {view.counts.resources} resources, {view.counts.templates} templates
          </p>
          {view.package && (
            <p
              class={view.package.pinned && !view.packageHeld ? 'muted small' : 'error small'}
              data-testid="package"
            >
              package {view.package.label} ({view.package.runner})
              {view.package.pinned
                ? ''
                : `: unpinned, \`${view.package.requested}\` names no fixed version; pin it: ${view.package.fix}`}
              {view.packageHeld ? ` — held: ${view.packageHeld}` : ''}
            </p>
          )}
          {view.diagnostics.map((d) => (
            <p class="muted small" key={d}>
              {d}
            </p>
          ))}
          <h2>Prompts</h2>
          {view.prompts.length === 0 && <p class="muted">no prompts</p>}
          {view.prompts.map((prompt) => (
            <PromptForm key={prompt.name} server={view.server} prompt={prompt} />
          ))}
          <h2>Resources</h2>
          {view.resources.length === 0 && <p class="muted">no resources</p>}
          {view.resources.map((r) => (
            <ResourceReader key={r.uri} server={view.server} uri={r.uri} label={r.title ?? r.name} />
          ))}
          <h2>Resource templates</h2>
          {view.templates.length === 0 && <p class="muted">no templates</p>}
          {view.templates.map((t) => (
            <ResourceReader
              key={t.uriTemplate}
              server={view.server}
              uri={t.uriTemplate}
              label={t.title ?? t.name}
              editable
            />
          ))}
        </>
      )}
    </Load>
  );
}

function PromptForm(props: { server: string; prompt: ServerListingView['prompts'][number] }) {
  const { prompt } = props;
  const [values, setValues] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ run?: PromptRun; error?: string }>();
  const id = (arg: string) => `prompt-${prompt.name}-${arg}`;
  return (
    <section class="card" data-testid={`prompt-${prompt.name}`}>
      <h3>{prompt.title ?? prompt.name}</h3>
      {prompt.description && <p class="muted">{prompt.description}</p>}
      {prompt.command && (
        <p class="small">
          in tack chat: <code>{prompt.command}</code>
        </p>
      )}
      {prompt.held && <p class="error">Held back: {prompt.held}</p>}
      <form
        class="schema-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            const run = await post<PromptRun>(`/servers/${q(props.server)}/prompt`, {
              name: prompt.name,
              arguments: values,
            });
            setOutcome({ run });
          } catch (error) {
            setOutcome({ error: (error as Error).message });
          } finally {
            setBusy(false);
          }
        }}
      >
        {prompt.arguments.map((arg) => (
          <div class="field" key={arg.name}>
            <label for={id(arg.name)}>
              {arg.name}
              {arg.required ? ' *' : ''} {arg.description && <small class="muted">{arg.description}</small>}
            </label>
            <input
              id={id(arg.name)}
              type="text"
              value={values[arg.name] ?? ''}
              onInput={(e) => setValues({ ...values, [arg.name]: (e.target as HTMLInputElement).value })}
            />
          </div>
        ))}
        <button type="submit" disabled={busy || prompt.held !== undefined}>
          run prompt
        </button>
      </form>
      {outcome?.error && (
        <p class="error" data-testid="prompt-error">
          {outcome.error}
        </p>
      )}
      {outcome?.run && (
        <>
          <pre data-testid="prompt-text">{outcome.run.text}</pre>
          {outcome.run.notes.map((note) => (
            <p class="muted small" key={note}>
              {note}
            </p>
          ))}
        </>
      )}
    </section>
  );
}

function ResourceReader(props: { server: string; uri: string; label: string; editable?: boolean }) {
  const [uri, setUri] = useState(props.uri);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ read?: ResourceRead; error?: string }>();
  return (
    <section class="card" data-testid={`resource-${props.uri}`}>
      <b>{props.label}</b>{' '}
      {props.editable ? (
        <input
          aria-label={`uri of ${props.label}`}
          value={uri}
          onInput={(e) => setUri((e.target as HTMLInputElement).value)}
        />
      ) : (
        <code>{props.uri}</code>
      )}{' '}
      <button
        type="button"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            setOutcome({ read: await post<ResourceRead>(`/servers/${q(props.server)}/read`, { uri }) });
          } catch (error) {
            setOutcome({ error: (error as Error).message });
          } finally {
            setBusy(false);
          }
        }}
      >
        read
      </button>
      <span class="muted small">
        {' '}
        in tack chat: @{props.server}:{props.uri}
      </span>
      {outcome?.error && <p class="error">{outcome.error}</p>}
      {outcome?.read?.contents.map((content) => (
        <div key={content.uri}>
          <p class="muted small">
            {content.uri} {content.mimeType ?? ''}
            {content.cutAt !== undefined ? ` (first ${content.cutAt} of ${content.length} characters)` : ''}
          </p>
          {content.text !== undefined ? (
            <pre data-testid="resource-text">{content.text}</pre>
          ) : (
            <p data-testid="resource-binary">
              binary, {content.bytes} bytes{content.mimeType ? ` of ${content.mimeType}` : ''}: not shown
            </p>
          )}
        </div>
      ))}
      {outcome?.read && outcome.read.total > outcome.read.contents.length && (
        <p class="muted small" data-testid="resource-more">
          the first {outcome.read.contents.length} of {outcome.read.total} contents: the rest are not shown
        </p>
      )}
    </section>
  );
}
