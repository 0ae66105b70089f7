/** One memory: rendered text and fields, anchors with their code, why it is stale, links, edit in place. */
import { useEffect, useState } from 'preact/hooks';
import type {
  AnchorCode,
  AnchorView,
  FormField,
  MemoryView,
  ReanchorAnswer,
  RecordJson,
  ShownField,
  UpdateAnswer,
} from '../../src/ui/wire';
import { get, post } from '../api';
import { useInfo } from '../info';
import {
  Badge,
  Code,
  ConflictBadge,
  Diff,
  ErrorBox,
  href,
  Loading,
  Markdown,
  memoryHref,
  type Route,
  short,
  Time,
  useAction,
  useLoad,
} from '../ui';

const loc = (path: string, lines?: [number, number] | null) =>
  lines ? `${path}:${lines[0]}-${lines[1]}` : path;

function AnchorCard({
  a,
  id,
  store,
  open: initiallyOpen,
}: {
  a: AnchorView;
  id: string;
  store: string;
  open: boolean;
}) {
  const [open, setOpen] = useState(initiallyOpen);
  const code = useLoad(
    (s) =>
      open
        ? get<AnchorCode>(`memory/${id}/anchor/${a.index}`, { store: store === 'global' ? 'global' : '' }, s)
        : Promise.resolve(null),
    [open, id, a.index, store],
  );
  const c = code.data;
  return (
    <li class={`anchor ${a.stale ? 'is-stale' : ''}`} data-anchor={a.index}>
      <div class="anchor-head">
        <a href={href('code', { path: a.current?.path ?? a.path })} class="path">
          {loc(a.path, a.lines)}
        </a>
        {a.symbol ? <code class="sym">{a.symbol}</code> : null}
        {a.verdict ? (
          <Badge kind="verdict" value={a.verdict.status} title={a.verdict.reason} />
        ) : (
          <Badge kind="verdict" value="unchecked" />
        )}
        {a.current && (a.current.path !== a.path || String(a.current.lines) !== String(a.lines)) ? (
          <span class="muted"> now at {loc(a.current.path, a.current.lines)}</span>
        ) : null}
        <button type="button" class="ghost small" onClick={() => setOpen(!open)} aria-expanded={open}>
          {open ? 'Hide code' : 'Show code'}
        </button>
      </div>
      {a.verdict ? (
        <p class="reason">
          {a.verdict.reason}{' '}
          <span class="muted">
            (checked at {short(a.verdict.commit)}, <Time iso={a.verdict.checked} />)
          </span>
        </p>
      ) : null}
      {open ? (
        <div class="anchor-code">
          <ErrorBox error={code.error} />
          {code.loading && !c ? <Loading what="code" /> : null}
          {c ? (
            <>
              {c.diff?.length ? (
                <Diff
                  rows={c.diff}
                  label={
                    <>
                      {a.stale ? 'The change that made it stale' : 'Changed since anchored'}:{' '}
                      {c.anchored?.path}{' '}
                      <span class="muted">
                        {short(c.anchored?.blob ?? '', 8)} →{' '}
                        {c.diffTo?.blob ? short(c.diffTo.blob, 8) : 'deleted'}
                        {c.diffTo?.commit ? ` at ${short(c.diffTo.commit)}` : ''}
                      </span>
                    </>
                  }
                />
              ) : null}
              <div class="two">
                {c.anchored ? (
                  <Code
                    view={c.anchored}
                    label={
                      <>
                        As anchored: {c.anchored.path}{' '}
                        <span class="muted">
                          blob {short(c.anchored.blob, 8)}
                          {c.anchored.commit ? `, commit ${short(c.anchored.commit)}` : ''}
                        </span>
                      </>
                    }
                  />
                ) : (
                  <p class="muted">The anchored code is not in this repository.</p>
                )}
                {c.head ? (
                  <Code
                    view={c.head}
                    label={
                      <>
                        At HEAD: {c.head.path} <span class="muted">blob {short(c.head.blob, 8)}</span>
                      </>
                    }
                  />
                ) : (
                  <p class="muted">Not in HEAD: the file is gone (or not committed yet).</p>
                )}
              </div>
            </>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}

/** A field's value in its control: a list comma-separated, a missing one empty. */
function shownIn(v: unknown): string {
  if (Array.isArray(v)) return v.join(', ');
  return v === null || v === undefined ? '' : String(v);
}

const listOf = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * What the form sends for a field whose control reads `text`: nothing when unchanged, "" when
 * emptied and it clears (the one way every surface clears a field), a list as an array.
 */
function sentFor(f: FormField, text: string, was: unknown): { value: unknown } | null {
  const now = f.markdown ? text : text.trim();
  if (f.input === 'strings') {
    const list = listOf(now);
    if (list.join('\n') === (Array.isArray(was) ? was : []).join('\n')) return null;
    return { value: list.length || !f.clears ? list : '' };
  }
  if (now === shownIn(was)) return null;
  if (now === '' && f.clears) return { value: '' };
  if (f.input === 'number') return Number(now) === was ? null : { value: Number(now) };
  return { value: now };
}

/** One field's control, as the field table declares it (GET /api/info `form`). */
function Control({ f, value, set }: { f: FormField; value: string; set: (v: string) => void }) {
  const onInput = (e: Event) => set((e.target as HTMLInputElement).value);
  if (f.values)
    return (
      <select id={`field-${f.key}`} name={f.key} value={value} onChange={onInput} title={f.help}>
        {(f.values.includes(value) ? f.values : [value, ...f.values]).map((t) => (
          <option key={t} value={t}>
            {t.replace(/_/g, ' ')}
          </option>
        ))}
      </select>
    );
  if (f.markdown)
    return (
      <textarea
        id={`field-${f.key}`}
        name={f.key}
        rows={Math.min(30, Math.max(8, value.split('\n').length + 2))}
        value={value}
        onInput={onInput}
        required={!f.clears}
      />
    );
  if (f.input === 'number')
    return (
      <input
        id={`field-${f.key}`}
        name={f.key}
        type="number"
        min={f.minimum ?? undefined}
        max={f.maximum ?? undefined}
        step="any"
        value={value}
        onInput={onInput}
        required={!f.clears}
        title={f.help}
      />
    );
  return (
    <input
      id={`field-${f.key}`}
      name={f.key}
      value={value}
      placeholder={f.help}
      onInput={onInput}
      required={!f.clears}
      title={`${f.help}${f.input === 'strings' ? ' (comma-separated)' : ''}${f.clears ? '; empty clears it' : ''}`}
    />
  );
}

/** The edit form: a control per field the field table marks `ui`, in its order (the server's `form`). */
function Editor({
  r,
  store,
  onDone,
}: {
  r: RecordJson;
  store: string;
  /** `warnings`: what the update said beside saving it (an expiry already past, a likely secret kept) */
  onDone: (changed: boolean, warnings?: string[]) => void;
}) {
  const info = useInfo();
  const form = info.data?.form;
  const was = r as unknown as Record<string, unknown>;
  const [text, setText] = useState<Record<string, string> | null>(null);
  const act = useAction();
  if (!form) return <Loading what="the form" />;
  const values = text ?? Object.fromEntries(form.map((f) => [f.key, shownIn(was[f.key])]));
  const save = async (e: Event) => {
    e.preventDefault();
    const patch: Record<string, unknown> = {};
    for (const f of form) {
      const sent = sentFor(f, values[f.key], was[f.key]);
      if (sent) patch[f.key] = sent.value;
    }
    if (!Object.keys(patch).length) return onDone(false);
    const res = await act.run(() =>
      post<UpdateAnswer>(`memory/${r.id}`, patch, { store: store === 'global' ? 'global' : '' }),
    );
    if (res) onDone(true, res.warnings);
  };
  return (
    <form class="editor" onSubmit={save}>
      <div class="fields">
        {form.map((f) => (
          <div key={f.key} class={f.markdown ? 'field wide' : 'field'}>
            <label htmlFor={`field-${f.key}`}>{f.label}</label>
            <Control f={f} value={values[f.key]} set={(v) => setText({ ...values, [f.key]: v })} />
          </div>
        ))}
      </div>
      <ErrorBox error={act.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={act.busy}>
          {act.busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={() => onDone(false)} disabled={act.busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** A field the table declares whole, as its kind reads (nothing when the memory has none). */
function Shown({ f, value }: { f: ShownField; value: unknown }) {
  if (value === null || value === undefined || value === '') return null;
  const attested = value as { by: string; at: string };
  return (
    <>
      <dt>{f.key}</dt>
      <dd data-field={f.key}>
        {f.kind === 'date' ? (
          <Time iso={String(value)} />
        ) : f.kind === 'attestation' ? (
          <>
            <Time iso={attested.at} /> by {attested.by}
          </>
        ) : (
          String(value)
        )}
      </dd>
    </>
  );
}

export function MemoryPage({ id, route }: { id: string; route: Route }) {
  const info = useInfo();
  const store = route.params.get('store') ?? '';
  const at = route.params.get('at') ?? '';
  const m = useLoad((s) => get<MemoryView>(`memory/${id}`, { store, at }, s), [id, store, at]);
  const [editing, setEditing] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  // what the last change said beside it, one line each, as git mem prints it on stderr
  const [warnings, setWarnings] = useState<string[]>([]);
  const act = useAction();
  useEffect(() => {
    setEditing(false);
    setNote(null);
    setWarnings([]);
  }, [id]);
  const changed = (what: string, warned: string[] = []) => {
    setNote(what);
    setWarnings(warned);
    m.reload();
    info.reload();
  };
  if (m.error) return <ErrorBox error={m.error} />;
  if (!m.data) return <Loading what="the memory" />;
  const d = m.data;
  const r = d.record;
  const past = !!d.at;
  const reanchor = async () => {
    const res = await act.run(() => post<ReanchorAnswer>(`memory/${r.id}/reanchor`));
    if (res)
      changed(
        `Re-anchored where the code is now${res.commit ? ` (${short(res.commit)})` : ''}${res.dropped.length ? `; dropped ${res.dropped.join(', ')}` : ''}.`,
      );
  };
  const verify = async () => {
    const res = await act.run(() =>
      post<UpdateAnswer>(`memory/${r.id}/verify`, {}, { store: d.store === 'global' ? 'global' : '' }),
    );
    if (res)
      changed(
        `Verified: it still holds${res.record.expires ? `; expires again on ${res.record.expires.slice(0, 10)}` : ''}${res.commit ? ` (${short(res.commit)})` : ''}.`,
        res.warnings,
      );
  };
  const setStatus = async (status: string) => {
    const res = await act.run(() =>
      post<UpdateAnswer>(`memory/${r.id}`, { status }, { store: d.store === 'global' ? 'global' : '' }),
    );
    if (res) changed(`Status set to ${status}${res.commit ? ` (${short(res.commit)})` : ''}.`, res.warnings);
  };
  return (
    <article class="page memory" data-id={r.id}>
      <header class="page-head">
        <p class="crumbs">
          <a href="#/memories">Memories</a> / <code title={r.id}>{d.abbrev}</code>
          {r.alias ? <span class="alias">{r.alias}</span> : null}
        </p>
        <h1>{r.title}</h1>
        <p class="badges">
          <Badge kind="type" value={r.type} />
          <Badge kind="status" value={r.status} />
          <ConflictBadge conflict={r.conflict} />
          {d.store === 'global' ? <Badge kind="store" value="personal" /> : null}
          {r.tags.map((t) => (
            <a key={t} class="tag" href={href('memories', { tag: t })}>
              {t}
            </a>
          ))}
        </p>
        {past ? (
          <p class="banner info">
            As it was at <code>{short(d.at!)}</code>. <a href={memoryHref(r.id, d.store)}>See it now</a>
          </p>
        ) : null}
        {!past ? (
          <div class="actions">
            {!editing ? (
              <button type="button" onClick={() => setEditing(true)} data-action="edit">
                Edit
              </button>
            ) : null}
            {d.canReanchor ? (
              <button
                type="button"
                class={r.status === 'stale' ? 'primary' : ''}
                onClick={reanchor}
                disabled={act.busy}
                data-action="reanchor"
                title="The memory still holds: anchor it where its code is now"
              >
                Re-anchor
              </button>
            ) : null}
            <button
              type="button"
              onClick={verify}
              disabled={act.busy}
              data-action="verify"
              title="You checked it: it still holds (records who and when, restarts its expiry)"
            >
              Verify
            </button>
            {r.status === 'archived' ? (
              <button
                type="button"
                onClick={() => setStatus('active')}
                disabled={act.busy}
                data-action="unarchive"
              >
                Restore
              </button>
            ) : (
              <button
                type="button"
                onClick={() => setStatus('archived')}
                disabled={act.busy}
                data-action="archive"
              >
                Archive
              </button>
            )}
            <a
              class="button"
              href={href(`m/${r.id}/history`, { store: d.store === 'global' ? 'global' : undefined })}
            >
              History
            </a>
          </div>
        ) : null}
        <ErrorBox error={act.error} />
        {note ? (
          <p class="banner ok" role="status">
            {note}
          </p>
        ) : null}
        {warnings.map((w) => (
          <p key={w} class="banner warn" role="status">
            {w}
          </p>
        ))}
      </header>
      {r.status === 'stale' ? (
        <section class="banner stale" aria-label="Why it is stale">
          <strong>Stale:</strong> the code it is anchored to changed. Check it against the code below, then
          re-anchor it (it still holds), edit it, or archive it.
          {d.staleReasons.length ? (
            <ul>
              {d.staleReasons.map((s) => (
                <li key={s}>{s}</li>
              ))}
            </ul>
          ) : null}
        </section>
      ) : null}
      {d.conflict ? (
        <p class="banner warn">
          A merge flagged this memory for review. <a href="#/conflicts">Settle it on the Conflicts page</a>.
        </p>
      ) : null}
      {r.status === 'pending' ? (
        <p class="banner warn">
          A proposal waiting for review. <a href="#/review">Approve or reject it on the Review page</a>.
        </p>
      ) : null}
      <div class="cols">
        <div class="main-col">
          {editing ? (
            <Editor
              key={`${r.id}:${r.updated}`}
              r={r}
              store={d.store}
              onDone={(ch, warned) => {
                setEditing(false);
                if (ch) changed('Saved.', warned);
              }}
            />
          ) : (
            <Markdown text={r.body} class="body" />
          )}
          {d.anchors.length ? (
            <section>
              <h2>Anchors</h2>
              <ul class="anchors">
                {d.anchors.map((a) => (
                  <AnchorCard
                    key={`${r.id}-${a.index}-${r.updated}`}
                    a={a}
                    id={r.id}
                    store={d.store}
                    open={a.stale}
                  />
                ))}
              </ul>
            </section>
          ) : null}
        </div>
        <aside class="fields">
          <dl>
            <dt>id</dt>
            <dd>
              <code>{r.id}</code>
            </dd>
            {r.alias ? (
              <>
                <dt>alias</dt>
                <dd>{r.alias}</dd>
              </>
            ) : null}
            {r.scope.length ? (
              <>
                <dt>scope</dt>
                <dd>
                  {r.scope.map((g) => (
                    <code key={g}>{g}</code>
                  ))}
                </dd>
              </>
            ) : null}
            <dt>created</dt>
            <dd>
              <Time iso={r.created} />
            </dd>
            <dt>updated</dt>
            <dd>
              <Time iso={r.updated} />
            </dd>
            {(info.data?.shown ?? []).map((f) => (
              <Shown key={f.key} f={f} value={(r as unknown as Record<string, unknown>)[f.key]} />
            ))}
            <dt>tokens</dt>
            <dd>~{r.tokens}</dd>
          </dl>
          {d.links.length ? (
            <>
              <h3>Links</h3>
              <ul class="links">
                {d.links.map((l) => (
                  <li key={`${l.kind}:${l.id}`}>
                    <span class="muted">{l.kind.replace(/_/g, ' ')}</span>{' '}
                    {l.title ? (
                      <a href={memoryHref(l.id, d.store)}>{l.title}</a>
                    ) : (
                      <code>{short(l.id)} (gone)</code>
                    )}
                    {l.status && l.status !== 'active' ? <Badge kind="status" value={l.status} /> : null}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </aside>
      </div>
    </article>
  );
}
