/** git mem ui: the page. One bundle (Preact, marked, DOMPurify), built into dist/ by scripts/build.mjs. */
import { createContext, render } from 'preact';
import { useContext, useEffect } from 'preact/hooks';
import { get } from './api';
import { CodePage } from './pages/code';
import { ConflictsPage } from './pages/conflicts';
import { HistoryPage, MemoryHistoryPage } from './pages/history';
import { MemoriesPage } from './pages/memories';
import { MemoryPage } from './pages/memory';
import { OverviewPage } from './pages/overview';
import { ReviewPage } from './pages/review';
import { SessionsPage } from './pages/sessions';
import { ErrorBox, type Loaded, useLoad, useRoute } from './ui';

export interface Info {
  repo: string;
  root: string;
  ref: string;
  tip: string | null;
  workTree: boolean;
  global: boolean;
  counts: { memories: number; pending: number; conflicts: number; stale: number };
  types: string[];
  statuses: string[];
  sorts: string[];
}

const InfoContext = createContext<Loaded<Info> | null>(null);

/** What the server says about the store, and a way to ask again after a change. */
export function useInfo(): Loaded<Info> {
  return useContext(InfoContext)!;
}

const NAV: Array<[string, string, keyof Info['counts'] | null]> = [
  ['', 'Overview', null],
  ['memories', 'Memories', 'memories'],
  ['review', 'Review', 'pending'],
  ['conflicts', 'Conflicts', 'conflicts'],
  ['code', 'Code', null],
  ['sessions', 'Sessions', null],
  ['history', 'History', null],
];

function App() {
  const route = useRoute();
  const info = useLoad((s) => get<Info>('info', {}, s), []);
  const page = route.parts[0] ?? '';
  // a change made elsewhere (the CLI, an agent) shows when the page comes back into view
  useEffect(() => {
    const on = () => document.visibilityState === 'visible' && info.reload();
    document.addEventListener('visibilitychange', on);
    return () => document.removeEventListener('visibilitychange', on);
  }, [info.reload]);
  let body: preact.JSX.Element;
  if (page === 'memories') body = <MemoriesPage route={route} />;
  else if (page === 'm' && route.parts[1] && route.parts[2] === 'history')
    body = <MemoryHistoryPage id={route.parts[1]} route={route} />;
  else if (page === 'm' && route.parts[1]) body = <MemoryPage id={route.parts[1]} route={route} />;
  else if (page === 'review') body = <ReviewPage />;
  else if (page === 'conflicts') body = <ConflictsPage />;
  else if (page === 'code') body = <CodePage route={route} />;
  else if (page === 'sessions') body = <SessionsPage />;
  else if (page === 'history') body = <HistoryPage route={route} />;
  else body = <OverviewPage />;
  const current = page === 'm' ? 'memories' : page;
  return (
    <InfoContext.Provider value={info}>
      <div class="shell">
        <nav class="side" aria-label="Pages">
          <a class="brand" href="#/">
            git-mem
            <small>{info.data ? info.data.repo : ''}</small>
          </a>
          <ul>
            {NAV.map(([path, label, count]) => {
              const n = count && info.data ? info.data.counts[count] : 0;
              return (
                <li key={path}>
                  <a
                    href={`#/${path}`}
                    class={current === path ? 'on' : ''}
                    aria-current={current === path ? 'page' : undefined}
                    data-nav={path || 'overview'}
                  >
                    {label}
                    {n ? <span class={`count ${count === 'memories' ? '' : 'attn'}`}>{n}</span> : null}
                  </a>
                </li>
              );
            })}
          </ul>
          <p class="foot">
            {info.data?.tip ? (
              <>
                {info.data.ref} <code>{info.data.tip.slice(0, 12)}</code>
              </>
            ) : (
              'no memory yet'
            )}
          </p>
        </nav>
        <main>
          <ErrorBox error={info.error} />
          {body}
        </main>
      </div>
    </InfoContext.Provider>
  );
}

const root = document.getElementById('app')!;
root.textContent = '';
render(<App />, root);
