/**
 * The secret scanner's second pass: assignments of a value to a name that says "secret"
 * (KEY=value, export KEY="value", key: value, "key": "value", dbPassword := "…", the password is …).
 * Pure.
 */
import { isCode, secretName, valueLooksSecret } from './secret-words.js';

/** Where a name that may say "secret" occurs: the scan looks at the name around it and the value after it. */
const NAME_HINT =
  /[Pp](?:ass|ASS|[wW])|P(?:ASS|W)|[Ss](?:ecret|ECRET)|[Tt](?:oken|OKEN)|[Kk](?:ey|EY)|[Cc](?:red|RED)/g;

function isNameChar(c: number): boolean {
  return (
    (c >= 48 && c <= 57) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    c === 95 ||
    c === 46 ||
    c === 36 ||
    c === 45
  );
}

/**
 * The operator after a name: = := => : ?= ||= +=, or in a note's prose `is`, `was`, `to` (the
 * staging password is …, changed the token to …); a `, ` between a quoted name and a quoted value.
 */
const OPERATOR =
  /^[ \t]*(?:::?=|=>|\?\?=|\|\|=|\?=|\+=|=(?![=~])|:(?![:/\\]))[ \t]*|^[ \t]+(?:is|was|to)(?:[ \t]+now)?[ \t]+(?=\S)/;

interface Assigned {
  value: string;
  start: number;
  quoted: boolean;
  /** Said in prose (`the password is …`): the value must hold a digit as well as a letter. */
  prose?: boolean;
}

/** The literal value assigned at `at` (just past a name that starts at `from`), or null (code, nothing). */
function valueAt(text: string, at: number, from: number, depth = 0): Assigned | null {
  const quotedName = from > 0 && /["'`]/.test(text[from - 1]);
  // <password>…</password>
  if (text[from - 1] === '<' && text[at] === '>') {
    const m = /^>([^<\s]{4,200})<\//.exec(text.slice(at, at + 210));
    return m ? { value: m[1], start: at + 1, quoted: true } : null;
  }
  let i = at;
  if (text[i] === '\\' && (text[i + 1] === '"' || text[i + 1] === "'")) i += 2;
  else if (text[i] === '"' || text[i] === "'" || text[i] === '`') i++;
  if (text[i] === ']') i++;
  const rest = text.slice(i, i + 400);
  let op = OPERATOR.exec(rest);
  // Kubernetes and CI env lists (- name: DB_PASSWORD, then value: …) and PowerShell (-Name x -Value …)
  if (!op && /name:[ \t]*["']?$/.test(text.slice(Math.max(0, from - 8), from)))
    op = /^[ \t]*\r?\n[ \t]*value:[ \t]*/.exec(rest);
  if (!op && /-Name\s+["']?$/i.test(text.slice(Math.max(0, from - 8), from)))
    op = /^\s+-Value\s+/i.exec(rest);
  // define('DB_PASSWORD', '…'), setdefault("KEY", "…"): a call's first two arguments, not a list's items
  if (!op && quotedName && /\(\s*$/.test(text.slice(Math.max(0, from - 12), from - 1)))
    op = /^[ \t]*,[ \t]*(?=@?\\?["'])/.exec(rest);
  if (!op) return null;
  i += op[0].length;
  let q = '';
  if (/^[@rbuf]?\\["']/.test(text.slice(i, i + 3))) {
    i += text[i] === '\\' ? 0 : 1;
    q = text.slice(i, i + 2);
  } else if (/^[@rbuf]?["'`]/.test(text.slice(i, i + 2))) {
    if (!/["'`]/.test(text[i])) i++;
    q = text[i];
  }
  if (q) {
    const from = i + q.length;
    const stop = Math.min(text.length, from + 400); // a value is not longer: keeps hostile text linear
    let j = from;
    for (; j < stop && text[j] !== '\n'; j++) {
      if (text.startsWith(q, j)) break;
      if (q.length === 1 && text[j] === '\\') j++;
    }
    if (!text.startsWith(q, j)) return null;
    return { value: text.slice(from, j), start: from, quoted: true };
  }
  const m = /^[^\s"'`,;]+/.exec(text.slice(i, i + 400));
  if (!m) return null;
  const value = m[0];
  if (isCode(value) || value.length < 6) {
    // a type before the value: `let token: &str = "…"`, `apiKey: string = '…'`
    const typed =
      depth === 0 && op[0].includes(':')
        ? /^[^=\n;]{0,60}?(?=[^=!<>:]=(?![=>]))./.exec(text.slice(i, i + 80))
        : null;
    return typed ? valueAt(text, i + typed[0].length, i, 1) : null;
  }
  return { value, start: i, quoted: false, prose: /^[ \t]+[a-z]/.test(op[0]) };
}

/** Secret-named assignments: KEY=value, export KEY="value", key: value, "key": "value", dbPassword := "…". */
export function scanAssignments(
  text: string,
  found: Array<{ kind: string; at: number; start: number; end: number }>,
) {
  NAME_HINT.lastIndex = 0;
  for (let m = NAME_HINT.exec(text); m; m = NAME_HINT.exec(text)) {
    let s = m.index;
    let e = m.index + m[0].length;
    while (s > 0 && m.index - s < 100 && isNameChar(text.charCodeAt(s - 1))) s--;
    while (e < text.length && isNameChar(text.charCodeAt(e))) e++;
    NAME_HINT.lastIndex = e;
    if (e - s > 120) continue; // not a name: a run of letters (base64, a minified line)
    while (e > s && (text[e - 1] === '.' || text[e - 1] === '-')) e--; // `password.` ends a sentence
    const kind = secretName(text.slice(s, e));
    if (!kind) continue;
    const v = valueAt(text, e, s);
    if (!v || !valueLooksSecret(v.value, kind)) continue;
    if (v.prose && !(/\d/.test(v.value) && /[A-Za-z]/.test(v.value))) continue;
    const value = v.quoted ? v.value : v.value.replace(/[)\]}>.!?:,;]+$/, '') || v.value;
    found.push({ kind: 'password or token assignment', at: s, start: v.start, end: v.start + value.length });
    NAME_HINT.lastIndex = Math.max(e, v.start + value.length); // a value holds no further assignment
  }
}
