/**
 * The Open Knowledge Format (OKF v0.2: a folder of markdown files with YAML
 * frontmatter) ⇄ git-mem's export lines (the JSON-line shape of
 * src/commands/bulk.ts: exportRecords writes it, importItems reads it). Pure:
 * no git, no file system; src/cli/export.ts and src/cli/import.ts do the I/O.
 * docs/okf.md has the mapping table; in short:
 *
 * - `type`, `title`, `tags`, the body: as they are. A type that is not ours
 *   becomes `convention` on import, the OKF type kept (`okf.type`) and written
 *   back on export.
 * - `status`: pending→draft, active→stable, stale→draft, superseded and
 *   archived→deprecated; import: draft→pending, stable→active,
 *   deprecated→archived.
 * - `expires` ⇄ `stale_after`; `verified {by, at}` ⇄ `verified` (a list: the
 *   latest entry is ours); `by` (+ `author`, `updated`) ⇄ `generated {by, at}`,
 *   actors per OKF §7 (`human:<email>`, `<agent>/<model>`).
 * - anchors → `sources` entries whose `resource` is `repo:<path>[#L<a>-L<b>]`
 *   (the scheme is ours: OKF leaves a source's URI open), with `symbol`.
 * - everything OKF has no field for (id, alias, scope, confidence, source,
 *   author, created, clock, links, anchors whole, the exact status, the exact
 *   verifier) in one producer extension key, `git_mem`, so an export imports
 *   back field for field. OKF §4.1: consumers preserve unknown keys.
 * - a foreign concept's keys we have no field for (`description`, `resource`,
 *   other sources, `runtime`, …) are kept in the record's `okf` key and
 *   written back at the top level on export.
 */
import { isType } from './record.js';
import { ALIAS_RE, LIMITS } from './schema.js';
import { stringify } from './yaml.js';

export const OKF_VERSION = '0.2';
/** The producer extension key an export writes (and import reads back). */
export const EXT_KEY = 'git_mem';
/** The record key that keeps a foreign concept's OKF keys git-mem has no field for. */
export const FOREIGN_KEY = 'okf';
/** The URI scheme of a code reference in `sources[].resource`: `repo:src/db.ts#L10-L24`. */
export const CODE_SCHEME = 'repo:';
/** The type an OKF concept of a type git-mem does not have becomes. */
export const DEFAULT_TYPE = 'convention';
/** Reserved file names (OKF §3.1): never concepts. */
export const RESERVED = new Set(['index.md', 'log.md']);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** What an export could not put in an OKF field: kept in the `git_mem` extension, counted and said. */
export interface Note {
  kind: string;
  count: number;
  /** what is counted, when not the memories (concepts) themselves: [one, many] */
  unit?: [string, string];
  message: string;
}

/** A note as one line: `okf: 2 memories: …`. */
export function noteLine(n: Note, unit: [string, string]): string {
  const [one, many] = n.unit ?? unit;
  return `okf: ${n.count} ${n.count === 1 ? one : many}: ${n.message}`;
}

/** One file of a bundle: a path relative to the bundle (forward slashes) and its text. */
export interface OkfFile {
  path: string;
  text: string;
}

// ---------------------------------------------------------------- status and actors

const TO_OKF_STATUS: Record<string, string> = {
  pending: 'draft',
  active: 'stable',
  stale: 'draft',
  superseded: 'deprecated',
  archived: 'deprecated',
};
const FROM_OKF_STATUS: Record<string, string> = {
  draft: 'pending',
  stable: 'active',
  deprecated: 'archived',
};

export function okfStatus(status: unknown): string {
  return TO_OKF_STATUS[String(status)] ?? 'stable';
}

/** A person's actor id from a git author (`Name <email>` → the email; else the text). */
function personId(author: unknown): string {
  const s = typeof author === 'string' ? author.trim() : '';
  const m = /<([^<>\s]+)>\s*$/.exec(s);
  return m ? m[1] : s || 'unknown';
}

