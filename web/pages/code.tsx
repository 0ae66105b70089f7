/** Code: the files at HEAD with the memories and rules that apply to each, and one file's panel. */
import { useEffect, useState } from 'preact/hooks';
import type { CodeTree, FilePanel } from '../../src/ui/wire';
import { get } from '../api';
import {
  Badge,
  Empty,
  ErrorBox,
  href,
  Loading,
  Markdown,
  memoryHref,
  type Route,
  replaceHash,
  useLoad,
} from '../ui';

/** The folders on the way to a file, open. */
function onTheWay(path: string): Record<string, boolean> {
  const o: Record<string, boolean> = {};
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) o[parts.slice(0, i).join('/')] = true;
  return o;
}

function Dir({
  path,
  open: initiallyOpen,
  selected,
  onPick,
}: {
  path: string;
  open: boolean;
  selected: string;
  onPick: (p: string) => void;
}) {
  const tree = useLoad((s) => get<CodeTree>('code/tree', { dir: path }, s), [path]);
  const [open, setOpen] = useState<Record<string, boolean>>(() => onTheWay(selected));
  // folders on the way to a file picked by the address (a link, back, a typed hash) open too
  useEffect(() => setOpen((o) => ({ ...o, ...onTheWay(selected) })), [selected]);
  if (!initiallyOpen) return null;
  if (tree.error) return <ErrorBox error={tree.error} />;
  if (!tree.data) return <Loading />;
  const t = tree.data;
  return (
    <ul class="tree">
      {t.folders.map((f) => (
        <li key={f.path} class="dir">
          <button
            type="button"
            class="ghost node"
            aria-expanded={!!open[f.path]}
            onClick={() => setOpen((o) => ({ ...o, [f.path]: !o[f.path] }))}
          >
            <span class="caret">{open[f.path] ? '▾' : '▸'}</span> {f.name}/
            <span
              class={`cov ${f.covered ? '' : 'none'}`}
              title={`${f.covered} of ${f.files} files have memory; ${f.memories} memories`}
            >
              {f.memories ? `${f.memories} mem` : 'no memory'}
            </span>
          </button>
          {open[f.path] ? <Dir path={f.path} open selected={selected} onPick={onPick} /> : null}
        </li>
      ))}
      {t.entries.map((e) => (
        <li key={e.path} class={`file ${selected === e.path ? 'on' : ''}`}>
          <a
            href={href('code', { path: e.path })}
            data-path={e.path}
            onClick={(ev) => {
              ev.preventDefault();
              onPick(e.path);
            }}
          >
            {e.name}
            {e.anchored ? (
              <span class="pill anchored" title="memories anchored here">
                {e.anchored}
              </span>
            ) : null}
            {e.scoped ? (
              <span class="pill scoped" title="memories scoped here">
                {e.scoped}
              </span>
            ) : null}
            {e.rules ? (
              <span class="pill rules" title="scoped rules in force">
                {e.rules} rule{e.rules === 1 ? '' : 's'}
              </span>
            ) : null}
          </a>
        </li>
      ))}
    </ul>
  );
}

function Panel({ path }: { path: string }) {
  const f = useLoad((s) => get<FilePanel>('code/file', { path }, s), [path]);
  if (f.error) return <ErrorBox error={f.error} />;
  if (!f.data) return <Loading what={path} />;
  const d = f.data;
  const marks = new Map<number, string>();
  for (const m of d.anchored)
    for (const a of m.anchors)
      if (a.lines) for (let n = a.lines[0]; n <= a.lines[1]; n++) marks.set(n, m.title);
  const lines = d.text === null ? [] : d.text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return (
    <div class="file-panel" data-file={d.path}>
      <h2>{d.path}</h2>
      {!d.exists ? <p class="muted">Not a file at HEAD.</p> : null}
      <section>
        <h3>Memories anchored here ({d.anchored.length})</h3>
        <p class="muted small">As git mem blame judges them at HEAD.</p>
        {d.anchored.length ? (
          <ul class="mems">
            {d.anchored.map((m) => (
              <li key={m.id}>
                <a href={memoryHref(m.id, m.store)}>{m.title}</a> <Badge kind="type" value={m.type} />{' '}
                <Badge kind="status" value={m.status} />
                <span class="muted">
                  {' '}
                  {m.anchors
                    .map(
                      (a) =>
                        `${a.lines ? `lines ${a.lines[0]}–${a.lines[1]}` : 'whole file'}${a.symbol ? ` (${a.symbol})` : ''}${a.verdict ? `: ${a.verdict}` : ''}`,
                    )
                    .join('; ')}
                  {m.by?.kind === 'agent' ? ` · added by ${m.by.agent ?? 'an agent'}` : ''}
                </span>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">None.</p>
        )}
      </section>
      <section>
        <h3>Rules in force ({d.rules.length})</h3>
        {d.rules.length ? (
          <ul class="rules">
            {d.rules.map((r) => (
              <li key={r.id}>
                <details>
                  <summary>
                    <a href={memoryHref(r.id, r.origin === 'global' ? 'global' : undefined)}>{r.title}</a>{' '}
                    <span class="muted">
                      {r.matched ? `scope ${r.matched}` : 'every file'}
                      {r.origin === 'global' ? ' · personal' : ''}
                    </span>
                  </summary>
                  <Markdown text={r.body} />
                </details>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">None.</p>
        )}
      </section>
      {d.scoped.length ? (
        <section>
          <h3>Other memories scoped here ({d.scoped.length})</h3>
          <ul class="mems">
            {d.scoped.map((m) => (
              <li key={m.id}>
                <a href={memoryHref(m.id, m.store)}>{m.title}</a> <Badge kind="type" value={m.type} />{' '}
                <span class="muted">{m.scope.join(', ')}</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {d.text !== null ? (
        <figure class="code file">
          <figcaption>
            At HEAD <span class="muted">{d.head?.slice(0, 12)}</span>
          </figcaption>
          <pre>
            {lines.slice(0, 3000).map((l, i) => {
              const m = marks.get(i + 1);
              return (
                <div class={m ? 'line marked' : 'line'} key={i} title={m}>
                  <span class="ln">{i + 1}</span>
                  <span class="tx">{l || ' '}</span>
                </div>
              );
            })}
          </pre>
        </figure>
      ) : d.exists ? (
        <p class="muted">{d.binary ? 'A binary file.' : `Too large to show (${d.size} bytes).`}</p>
      ) : null}
    </div>
  );
}

export function CodePage({ route }: { route: Route }) {
  const [path, setPath] = useState(route.params.get('path') ?? '');
  // the address names the file: one changed within this page (#/code to #/code?path=…, a link,
  // back) opens the file it names
  useEffect(() => setPath(route.params.get('path') ?? ''), [route]);
  const pick = (p: string) => {
    setPath(p);
    replaceHash(href('code', { path: p }));
  };
  return (
    <section class="page code-page">
      <header class="page-head">
        <h1>Code</h1>
        <p class="muted">
          The files at HEAD and the memory that applies to each: anchored to it, or scoped to it by globs
          (rules among them).
        </p>
      </header>
      <div class="split">
        <nav class="tree-pane" aria-label="Files">
          <Dir path="" open selected={path} onPick={pick} />
        </nav>
        <div class="panel-pane">
          {path ? (
            <Panel path={path} />
          ) : (
            <Empty>Pick a file to see the memories and rules that apply to it.</Empty>
          )}
        </div>
      </div>
    </section>
  );
}
