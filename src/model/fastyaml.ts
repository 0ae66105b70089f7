/**
 * A fast path for the frontmatter git-mem itself writes. The yaml library is
 * correct but costs ~80 µs a record each way, which dominates importing 100k
 * records or building a catalog from scratch. Our own records use a tiny
 * subset of YAML: `key: scalar` and `key: [flow, list]` lines, with strings
 * either plain (only when unambiguous) or JSON-quoted (JSON strings are valid
 * YAML double-quoted scalars). Anything outside that subset — nested maps,
 * anchors, multi-line values, comments — makes the fast parser return
 * undefined and the caller falls back to the full yaml library, so the fast
 * path can never read a document differently from it.
 */

const PLAIN_SAFE = /^[A-Za-z_/][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+()-]+)*$/;
const SPECIAL = /^(?:true|false|yes|no|on|off|null|~|y|n|\.nan|\.inf|[-+]?\.inf)$/i;
const NUMBER = /^[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$|^0x[0-9a-fA-F]+$|^0o[0-7]+$/;

/** A string as a YAML scalar: plain when that cannot be misread, else JSON-quoted. */
export function scalar(s: string, inFlow = false): string {
  if (
    s.length > 0 &&
    s.length < 200 &&
    PLAIN_SAFE.test(s) &&
    !SPECIAL.test(s) &&
    !NUMBER.test(s) &&
    !(inFlow && /[,[\]{}]/.test(s))
  ) {
    return s;
  }
  return JSON.stringify(s);
}

export function flowList(xs: readonly string[]): string {
  return `[${xs.map((x) => scalar(x, true)).join(', ')}]`;
}

/** Is this value expressible on one line by the fast writer? */
export function isSimple(v: unknown): boolean {
  if (typeof v === 'string')
    return !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u2028\u2029\ufeff]/.test(v);
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v === 'boolean') return true;
  if (Array.isArray(v)) return v.every((x) => typeof x === 'string' && isSimple(x));
  return false;
}

export function simpleLine(key: string, v: unknown): string {
  if (typeof v === 'string') return `${key}: ${scalar(v)}`;
  if (Array.isArray(v)) return `${key}: ${flowList(v as string[])}`;
  return `${key}: ${String(v)}`;
}

function parseScalar(raw: string): { ok: true; value: unknown } | { ok: false } {
  const s = raw.trim();
  if (s.startsWith('"')) {
    try {
      const v = JSON.parse(s);
      return typeof v === 'string' ? { ok: true, value: v } : { ok: false };
    } catch {
      return { ok: false };
    }
  }
  if (NUMBER.test(s) && /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/.test(s)) return { ok: true, value: Number(s) };
  if (s === 'true' || s === 'false') return { ok: true, value: s === 'true' };
  if (PLAIN_SAFE.test(s) && !SPECIAL.test(s) && !NUMBER.test(s)) return { ok: true, value: s };
  return { ok: false };
}

function parseFlow(raw: string): unknown[] | undefined {
  const s = raw.trim();
  if (!s.startsWith('[') || !s.endsWith(']')) return undefined;
  const inner = s.slice(1, -1).trim();
  if (!inner) return [];
  const out: unknown[] = [];
  let i = 0;
  while (i < inner.length) {
    let item: string;
    if (inner[i] === '"') {
      let j = i + 1;
      while (j < inner.length && inner[j] !== '"') j += inner[j] === '\\' ? 2 : 1;
      if (j >= inner.length) return undefined;
      item = inner.slice(i, j + 1);
      i = j + 1;
    } else {
      const j = inner.indexOf(',', i);
      item = j < 0 ? inner.slice(i) : inner.slice(i, j);
      i = j < 0 ? inner.length : j;
      if (/[[\]{}]/.test(item)) return undefined;
    }
    const p = parseScalar(item);
    if (!p.ok || typeof p.value !== 'string') return undefined;
    out.push(p.value);
    while (i < inner.length && inner[i] === ' ') i++;
    if (i < inner.length) {
      if (inner[i] !== ',') return undefined;
      i++;
      while (i < inner.length && inner[i] === ' ') i++;
      if (i >= inner.length) return undefined;
    }
  }
  return out;
}

/** Parses the fast subset; undefined means "use the full YAML parser". */
export function parseSimpleYaml(text: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const line of text.split('\n')) {
    if (line === '' || line === '\r') continue;
    const m = /^([a-z_][a-z0-9_]*): (.+)$/.exec(line);
    if (!m || m[1] in out) return undefined;
    const v = m[2];
    if (v.startsWith('[')) {
      const list = parseFlow(v);
      if (!list) return undefined;
      out[m[1]] = list;
    } else {
      if (
        v.startsWith('{') ||
        v.startsWith('&') ||
        v.startsWith('*') ||
        v.startsWith('!') ||
        v.startsWith('|') ||
        v.startsWith('>') ||
        v.startsWith("'")
      )
        return undefined;
      if (/ #/.test(v) && !v.startsWith('"')) return undefined;
      const p = parseScalar(v);
      if (!p.ok) return undefined;
      out[m[1]] = p.value;
    }
  }
  return out;
}
