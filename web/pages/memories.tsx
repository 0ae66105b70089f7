/** Memories: search as you type, filters, sorting, pages. Everything the list shows is in the address. */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { MemoryItem, MemoryList, RecordKind, TagCount } from '../../src/ui/wire';
import { firstAnswer, get } from '../api';
import { useInfo } from '../info';
import {
  Badge,
  ConflictBadge,
  Empty,
  ErrorBox,
  href,
  memoryHref,
  type Route,
  replaceHash,
  Time,
  useAutofocus,
  useLoad,
} from '../ui';

interface Filters {
  q: string;
  type: string;
  status: string;
  tag: string;
  /** memories, pending, sessions or all; none: the curated memories, the others apart */
  kind: string;
  store: string;
  path: string;
  sort: string;
  order: string;
  page: number;
  at: string;
}

function filtersOf(p: URLSearchParams): Filters {
  return {
    q: p.get('q') ?? '',
    type: p.get('type') ?? '',
    status: p.get('status') ?? '',
    tag: p.get('tag') ?? '',
    kind: p.get('kind') ?? '',
    store: p.get('store') ?? '',
    path: p.get('path') ?? '',
    sort: p.get('sort') ?? '',
    order: p.get('order') ?? '',
    page: Number(p.get('page') ?? 1) || 1,
    at: p.get('at') ?? '',
  };
}

/** Timings the bench reads: when the first list was on screen, and each keystroke's time to its results. */
interface Perf {
  ready: number | null;
  keystrokes: number[];
}
const holder = window as unknown as { __gmPerf?: Perf };
if (!holder.__gmPerf) holder.__gmPerf = { ready: null, keystrokes: [] };
const perf: Perf = holder.__gmPerf;

const SIZE = 50;

/** The kinds a reader tells apart (src/commands/list.ts kindOf), as the tabs name them. */
const KINDS: Array<[RecordKind, string]> = [
  ['memories', 'Memories'],
  ['pending', 'Pending proposals'],
  ['sessions', 'Session summaries'],
];
const ALL = 'memories,pending,sessions';

