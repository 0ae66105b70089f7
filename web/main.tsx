/** git mem ui: the page (Preact; marked and DOMPurify in a chunk of their own), built into dist/ by scripts/build.mjs. */
import { type JSX, render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Info } from '../src/ui/wire';
import { dropFirstAnswers, firstAnswer, get } from './api';
import { InfoContext, type PageInfo } from './info';
import { MemoriesPage } from './pages/memories';
import { ErrorBox, type Loaded, Loading, loadMarkdown, type Route, useLoad, useRoute } from './ui';

export { type PageInfo, useInfo } from './info';

// the landing list is in this script; the other pages are chunks of their own, loaded when
// first shown (and fetched once the first page is up), so the first page runs less script
// biome-ignore lint/suspicious/noExplicitAny: each page module exports its page components
type PageModule = Record<string, (props: any) => JSX.Element>;
const PAGES: Record<string, () => Promise<PageModule>> = {
  memory: () => import('./pages/memory'),
  history: () => import('./pages/history'),
  review: () => import('./pages/review'),
  conflicts: () => import('./pages/conflicts'),
  code: () => import('./pages/code'),
  sessions: () => import('./pages/sessions'),
  overview: () => import('./pages/overview'),
};
const loadedPages = new Map<string, PageModule>();

function Lazy({ module, name, props }: { module: string; name: string; props: Record<string, unknown> }) {
  const [mod, setMod] = useState(loadedPages.get(module));
  useEffect(() => {
    if (mod) return;
    void PAGES[module]().then((m) => {
      loadedPages.set(module, m);
      setMod(m);
    });
  }, [module, mod]);
  if (!mod) return <Loading />;
  const Page = mod[name];
  return <Page {...props} />;
}

const NAV: Array<[string, string, keyof PageInfo['counts'] | null]> = [
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
  if (page === 'm' && id && route.parts[2] === 'history')
    return <Lazy key="history" module="history" name="MemoryHistoryPage" props={{ id, route }} />;
  if (page === 'm' && id)
    return <Lazy key="memory" module="memory" name="MemoryPage" props={{ id, route }} />;
  if (page === 'review') return <Lazy key="review" module="review" name="ReviewPage" props={{}} />;
  if (page === 'conflicts')
    return <Lazy key="conflicts" module="conflicts" name="ConflictsPage" props={{}} />;
  if (page === 'code') return <Lazy key="code" module="code" name="CodePage" props={{ route }} />;
  if (page === 'sessions') return <Lazy key="sessions" module="sessions" name="SessionsPage" props={{}} />;
  if (page === 'history') return <Lazy key="history" module="history" name="HistoryPage" props={{ route }} />;
  if (page === 'overview') return <Lazy key="overview" module="overview" name="OverviewPage" props={{}} />;
  return <MemoriesPage route={route} />;
}

function App() {
  const route = useRoute();
  const loaded = useLoad(
    (s) => get<Info>('info', {}, s),
    [],
    false,
    () => firstAnswer<Info>('info'),
  );
  // the conflict count is a git grep of every record: asked apart, after the page is up, once per tip
  const conflicts = useLoad(
    (s) => (loaded.data ? get<number>('conflicts/count', {}, s) : Promise.resolve(0)),
    [loaded.data ? (loaded.data.tip ?? 'empty') : 'loading'],
    true,
  );
  // one value per answer, so the pages reading it render again only when it changed
  const info: Loaded<PageInfo> = useMemo(
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

/**
 * The server leaves its Cross-Origin-Opener-Policy off the navigations users make themselves
 * (src/ui/security.ts openerPolicy). A tab another page opened, into which the URL was then
 * typed, still has that page as its opener: the page loads itself once more, a navigation it
 * starts (so it gets the policy), and the browser cuts the opener's reference. Once: the mark
 * in the query stops a browser that keeps the opener anyway from loading forever.
 */
const CUT = 'opener-cut';
const cutting = Boolean(window.opener) && !location.search.includes(CUT);
if (cutting) location.replace(`/?${CUT}${location.hash}`);
else {
  if (location.search.includes(CUT)) history.replaceState(null, '', `/${location.hash}`);
  const root = document.getElementById('app')!;
  root.textContent = '';
  render(<App />, root);
}
dropFirstAnswers();
// the Markdown renderer's chunk and the other pages', once the first page is up
setTimeout(() => {
  void loadMarkdown();
  for (const load of Object.values(PAGES)) void load();
}, 1500);
