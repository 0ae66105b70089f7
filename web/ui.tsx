/** Small pieces every page uses: the router, data loading, badges, Markdown, code, diffs, charts. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { CodeView, DiffRow } from '../src/ui/wire';
import { ApiError } from './api';

// ------------------------------------------------------------------ router (the hash: #/page/arg?k=v)

export interface Route {
  parts: string[];
  params: URLSearchParams;
}

/** A part of the address as it was meant; a malformed %-escape stays as typed (it names nothing, and the page says so). */
function decodePart(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export function parseHash(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const q = h.indexOf('?');
  const path = q < 0 ? h : h.slice(0, q);
  return {
    parts: path.split('/').filter(Boolean).map(decodePart),
    params: new URLSearchParams(q < 0 ? '' : h.slice(q + 1)),
  };
}

export function href(
  path: string,
  params: Record<string, string | number | undefined | null | string[]> = {},
): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) {
      if (v.length) p.set(k, v.join(','));
    } else p.set(k, String(v));
  }
  const s = p.toString();
  return `#/${path}${s ? `?${s}` : ''}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** Changes the address without a new history entry or a hashchange (the state is already on screen). */
export function replaceHash(h: string): void {
  if (location.hash !== h) history.replaceState(null, '', h);
}

export function go(h: string): void {
  location.hash = h;
}

export function memoryHref(id: string, store?: string, at?: string | null): string {
  return href(`m/${id}`, { store: store === 'global' ? 'global' : undefined, at: at ?? undefined });
}

// ------------------------------------------------------------------ data

export interface Loaded<T> {
  data?: T;
  error?: ApiError;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads with `load` whenever `deps` change; the last call wins. What was
 * loaded for other deps is dropped at once (a page never shows, or lets one
 * edit, one thing under another's name), unless `keep` says to show it
 * until the new answer comes (a list being searched); a reload keeps it.
 */
export function useLoad<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
  keep = false,
  first?: () => T | undefined,
): Loaded<T> {
  // an answer the page came with (api.ts firstAnswer) is the state of the first render: no request
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>(() => {
    const data = first?.();
    return data === undefined ? { loading: true } : { data, loading: false };
  });
  const given = useRef(state.data !== undefined);
  const [n, setN] = useState(0);
  const key = JSON.stringify(deps);
  const last = useRef(key);
  // before the paint, so the request leaves a frame earlier
  useLayoutEffect(() => {
    if (given.current) {
      given.current = false;
      return;
    }
    const ac = new AbortController();
    const same = last.current === key;
    last.current = key;
    // (no new state when it already says loading: a render saved on every first load)
    setState((s) =>
      s.loading && (same || keep || s.data === undefined)
        ? s
        : same || keep
          ? { ...s, loading: true }
          : { loading: true },
    );
    load(ac.signal).then(
      (data) => !ac.signal.aborted && setState({ data, loading: false }),
      (e) =>
        !ac.signal.aborted &&
        setState({
          error: e instanceof ApiError ? e : new ApiError('E_PAGE', String(e?.message ?? e)),
          loading: false,
        }),
    );
    return () => ac.abort();
  }, [key, n]);
  // the render that changes deps still holds the old answer: not shown unless kept
  const stale = last.current !== key && !keep;
  return { ...(stale ? { loading: true } : state), reload: useCallback(() => setN((x) => x + 1), []) };
}

/** Runs a change; while it runs the button waits, and a failure is shown where the action is. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const run = useCallback(async <T,>(f: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await f();
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError('E_PAGE', String((e as Error)?.message ?? e)));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}

// ------------------------------------------------------------------ small pieces

export function ErrorBox({ error }: { error?: ApiError }) {
  if (!error) return null;
  return (
    <div class="error" role="alert">
      <strong>{error.message}</strong>
      {error.hint ? <span class="hint"> — {error.hint}</span> : null}
      <span class="code"> ({error.code})</span>
    </div>
  );
}

export function Loading({ what }: { what?: string }) {
  return <p class="loading">Loading{what ? ` ${what}` : ''}…</p>;
}

export function Badge({ kind, value, title }: { kind: string; value: string; title?: string }) {
  return (
    <span class={`badge ${kind}-${value.replace(/[^a-z0-9_-]/gi, '')}`} title={title}>
      {value.replace(/_/g, ' ')}
    </span>
  );
}

/** The mark of a record a merge flagged for review (`conflict` in its JSON), as `git mem list` and `show` print it: a link to the conflicts page. */
export function ConflictBadge({ conflict }: { conflict?: boolean }) {
  if (!conflict) return null;
  return (
    <a
      class="badge flag-conflict"
      href="#/conflicts"
      title="a merge flagged it for review: resolve it on the Conflicts page"
    >
      ⚑ conflict
    </a>
  );
}

export function short(id: string, n = 12): string {
  return id.slice(0, n);
}

export function Time({ iso }: { iso?: string | null }) {
  if (!iso) return <span class="muted">—</span>;
  const t = Date.parse(iso);
  const d = (Date.now() - t) / 1000;
  const rel =
    d < 60
      ? 'just now'
      : d < 3600
        ? `${Math.round(d / 60)} min ago`
        : d < 86400
          ? `${Math.round(d / 3600)} h ago`
          : d < 86400 * 60
            ? `${Math.round(d / 86400)} days ago`
            : new Date(t).toISOString().slice(0, 10);
  return (
    <time dateTime={iso} title={iso}>
      {rel}
    </time>
  );
}

// marked and DOMPurify are more than half of the page's script: they load after the first page,
// in a chunk of their own (the list of memories never renders Markdown)
type MarkdownModule = typeof import('./markdown');
let markdown: MarkdownModule | undefined;
let markdownP: Promise<MarkdownModule> | undefined;
export function loadMarkdown(): Promise<MarkdownModule> {
  markdownP ??= import('./markdown').then((m) => {
    markdown = m;
    return m;
  });
  return markdownP;
}

export function Markdown({ text, class: cls }: { text: string; class?: string }) {
  const [ready, setReady] = useState(!!markdown);
  useEffect(() => {
    if (!ready) void loadMarkdown().then(() => setReady(true));
  }, [ready]);
  const html = useMemo(() => (ready && markdown ? markdown.renderMarkdown(text) : null), [text, ready]);
  if (html === null) return <div class={`markdown-loading ${cls ?? ''}`}>…</div>;
  // sanitised by renderMarkdown (DOMPurify); the CSP allows no inline script either
  return <div class={`markdown ${cls ?? ''}`} dangerouslySetInnerHTML={{ __html: html }} />;
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

// ------------------------------------------------------------------ code and diffs

export function Code({ view, label }: { view: CodeView; label: ComponentChildren }) {
  return (
    <figure class="code">
      <figcaption>{label}</figcaption>
      <pre>
        {view.lines.map((l, i) => {
          const n = view.from + i;
          const on = view.mark && n >= view.mark[0] && n <= view.mark[1];
          return (
            <div class={on ? 'line marked' : 'line'} key={n}>
              <span class="ln">{n}</span>
              <span class="tx">{l || ' '}</span>
            </div>
          );
        })}
        {view.truncated ? <div class="line more">…</div> : null}
      </pre>
    </figure>
  );
}

export function Diff({ rows, label }: { rows: DiffRow[]; label?: ComponentChildren }) {
  return (
    <figure class="code diff">
      {label ? <figcaption>{label}</figcaption> : null}
      <pre>
        {rows.map((r, i) => (
          <div class={`line op${r.op === ' ' ? 'k' : r.op === '-' ? 'd' : r.op === '+' ? 'a' : 'f'}`} key={i}>
            <span class="ln">{r.old ?? ''}</span>
            <span class="ln">{r.new ?? ''}</span>
            <span class="sg">{r.op === '…' ? '' : r.op}</span>
            <span class="tx">{r.text || ' '}</span>
          </div>
        ))}
      </pre>
    </figure>
  );
}

/**
 * A diff as two columns: the old text on the left, the new on the right, changes side by side.
 * One grid of rows, each row a line of each side: a long line wraps, and the line beside it
 * grows with it, so the two columns stay aligned.
 */
export function SideBySide({
  rows,
  left,
  right,
}: {
  rows: DiffRow[];
  left: ComponentChildren;
  right: ComponentChildren;
}) {
  const pairs: Array<[DiffRow | null, DiffRow | null]> = [];
  for (let i = 0; i < rows.length; ) {
    const r = rows[i];
    if (r.op === ' ' || r.op === '…') {
      pairs.push([r, r]);
      i++;
      continue;
    }
    const del: DiffRow[] = [];
    const add: DiffRow[] = [];
    while (i < rows.length && rows[i].op === '-') del.push(rows[i++]);
    while (i < rows.length && rows[i].op === '+') add.push(rows[i++]);
    for (let k = 0; k < Math.max(del.length, add.length); k++) pairs.push([del[k] ?? null, add[k] ?? null]);
  }
  const cell = (r: DiffRow | null, side: 'old' | 'new', key: string) =>
    r ? (
      <div
        key={key}
        class={`line ${side} op${r.op === ' ' ? 'k' : r.op === '-' ? 'd' : r.op === '+' ? 'a' : 'f'}`}
      >
        <span class="ln">{(side === 'old' ? r.old : r.new) ?? ''}</span>
        <span class="tx">{r.text || ' '}</span>
      </div>
    ) : (
      <div key={key} class={`line ${side} blank`}>
        <span class="ln" />
        <span class="tx"> </span>
      </div>
    );
  return (
    <figure class="code sbs">
      <div class="sbs-rows">
        <figcaption class="old">{left}</figcaption>
        <figcaption class="new">{right}</figcaption>
        {pairs.flatMap(([l, r], i) => [cell(l, 'old', `o${i}`), cell(r, 'new', `n${i}`)])}
      </div>
    </figure>
  );
}

// ------------------------------------------------------------------ charts (SVG, no library)

export const PALETTE = [
  '#3b6fd8',
  '#e0892b',
  '#2f9e6a',
  '#c0392b',
  '#8e5cc6',
  '#16a3b8',
  '#b58900',
  '#d35d9d',
  '#6c7a89',
  '#7cb342',
  '#5d4037',
  '#ef6c00',
  '#455a64',
];
export const STATUS_COLORS: Record<string, string> = {
  active: '#2f9e6a',
  pending: '#e0b12b',
  stale: '#c0392b',
  superseded: '#8e99a6',
  archived: '#c6ccd3',
};

export function colorOf(key: string, keys: readonly string[]): string {
  return STATUS_COLORS[key] ?? PALETTE[Math.max(0, keys.indexOf(key)) % PALETTE.length];
}

/** Horizontal bars, one per entry. */
export function Bars({ data, colors }: { data: Array<[string, number]>; colors?: (k: string) => string }) {
  const max = Math.max(1, ...data.map(([, v]) => v));
  const h = 22;
  return (
    <svg
      class="chart bars"
      viewBox={`0 0 400 ${data.length * h + 4}`}
      role="img"
      preserveAspectRatio="xMinYMin meet"
    >
      <title>{data.map(([k, v]) => `${k} ${v}`).join(', ')}</title>
      {data.map(([k, v], i) => (
        <g key={k} transform={`translate(0 ${i * h + 2})`}>
          <text x="118" y="15" text-anchor="end" class="lbl">
            {k.replace(/_/g, ' ')}
          </text>
          <rect
            x="124"
            y="3"
            height="15"
            width={Math.max(1, (v / max) * 230)}
            fill={colors ? colors(k) : PALETTE[0]}
            rx="2"
          />
          <text x={130 + (v / max) * 230} y="15" class="val">
            {v}
          </text>
        </g>
      ))}
    </svg>
  );
}

/** Vertical stacked bars: one column per label, one segment per key. */
export function StackedBars({
  data,
  keys,
}: {
  data: Array<{ label: string; parts: Record<string, number> }>;
  keys: readonly string[];
}) {
  const W = 640;
  const H = 200;
  const pad = 28;
  const max = Math.max(1, ...data.map((d) => Object.values(d.parts).reduce((a, b) => a + b, 0)));
  const bw = data.length ? Math.min(48, (W - pad) / data.length - 6) : 0;
  return (
    <div>
      <svg class="chart stacked" viewBox={`0 0 ${W} ${H + 34}`} role="img">
        <title>{data.map((d) => d.label).join(', ')}</title>
        <line x1={pad} y1={H} x2={W} y2={H} class="axis" />
        <text x={pad - 4} y={12} text-anchor="end" class="val">
          {max}
        </text>
        {data.map((d, i) => {
          let y = H;
          const x = pad + 4 + i * ((W - pad) / Math.max(1, data.length));
          return (
            <g key={d.label}>
              {keys.map((k) => {
                const v = d.parts[k] ?? 0;
                if (!v) return null;
                const h = (v / max) * (H - 16);
                y -= h;
                return (
                  <rect key={k} x={x} y={y} width={bw} height={h} fill={colorOf(k, keys)}>
                    <title>{`${d.label}: ${k.replace(/_/g, ' ')} ${v}`}</title>
                  </rect>
                );
              })}
              <text x={x + bw / 2} y={H + 14} text-anchor="middle" class="lbl small">
                {d.label}
              </text>
            </g>
          );
        })}
      </svg>
      <Legend keys={keys.filter((k) => data.some((d) => d.parts[k]))} all={keys} />
    </div>
  );
}

export function Legend({ keys, all }: { keys: string[]; all: readonly string[] }) {
  return (
    <ul class="legend">
      {keys.map((k) => (
        <li key={k}>
          <svg width="10" height="10" aria-hidden="true">
            <rect width="10" height="10" fill={colorOf(k, all)} />
          </svg>{' '}
          {k.replace(/_/g, ' ')}
        </li>
      ))}
    </ul>
  );
}

/** Focus an element once it exists. */
export function useAutofocus<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  useEffect(() => ref.current?.focus(), []);
  return ref;
}