export function MemoriesPage({ route }: { route: Route }) {
  const info = useInfo();
  const [f, setF] = useState<Filters>(() => filtersOf(route.params));
  const typedAt = useRef<number | null>(null);
  const search = useAutofocus<HTMLInputElement>();
  // a link followed to this page (another filter, "back to now") sets the filters anew
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else setF(filtersOf(route.params));
  }, [route]);
  // the address follows the filters (without a history entry per keystroke)
  useEffect(() => {
    replaceHash(href('memories', { ...f, page: f.page > 1 ? f.page : undefined }));
  }, [f]);
  const query = {
    q: f.q,
    type: f.type,
    status: f.status,
    tag: f.tag,
    kind: f.kind === 'all' ? ALL : f.kind,
    store: f.store,
    path: f.path,
    sort: f.sort,
    order: f.order,
    page: f.page,
    size: SIZE,
    at: f.at,
  };
  const list = useLoad(
    (signal) => get<MemoryList>('memories', query, signal),
    [f.q, f.type, f.status, f.tag, f.kind, f.store, f.path, f.sort, f.order, f.page, f.at],
    true,
    () => firstAnswer<MemoryList>('memories', query),
  );
  const tagQuery = { store: f.store === 'global' ? 'global' : '' };
  const tags = useLoad(
    (s) => get<TagCount[]>('tags', tagQuery, s),
    [f.store],
    false,
    () => firstAnswer<TagCount[]>('tags', tagQuery),
  );
  // timings: after the results are on screen
  useLayoutEffect(() => {
    if (!list.data || list.loading) return;
    if (perf.ready === null) {
      perf.ready = performance.now();
      document.body.dataset.ready = '1';
    }
    if (typedAt.current !== null) {
      perf.keystrokes.push(performance.now() - typedAt.current);
      typedAt.current = null;
    }
  }, [list.data, list.loading]);
  const set = (patch: Partial<Filters>) => setF((x) => ({ ...x, page: 1, ...patch }));
  const d = list.data;
  const pages = d ? Math.max(1, Math.ceil(d.total / d.size)) : 1;
  // the rows change only with the answer (not when the tags or the counts come in)
  const rowsOf = (list: MemoryItem[] | undefined) =>
    list?.map((m) => (
      <tr key={`${m.store}:${m.id}`} data-id={m.id}>
        <td class="title">
          <a href={memoryHref(m.id, m.store, d?.at?.commit)}>{m.title}</a>
          {m.alias ? <span class="alias">{m.alias}</span> : null}
          {m.store === 'global' ? <Badge kind="store" value="personal" /> : null}
          {m.why ? <span class="why" title={m.why} /> : null}
        </td>
        <td>
          <Badge kind="type" value={m.type} />
        </td>
        <td>
          <Badge kind="status" value={m.status} />
          <ConflictBadge conflict={m.conflict} />
        </td>
        <td class="tags">
          {m.tags.slice(0, 4).map((t) => (
            <a
              key={t}
              class="tag"
              href={href('memories', { tag: t })}
              onClick={(e) => {
                e.preventDefault();
                set({ tag: t });
              }}
            >
              {t}
            </a>
          ))}
        </td>
        <td class="anchors">
          {m.anchors.length ? (
            <span title={m.anchors.join('\n')}>
              {m.anchors.length === 1 ? m.anchors[0] : `${m.anchors.length} files`}
            </span>
          ) : (
            ''
          )}
        </td>
        <td>
          <Time iso={m.updated} />
        </td>
      </tr>
    ));
  const rows = useMemo(() => rowsOf(d?.items), [d]);
  const apartRows = useMemo(() => rowsOf(d?.apart), [d]);
  // the tab the answer is: one kind, or every kind (a type or status asked for lists them all, as git mem list does)
  const tab = d ? (d.kinds?.length === 1 ? d.kinds[0] : d.kinds ? 'some' : 'all') : f.kind || 'memories';
  const head = (
    <thead>
      <tr>
        <th>Title</th>
        <th>Type</th>
        <th>Status</th>
        <th>Tags</th>
        <th>Anchors</th>
        <th>Updated</th>
      </tr>
    </thead>
  );
  const types = info.data?.types ?? [];
  const statuses = info.data?.statuses ?? [];
  return (
    <section class="page memories">
      <header class="page-head">
        <h1>Memories</h1>
        {f.at ? (
          <p class="banner info">
            As the store was at <code>{d?.at?.commit.slice(0, 12) ?? f.at}</code> (“what did we know at {f.at}
            ”). Search covers the current memory; filters apply. <a href={href('memories')}>Back to now</a>
          </p>
        ) : null}
      </header>
      <div class="toolbar">
        <input
          ref={search}
          type="search"
          class="search"
          placeholder={f.at ? 'Search covers the current memory only' : 'Search memories…'}
          aria-label="Search memories"
          value={f.q}
          disabled={!!f.at}
          onInput={(e) => {
            typedAt.current = performance.now();
            set({ q: (e.target as HTMLInputElement).value });
          }}
        />
        <select
          aria-label="Type"
          value={f.type}
          onChange={(e) => set({ type: (e.target as HTMLSelectElement).value })}
        >
          <option value="">any type</option>
          {types.map((t) => (
            <option key={t} value={t}>
              {t.replace(/_/g, ' ')}
            </option>
          ))}
        </select>
        <select
          aria-label="Status"
          value={f.status}
          onChange={(e) => set({ status: (e.target as HTMLSelectElement).value })}
        >
          <option value="">any status</option>
          {statuses.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
        <select
          aria-label="Tag"
          value={f.tag}
          onChange={(e) => set({ tag: (e.target as HTMLSelectElement).value })}
        >
          <option value="">any tag</option>
          {(tags.data ?? []).map(([t, n]) => (
            <option key={t} value={t}>
              {t} ({n})
            </option>
          ))}
        </select>
        {info.data?.global ? (
          <select
            aria-label="Store"
            value={f.store}
            onChange={(e) => set({ store: (e.target as HTMLSelectElement).value })}
          >
            <option value="">project store</option>
            <option value="global">personal store</option>
            <option value="all">both</option>
          </select>
        ) : null}
        <input
          type="text"
          class="path"
          placeholder="anchored under path…"
          aria-label="Anchored path"
          value={f.path}
          onInput={(e) => set({ path: (e.target as HTMLInputElement).value.trim() })}
        />
        <span class="sort-group">
          <select
            aria-label="Sort"
            value={f.sort}
            onChange={(e) => set({ sort: (e.target as HTMLSelectElement).value })}
          >
            <option value="">{f.q ? 'relevance' : 'newest'}</option>
            {(info.data?.sorts ?? []).map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <button
            type="button"
            class="ghost"
            aria-label="Sort order"
            title="ascending / descending"
            onClick={() => set({ order: (d?.order ?? 'desc') === 'desc' ? 'asc' : 'desc' })}
          >
            {(d?.order ?? 'desc') === 'desc' ? '↓' : '↑'}
          </button>
        </span>
      </div>
      <ErrorBox error={list.error} />
      {d ? (
        <>
          <nav class="kinds" aria-label="Kinds">
            {KINDS.map(([k, label]) => (
              <button
                type="button"
                key={k}
                class={tab === k ? 'ghost on' : 'ghost'}
                aria-pressed={tab === k}
                data-kind={k}
                // the curated memories are the list's own default; with a type or status asked for, they are asked by name
                onClick={() => set({ kind: k === 'memories' && !f.type && !f.status ? '' : k })}
              >
                {label} <span class="n">{d.counts[k]}</span>
              </button>
            ))}
            <button
              type="button"
              class={tab === 'all' ? 'ghost on' : 'ghost'}
              aria-pressed={tab === 'all'}
              data-kind="all"
              onClick={() => set({ kind: 'all' })}
            >
              All <span class="n">{d.counts.memories + d.counts.pending + d.counts.sessions}</span>
            </button>
          </nav>
          <p class="muted count-line" data-total={d.total}>
            {d.total}
            {d.capped ? '+' : ''} {countNoun(tab, d.total)}
            {f.q ? ` match “${f.q}”` : ''}
            {list.loading ? ' …' : ''}
          </p>
          {d.items.length ? (
            <table class="list mem-list main">
              {head}
              <tbody>{rows}</tbody>
            </table>
          ) : (
            <Empty>
              {info.data?.counts.memories === 0 && !f.at ? (
                <>
                  No memories yet. Add one with <code>git mem add --title "…" --content "…"</code>.
                </>
              ) : d.apart.length && d.page === 1 ? (
                'No curated memory matches; the pending proposals and session summaries that do are below.'
              ) : (
                'Nothing matches.'
              )}
            </Empty>
          )}
          {pages > 1 ? (
            <nav class="pager" aria-label="Pages">
              <button
                type="button"
                disabled={f.page <= 1}
                onClick={() => setF((x) => ({ ...x, page: x.page - 1 }))}
              >
                ← Previous
              </button>
              <span>
                page {d.page} of {pages}
              </span>
              <button
                type="button"
                disabled={f.page >= pages}
                onClick={() => setF((x) => ({ ...x, page: x.page + 1 }))}
              >
                Next →
              </button>
            </nav>
          ) : null}
          {d.apart.length && d.page === 1 ? (
            <section class="apart" aria-label="Pending proposals and session summaries">
              <h2>Pending proposals and session summaries</h2>
              <p class="muted">
                Apart from the curated memories, as <code>git mem list</code> and <code>git mem search</code>{' '}
                show them:{' '}
                {(['pending', 'sessions'] as const)
                  .filter((k) => d.counts[k])
                  .map((k, i) => (
                    <span key={k}>
                      {i ? ' · ' : ''}
                      <a
                        href={href('memories', { ...f, page: undefined, kind: k })}
                        onClick={(e) => {
                          e.preventDefault();
                          set({ kind: k });
                        }}
                      >
                        {d.counts[k]} {countNoun(k, d.counts[k])}
                      </a>
                    </span>
                  ))}
                {d.apart.length < d.counts.pending + d.counts.sessions
                  ? ` (the first ${d.apart.length} below)`
                  : ''}
                {d.counts.pending ? (
                  <>
                    ; approve or reject proposals on <a href="#/review">Review</a>
                  </>
                ) : null}
                .
              </p>
              <table class="list mem-list apart">
                {head}
                <tbody>{apartRows}</tbody>
              </table>
            </section>
          ) : null}
        </>
      ) : list.loading ? (
        <p class="loading">Loading…</p>
      ) : null}
    </section>
  );
}

function countNoun(kind: string, n: number): string {
  if (kind === 'pending') return n === 1 ? 'pending proposal' : 'pending proposals';
  if (kind === 'sessions') return n === 1 ? 'session summary' : 'session summaries';
  if (kind === 'memories') return n === 1 ? 'memory' : 'memories';
  return n === 1 ? 'record' : 'records';
}
