import { render } from 'preact';
import { ApprovalHost } from './calls';
import { Load } from './components';
import { href, useApi, useRoute } from './hooks';
import { KnowledgePage } from './pages/knowledge';
import { SecurityPage } from './pages/security';
import { ServerPage } from './pages/server';
import { ServersPage, ToolPage } from './pages/servers';
import { SessionPage, SessionsPage } from './pages/sessions';
import { SkillPage, SkillsPage } from './pages/skills';

interface Overview {
  version: string;
  projectRoot: string;
  sessions: number;
  held: number;
  bundles: number;
  store: boolean;
}

const PAGES = [
  ['servers', 'Servers and tools'],
  ['sessions', 'Sessions'],
  ['security', 'Security'],
  ['knowledge', 'Knowledge'],
  ['skills', 'Skills'],
] as const;

function Page(props: { route: string[] }) {
  const [page = 'servers', a, b] = props.route;
  if (page === 'servers' && a === 'tool' && b) return <ToolPage name={b} />;
  if (page === 'servers' && a === 'server' && b) return <ServerPage name={b} />;
  if (page === 'sessions') return a ? <SessionPage id={a} /> : <SessionsPage />;
  if (page === 'security') return <SecurityPage />;
  if (page === 'knowledge')
    return <KnowledgePage bundle={a} concept={props.route.slice(2).join('/') || undefined} />;
  if (page === 'skills') return a ? <SkillPage name={a} /> : <SkillsPage />;
  return <ServersPage />;
}

function App() {
  const route = useRoute();
  const overview = useApi<Overview>('/overview');
  const current = route[0] ?? 'servers';
  return (
    <>
      <nav class="sidebar" aria-label="pages">
        <div class="brand">tack console</div>
        {PAGES.map(([id, title]) => (
          <a
            key={id}
            href={href(id)}
            class={current === id ? 'active' : ''}
            aria-current={current === id ? 'page' : undefined}
          >
            {title}
            {id === 'security' && overview.data && overview.data.held > 0 && (
              <span class="badge">{overview.data.held}</span>
            )}
            {id === 'sessions' && overview.data && <span class="count">{overview.data.sessions}</span>}
          </a>
        ))}
        <Load load={overview}>
          {(o) => (
            <p class="muted small project" title={o.projectRoot}>
              tack {o.version}
              <br />
              {o.projectRoot}
              {!o.store && (
                <>
                  <br />
                  no store: pins, sessions and the audit log are unavailable
                </>
              )}
            </p>
          )}
        </Load>
      </nav>
      {/* A new page mounts afresh; moving between concepts of one bundle keeps its graph drawn. */}
      <main key={current === 'knowledge' ? `knowledge/${route[1] ?? ''}` : route.join('/')}>
        <Page route={route} />
      </main>
      <ApprovalHost />
    </>
  );
}

render(<App />, document.getElementById('app')!);
