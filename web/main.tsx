/** git mem ui: the page. One bundle (Preact, marked, DOMPurify), built into dist/ by scripts/build.mjs. */
import { createContext, type JSX, render } from 'preact';
import { useContext, useEffect, useMemo } from 'preact/hooks';
import { get } from './api';
import { CodePage } from './pages/code';
import { ConflictsPage } from './pages/conflicts';
import { HistoryPage, MemoryHistoryPage } from './pages/history';
import { MemoriesPage } from './pages/memories';
import { MemoryPage } from './pages/memory';
import { OverviewPage } from './pages/overview';
import { ReviewPage } from './pages/review';
import { SessionsPage } from './pages/sessions';
import { ErrorBox, type Loaded, loadMarkdown, type Route, useLoad, useRoute } from './ui';

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
  ['memories', 'Memories', 'memories'],
  ['overview', 'Overview', null],
  ['review', 'Review', 'pending'],
  ['conflicts', 'Conflicts', 'conflicts'],
  ['code', 'Code', null],
  ['sessions', 'Sessions', null],
  ['history', 'History', null],
];

function pageFor(route: Route): JSX.Element {
  const page = route.parts[0] ?? 'memories';
  const id = route.parts[1];
  if (page === 'm' && id && route.parts[2] === 'history') return <MemoryHistoryPage id={id} route={route} />;
  if (page === 'm' && id) return <MemoryPage id={id} route={route} />;
  if (page === 'review') return <ReviewPage />;
  if (page === 'conflicts') return <ConflictsPage />;
  if (page === 'code') return <CodePage route={route} />;
  if (page === 'sessions') return <SessionsPage />;
  if (page === 'history') return <HistoryPage route={route} />;
  if (page === 'overview') return <OverviewPage />;
  return <MemoriesPage route={route} />;
}

function App() {
  const route = useRoute();
  const loaded = useLoad(
    (s) => get<Omit<Info, 'counts'> & { counts: Omit<Info['counts'], 'conflicts'> }>('info', {}, s),
    [],
  );
  // the conflict count is a git grep of every record: asked apart, after the page is up, once per tip
  const conflicts = useLoad(
    (s) => (loaded.data ? get<number>('conflicts/count', {}, s) : Promise.resolve(0)),
    [loaded.data ? (loaded.data.tip ?? 'empty') : 'loading'],
    true,
  );
  // one value per answer, so the pages reading it render again only when it changed
  const info: Loaded<Info> = useMemo(
    () => ({
      ...loaded,
      data: loaded.data && {
        ...loaded.data,
        counts: { ...loaded.data.counts, conflicts: conflicts.data ?? 0 },
      },
    }),
    [loaded.data, loaded.error, loaded.loading, loaded.reload, conflicts.data],
  );
  // the landing page is the list of memories
  const page = route.parts[0] ?? 'memories';
  // a change made elsewhere (the CLI, an agent) shows when the page comes back into view
  useEffect(() => {
    const on = () => document.visibilityState === 'visible' && info.reload();
    document.addEventListener('visibilitychange', on);
    return () => document.removeEventListener('visibilitychange', on);
  }, [info.reload]);
  // the page is made again only when the address changes: the counts coming in re-render the
  // navigation, and the pages that read them (useInfo) on their own
  const body = useMemo(() => pageFor(route), [route]);
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
                    data-nav={path}
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
// the Markdown renderer's chunk, once the first page is up
setTimeout(() => void loadMarkdown(), 1500);