/** `generated.by` (OKF §7) from a record's `by` and `author`. */
export function generatedActor(by: unknown, author: unknown): string | undefined {
  if (!isObj(by)) return undefined;
  if (by.kind === 'person') return `human:${personId(author)}`;
  if (by.kind !== 'agent') return undefined;
  const agent = String(by.agent ?? 'agent');
  if (by.model) return `${agent}/${by.model}`;
  return agent.includes(':') || agent.includes('/') ? agent : `${agent}/unknown`;
}

/** A record's `by` (and `author` for a person) from an OKF actor. */
export function fromActor(actor: string): { by: Obj; author?: string } {
  if (actor.startsWith('human:')) return { by: { kind: 'person' }, author: actor.slice(6) || undefined };
  const slash = actor.lastIndexOf('/');
  if (slash > 0 && !actor.includes(':'))
    return { by: { kind: 'agent', agent: actor.slice(0, slash), model: actor.slice(slash + 1) } };
  return { by: { kind: 'agent', agent: actor } };
}

/** A verifier (`git mem verify`: `Name <email>` or an agent's name) as an OKF actor. */
export function verifierActor(by: string): string {
  if (/<[^<>\s]+>\s*$/.test(by)) return `human:${personId(by)}`;
  if (by.startsWith('human:') || by.includes(':') || by.includes('/')) return by;
  return `${by}/unknown`;
}

// ---------------------------------------------------------------- code references

/** An anchor's `sources` resource: `repo:<path>` with `#L<a>-L<b>` for a line range. */
export function codeRef(a: { path: string; lines?: unknown }): string {
  const l = Array.isArray(a.lines) && a.lines.length === 2 ? `#L${a.lines[0]}-L${a.lines[1]}` : '';
  return `${CODE_SCHEME}${a.path}${l}`;
}

/** A code reference read back: path and lines, or undefined when the resource is not one. */
export function parseCodeRef(resource: unknown): { path: string; lines?: [number, number] } | undefined {
  if (typeof resource !== 'string' || !resource.startsWith(CODE_SCHEME)) return undefined;
  const m = /^([^#]+?)(?:#L([1-9]\d{0,8})(?:-L([1-9]\d{0,8}))?)?$/.exec(resource.slice(CODE_SCHEME.length));
  if (!m) return undefined;
  if (!m[2]) return { path: m[1] };
  const a = Number(m[2]);
  const b = m[3] ? Number(m[3]) : a;
  return b >= a ? { path: m[1], lines: [a, b] } : undefined;
}

// ---------------------------------------------------------------- export

/** The keys of an export line OKF holds in fields of its own (the rest goes to the extension). */
const LINE_IN_OKF = new Set(['type', 'title', 'tags', 'body', 'expires', FOREIGN_KEY]);
/** The keys of an export line written into the extension, in this order. */
const EXT_FIELDS = [
  'id',
  'alias',
  'status',
  'scope',
  'confidence',
  'source',
  'author',
  'by',
  'created',
  'updated',
  'clock',
  'verified',
  'links',
  'anchors',
];

/** Where a memory's concept goes in the bundle: `<type>/<alias or id>.md`. */
export function conceptPath(line: Obj): string {
  const alias = typeof line.alias === 'string' ? line.alias : '';
  const last = alias.split('/').pop() ?? '';
  const name = alias && ALIAS_RE.test(alias) && last !== 'index' && last !== 'log' ? alias : String(line.id);
  return `${line.type}/${name}.md`;
}

/** The OKF frontmatter of one export line, and what of it OKF holds only in the extension. */
export function toConcept(line: Obj): { frontmatter: Obj; body: string; kept: string[] } {
  const foreign = isObj(line[FOREIGN_KEY]) ? { ...(line[FOREIGN_KEY] as Obj) } : {};
  const kept: string[] = [];
  const fm: Obj = {};
  fm.type = line.type === DEFAULT_TYPE && typeof foreign.type === 'string' ? foreign.type : line.type;
  delete foreign.type;
  fm.title = line.title;
  for (const k of ['description', 'resource'])
    if (foreign[k] !== undefined) {
      fm[k] = foreign[k];
      delete foreign[k];
    }
  fm.tags = Array.isArray(line.tags) ? line.tags : [];
  fm.status = okfStatus(line.status);
  if (line.status === 'stale' || line.status === 'archived') kept.push('status');
  const actor = generatedActor(line.by, line.author);
  if (actor) fm.generated = { by: actor, at: line.updated };
  else kept.push('generated');
  const earlier = Array.isArray(foreign.verified) ? (foreign.verified as unknown[]).filter(isObj) : [];
  delete foreign.verified;
  if (isObj(line.verified)) {
    const v = line.verified as { by: string; at: string };
    const by = verifierActor(String(v.by));
    if (by !== v.by) kept.push('verifier');
    const own = { by, at: v.at };
    const list = earlier.some((e) => e.at === v.at && e.by === by) ? earlier : [...earlier, own];
    fm.verified = list.length === 1 ? list[0] : list;
  } else if (earlier.length) fm.verified = earlier;
  if (line.expires) fm.stale_after = line.expires;
  const anchors = Array.isArray(line.anchors) ? (line.anchors as Obj[]) : [];
  const sources: Obj[] = anchors.map((a, i) => {
    const s: Obj = { id: `anchor-${i + 1}`, resource: codeRef(a as { path: string }) };
    s.title = typeof a.symbol === 'string' ? a.symbol : a.path;
    if (typeof a.symbol === 'string') s.symbol = a.symbol;
    if (typeof a.commit === 'string') s.commit = a.commit;
    return s;
  });
  if (anchors.length) kept.push('anchors');
  if (Array.isArray(foreign.sources)) sources.push(...(foreign.sources as Obj[]));
  delete foreign.sources;
  if (sources.length) fm.sources = sources;
  // the foreign concept's other keys, as it had them
  for (const [k, v] of Object.entries(foreign)) if (!(k in fm) && k !== EXT_KEY) fm[k] = v;
  const links = line.links as Obj | undefined;
  if (isObj(links) && Object.values(links).some((v) => Array.isArray(v) && v.length)) kept.push('links');
  if (Array.isArray(line.scope) && line.scope.length) kept.push('scope');
  const ext: Obj = {};
  for (const k of EXT_FIELDS) if (line[k] !== undefined) ext[k] = line[k];
  const extra: Obj = {};
  for (const [k, v] of Object.entries(line)) if (!LINE_IN_OKF.has(k) && !EXT_FIELDS.includes(k)) extra[k] = v;
  // an `okf` key that is no mapping is not a foreign concept's keys: kept like any unknown key
  if (line[FOREIGN_KEY] !== undefined && !isObj(line[FOREIGN_KEY])) extra[FOREIGN_KEY] = line[FOREIGN_KEY];
  if (Object.keys(extra).length) ext.extra = extra;
  fm[EXT_KEY] = ext;
  return { frontmatter: fm, body: String(line.body ?? ''), kept };
}

/** What each kind of note says (an export keeps each in the extension, never drops it). */
const NOTE_TEXT: Record<string, string> = {
  anchors:
    'anchors: their line hashes, text, context and check verdicts have no OKF field (sources hold path, lines, symbol, commit); kept in the git_mem extension',
  status:
    'status stale or archived: OKF has draft/stable/deprecated only; the exact status kept in the git_mem extension',
  verifier:
    'verifier names: an OKF actor holds the email only (human:<email>); the name kept in the git_mem extension',
  generated: 'no author kind (records older than `by`): OKF `generated` needs an actor, none written',
  links: 'links: OKF links are markdown links in a body; ours kept in the git_mem extension',
  scope: 'scope globs: no OKF field; kept in the git_mem extension',
};

/** A concept file's text: frontmatter, a blank line, the body. */
export function conceptText(frontmatter: Obj, body: string): string {
  return `---\n${stringify(frontmatter, { lineWidth: 0 })}---\n\n${body}`;
}

const linkText = (s: string) => s.replace(/[\\[\]]/g, '\\$&').replace(/\s+/g, ' ');

/**
 * A whole bundle from export lines: one concept per memory under `<type>/`, a root
 * `index.md` (okf_version, a section per type), and the notes of what OKF holds only
 * in the extension.
 */
export function toBundle(lines: readonly Obj[]): { files: OkfFile[]; notes: Note[] } {
  const files: OkfFile[] = [];
  const counts = new Map<string, number>();
  const taken = new Set<string>();
  const byType = new Map<string, Array<{ path: string; title: string }>>();
  for (const line of lines) {
    let path = conceptPath(line);
    if (taken.has(path.toLowerCase())) path = `${line.type}/${line.id}.md`;
    taken.add(path.toLowerCase());
    const { frontmatter, body, kept } = toConcept(line);
    for (const k of kept) counts.set(k, (counts.get(k) ?? 0) + 1);
    files.push({ path, text: conceptText(frontmatter, body) });
    const t = String(line.type);
    byType.set(t, [...(byType.get(t) ?? []), { path, title: String(line.title) }]);
  }
  let index = `---\nokf_version: "${OKF_VERSION}"\n---\n`;
  for (const [type, entries] of [...byType].sort(([a], [b]) => a.localeCompare(b))) {
    index += `\n# ${type}\n\n`;
    for (const e of entries) index += `* [${linkText(e.title)}](${e.path})\n`;
  }
  files.push({ path: 'index.md', text: index });
  const notes = [...counts].map(([kind, count]) => ({ kind, count, message: NOTE_TEXT[kind] ?? kind }));
  return { files, notes };
}

// ---------------------------------------------------------------- import

/** A concept read from a bundle, mapped to an export line, with what the mapping noted. */
export interface ReadConcept {
  line: Obj;
  /** `repo:` sources of a foreign concept: anchors if they resolve in the committed tree (the caller checks) */
  code: Array<{ path: string; lines?: [number, number]; symbol?: string; source: Obj }>;
  /** an OKF type that is not ours (mapped to DEFAULT_TYPE) */
  foreignType?: string;
  /** the concept carried the git_mem extension (an export of ours) */
  ours: boolean;
}

/** Latest `at` of an OKF `verified` (a list, or a bare mapping: §5.2), as {by, at}. */
function latestVerified(v: unknown): { by: string; at: string } | undefined {
  const list = (Array.isArray(v) ? v : [v]).filter(
    (e): e is Obj => isObj(e) && typeof e.by === 'string' && typeof e.at === 'string',
  );
  let best: { by: string; at: string } | undefined;
  for (const e of list)
    if (!best || Date.parse(String(e.at)) > Date.parse(best.at))
      best = { by: String(e.by), at: String(e.at) };
  return best;
}

/** An OKF date (a string, or a YAML timestamp a library made a Date of) as text. */
function dateText(v: unknown): string | undefined {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v.toISOString();
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

/** A tag as git-mem keeps them: one lowercase word (spaces become dashes). */
const tagOf = (t: unknown) => String(t).trim().toLowerCase().replace(/\s+/g, '-');

/** A concept id (its path without `.md`) as an alias under `okf/<bundle>/`, or undefined when none fits. */
export function conceptAlias(bundle: string, conceptId: string): string | undefined {
  const seg = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+/, '');
  const parts = ['okf', seg(bundle), ...conceptId.split('/').map(seg)];
  const alias = parts.join('/');
  return parts.every(Boolean) && ALIAS_RE.test(alias) && alias.length <= LIMITS.aliasChars
    ? alias
    : undefined;
}

/** Title from a file name when a concept has none (OKF §4.1 allows it): `gross-margin` → `gross margin`. */
function titleFromPath(path: string): string {
  const base = path.split('/').pop()!.replace(/\.md$/i, '');
  return base.replace(/[-_]+/g, ' ').trim() || base;
}

/**
 * One concept (its bundle path, frontmatter and body) as an export line. A concept
 * with the git_mem extension is read back field for field (OKF fields a third tool
 * changed since win: a later `verified`, another `status`); a foreign one is mapped
 * per docs/okf.md, its keys without a field kept under `okf`.
 */
export function fromConcept(path: string, fm: Obj, rawBody: string, bundle: string): ReadConcept {
  const body = rawBody.startsWith('\n') ? rawBody.slice(1) : rawBody;
  const type = String(fm.type).trim();
  const foreign: Obj = {};
  const ext = isObj(fm[EXT_KEY]) ? (fm[EXT_KEY] as Obj) : undefined;
  const line: Obj = {};
  const code: ReadConcept['code'] = [];
  let foreignType: string | undefined;
  if (isType(type)) line.type = type;
  else {
    line.type = DEFAULT_TYPE;
    foreign.type = type;
    foreignType = type;
  }
  line.title = typeof fm.title === 'string' && fm.title.trim() ? fm.title : titleFromPath(path);
  line.body = body;
  if (Array.isArray(fm.tags)) line.tags = fm.tags.filter((t) => typeof t === 'string').map(tagOf);
  else if (typeof fm.tags === 'string') line.tags = fm.tags.split(',').map(tagOf);
  const stale = dateText(fm.stale_after);
  if (stale) line.expires = stale;
  const okfStat = typeof fm.status === 'string' ? fm.status : undefined;
  const verified = latestVerified(fm.verified);
  const verifiedList = Array.isArray(fm.verified) ? fm.verified.filter(isObj) : [];
  if (ext) {
    for (const k of EXT_FIELDS) if (ext[k] !== undefined) line[k] = ext[k];
    if (isObj(ext.extra)) for (const [k, v] of Object.entries(ext.extra)) if (!(k in line)) line[k] = v;
    // a third tool's edits of the OKF fields win over what the extension remembers
    if (okfStat && okfStat !== okfStatus(ext.status) && FROM_OKF_STATUS[okfStat])
      line.status = FROM_OKF_STATUS[okfStat];
    const mine = isObj(ext.verified) ? (ext.verified as { at?: string }) : undefined;
    if (verified && (!mine || Date.parse(verified.at) > Date.parse(String(mine.at))))
      line.verified = verified;
  } else {
    if (okfStat) line.status = FROM_OKF_STATUS[okfStat] ?? 'active';
    if (okfStat && !FROM_OKF_STATUS[okfStat]) foreign.status = okfStat;
    const alias = conceptAlias(bundle, path.replace(/\.md$/i, ''));
    if (alias) line.alias = alias;
    const g = fm.generated;
    if (isObj(g) && typeof g.by === 'string' && g.by.trim()) {
      const { by, author } = fromActor(g.by.trim());
      line.by = by;
      if (author) line.author = author;
      const at = dateText(g.at);
      if (at) {
        line.created = at;
        line.updated = at;
      }
    } else if (g !== undefined) foreign.generated = g;
    if (verified) line.verified = verified;
  }
  if (verifiedList.length > 1) foreign.verified = verifiedList;
  // sources: ours (repo:) are anchors, the others kept as they are
  const others: Obj[] = [];
  for (const s of Array.isArray(fm.sources) ? fm.sources : []) {
    const ref = isObj(s) ? parseCodeRef(s.resource) : undefined;
    if (!ref) others.push(s as Obj);
    else if (!ext)
      code.push({ ...ref, ...(typeof s.symbol === 'string' ? { symbol: s.symbol } : {}), source: s as Obj });
  }
  if (others.length) foreign.sources = others;
  const mapped = new Set([
    'type',
    'title',
    'tags',
    'status',
    'verified',
    'stale_after',
    'sources',
    'generated',
    EXT_KEY,
  ]);
  for (const [k, v] of Object.entries(fm)) if (!mapped.has(k)) foreign[k] = v;
  // in one order whatever order the file had: a bundle re-imported from its own export is unchanged
  if (Object.keys(foreign).length)
    line[FOREIGN_KEY] = Object.fromEntries(Object.entries(foreign).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { line, code, foreignType, ours: !!ext };
}
