/**
 * Secret scanning for every text headed for refs/memory (which is pushed to
 * shared remotes). `scanSecrets` finds likely secrets in one text; `scanRecord`
 * walks every field of a record (tags, scope, alias, anchors, unknown keys and
 * their names included). Two policies on top: human input is refused
 * (`assertRecordClean`), agent text is redacted (`redactText`, `redactRecord`).
 */
import { err } from '../errors.js';

export interface SecretFinding {
  kind: string;
  line: number;
  column: number;
  /** The match with most of it masked, for messages. */
  preview: string;
  /** The secret part of the match (what redaction replaces), as offsets into the text. */
  start: number;
  end: number;
}

/** What redaction leaves in place of a secret. */
export const REDACTED = '[REDACTED]';

interface Rule {
  kind: string;
  re: RegExp;
  /** The capture group holding the secret (the whole match when absent). */
  group?: number;
  /** Further test of the secret (placeholders, entropy); the match counts only when true. */
  check?: (value: string) => boolean;
  /** Cheap pre-check: the full pattern runs only on texts where it occurs. */
  hint?: RegExp;
}

/** Words people put where a secret goes in examples and docs. */
const PLACEHOLDER_WORDS = new Set([
  'changeme',
  'change-me',
  'example',
  'placeholder',
  'redacted',
  'dummy',
  'secret',
  'secrets',
  'password',
  'passwd',
  'pass',
  'pwd',
  'token',
  'apikey',
  'api_key',
  'api-key',
  'test',
  'none',
  'null',
  'nil',
  'undefined',
  'true',
  'false',
  'hidden',
  'masked',
  'user',
  'username',
  'admin:admin',
]);

/** A value that stands for a secret rather than being one: `${TOKEN}`, `<password>`, `****`, `your-key-here`. */
function isPlaceholder(v: string): boolean {
  const s = v.replace(/^["'`]|["'`]$/g, '');
  if (!s) return true;
  if (/^[<{$%[(]/.test(s)) return true; // ${VAR}, $VAR, <token>, {{ x }}, %VAR%, [REDACTED]
  if (/^(?:x+|\*+|\.+|…+|#+|-+|_+|0+)$/i.test(s)) return true;
  if (PLACEHOLDER_WORDS.has(s.toLowerCase())) return true;
  if (/^(?:your|my|some|the)[-_]|example|placeholder|changeme|redacted|dummy|xxxx/i.test(s)) return true;
  return false;
}

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** The value of a secret-named assignment looks like a real secret (not a word, a path or code). */
function assignedValueLooksSecret(raw: string): boolean {
  // the sentence's closing bracket or full stop is not part of the value: `(id-token: write)`
  const v = raw.replace(/[)\]}>.!?:]+$/, '');
  if (v.length < 6 || isPlaceholder(v)) return false;
  if (/^(?:\/|\.\.?\/|~\/)|:\/\//.test(v)) return false; // a path, or a URL (credentials in URLs have their rule)
  // process.env.API_KEY, settings.token (code, not a value; a token with a suffix like .md has digits)
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v) && !/\d/.test(v)) return false;
  if (/^[\w$.]+\(/.test(v)) return false; // getToken(…)
  if (/^\d+$/.test(v) || !/[A-Za-z]/.test(v)) return false;
  const h = entropy(v);
  if (/[\d\W_]/.test(v) && h >= 2.5) return true;
  // letters only: a passphrase of words (correcthorsebatterystaple, 3.4 bits a letter) is a secret
  // where the name says so; a repeated word (passwordpassword, 2.8) reads as a placeholder
  return v.length >= 16 && h >= 3;
}

/** A password in a URL or after -u: anything that is not a placeholder or a plain number (uid:gid). */
function passwordLooksReal(v: string): boolean {
  return !isPlaceholder(v) && !/^\d+$/.test(v);
}

function tokenLooksReal(v: string): boolean {
  return !isPlaceholder(v) && entropy(v) >= 3 && (/\d/.test(v) || v.length >= 20);
}

/** Names that say their value is a secret: DB_PASS, API_KEY, client-secret, private_key, … */
const SECRET_NAME =
  '(?:[A-Za-z0-9]+[_.-])*(?:pass|passwd|password|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|secret[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|session[_-]?key|client[_-]?secret|auth[_-]?token|credentials?)(?:[_.-][A-Za-z0-9]+)*';

const RULES: Rule[] = [
  {
    kind: 'private key block',
    // the whole block, so redaction removes the key and not only its header
    re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    hint: /PRIVATE KEY/,
  },
  { kind: 'AWS access key id', re: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  {
    kind: 'AWS secret access key',
    re: /\baws_?secret_?access_?key\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    group: 1,
    hint: /secret/i,
  },
  { kind: 'Google API key', re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: 'Google OAuth client secret', re: /\bGOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])/g },
  { kind: 'GitHub token', re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { kind: 'GitLab token', re: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { kind: 'Slack token', re: /\b(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}/g },
  {
    kind: 'Slack webhook',
    re: /https:\/\/hooks\.slack\.com\/services\/T[A-Za-z0-9_]+\/B[A-Za-z0-9_]+\/[A-Za-z0-9_]+/g,
  },
  {
    kind: 'Discord webhook',
    re: /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]{30,}/g,
  },
  { kind: 'Stripe secret key', re: /\b[rs]k_live_[0-9A-Za-z]{20,}\b/g },
  { kind: 'OpenAI or Anthropic API key', re: /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}/g },
  { kind: 'npm token', re: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: 'PyPI token', re: /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/g },
  { kind: 'SendGrid API key', re: /\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  { kind: 'Twilio API key', re: /\bSK[0-9a-f]{32}\b/g },
  { kind: 'Hugging Face token', re: /\bhf_[A-Za-z0-9]{34,}\b/g },
  { kind: 'DigitalOcean token', re: /\bdo[por]_v1_[a-f0-9]{64}\b/g },
  { kind: 'Shopify token', re: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g },
  { kind: 'Mailgun API key', re: /\bkey-[0-9a-zA-Z]{32}\b/g },
  { kind: 'Postman API key', re: /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g },
  { kind: 'Vault token', re: /\bhvs\.[A-Za-z0-9_-]{24,}/g },
  { kind: 'Databricks token', re: /\bdapi[a-f0-9]{32}\b/g },
  { kind: 'Linear API key', re: /\blin_api_[A-Za-z0-9]{40}\b/g },
  { kind: 'age secret key', re: /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g },
  { kind: 'Telegram bot token', re: /\b\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g },
  {
    kind: 'Azure storage account key',
    re: /\bAccountKey=([A-Za-z0-9+/]{86}==)/g,
    group: 1,
    hint: /AccountKey/,
  },
  {
    kind: 'JSON Web Token',
    re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    hint: /eyJ/,
  },
  {
    kind: 'credentials in a URL',
    // scheme://user:password@host: the password (greedy up to the last @, as sloppy URLs hold raw @s)
    re: /\b[a-z][a-z0-9+.-]{1,30}:\/\/[^\s:/?#@'"`<>]*:([^\s/?#'"`<>]+)@(?=[^\s@/'"`<>]*[A-Za-z0-9])/gi,
    group: 1,
    check: passwordLooksReal,
    hint: /:\/\/[^\s]*@/,
  },
  {
    kind: 'credentials on a command line',
    // curl -u user:password, --user=user:password, --proxy-user …
    re: /(?:^|[\s;|&(])(?:-u|--user|--proxy-user)(?:\s+|=)["']?[^\s:"']+:([^\s"']+)/g,
    group: 1,
    check: passwordLooksReal,
    hint: /-u|--user|--proxy-user/,
  },
  {
    kind: 'password on a command line',
    re: /(?:^|[\s;|&(])--(?:password|pass|passwd|token|api-key)(?:\s+|=)["']?([^\s"']+)/gi,
    group: 1,
    check: passwordLooksReal,
    hint: /--(?:pass|token|api)/i,
  },
  {
    kind: 'bearer token',
    re: /\bBearer\s+([A-Za-z0-9\-._~+/]{12,}=*)/g,
    group: 1,
    check: tokenLooksReal,
    hint: /Bearer/,
  },
  {
    kind: 'basic auth header',
    re: /\bAuthorization\s*:\s*Basic\s+([A-Za-z0-9+/]{8,}={0,2})/gi,
    group: 1,
    check: (v) => !isPlaceholder(v),
    hint: /Basic/i,
  },
  {
    kind: 'password or token assignment',
    // KEY=value, export KEY=value, key: value, "key": "value" where the name says secret
    re: new RegExp(`(?<![A-Za-z0-9])${SECRET_NAME}["']?\\s*(?::=|=|:)\\s*["']?([^\\s"'\`,;]+)`, 'gi'),
    group: 1,
    check: assignedValueLooksSecret,
    hint: /pass|pwd|secret|token|key|cred/i,
  },
];

function position(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = text.indexOf('\n'); i >= 0 && i < index; i = text.indexOf('\n', i + 1)) {
    line++;
    last = i;
  }
  return { line, column: index - last };
}

function mask(s: string): string {
  if (s.length <= 8) return '****';
  return `${s.slice(0, 4)}…${'*'.repeat(4)}`;
}

/** Likely secrets in one text, in text order. */
export function scanSecrets(text: string): SecretFinding[] {
  const out: SecretFinding[] = [];
  if (!text) return out;
  for (const rule of RULES) {
    if (rule.hint && !rule.hint.test(text)) continue;
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m; m = rule.re.exec(text)) {
      if (m[0] === '') {
        rule.re.lastIndex++;
        continue;
      }
      const value = rule.group ? (m[rule.group] ?? '') : m[0];
      if (rule.check && !rule.check(value)) continue;
      const start = rule.group ? m.index + m[0].lastIndexOf(value) : m.index;
      const { line, column } = position(text, m.index);
      out.push({ kind: rule.kind, line, column, preview: mask(m[0]), start, end: start + value.length });
    }
  }
  return out.sort((a, b) => a.start - b.start || b.end - a.end);
}

/**
 * The text with every likely secret replaced by [REDACTED], the rest kept
 * (`postgres://admin:[REDACTED]@db`). Agent text is redacted, never refused.
 */
export function redactText(text: string): string {
  let out = text;
  for (let pass = 0; pass < 3; pass++) {
    const findings = scanSecrets(out);
    if (!findings.length) return out;
    let next = '';
    let at = 0;
    for (const f of findings) {
      if (f.end <= at) continue; // inside a span already replaced
      next += out.slice(at, Math.max(at, f.start)) + REDACTED;
      at = f.end;
    }
    out = next + out.slice(at);
  }
  // still flagged after three passes (pathological input): withhold the lines
  const lines = new Set(scanSecrets(out).map((f) => f.line));
  return out
    .split('\n')
    .map((l, i) => (lines.has(i + 1) ? REDACTED : l))
    .join('\n');
}

// ------------------------------------------------------------------ records

export interface RecordFinding extends SecretFinding {
  /** The field as the user wrote it: title, body, tags, anchors[0].path, an unknown key… */
  field: string;
  /** The secret is in a field's name, not its value. */
  inKey?: boolean;
}

const TOP_LEVEL_OBJECTS = new Set(['extra']);

function walk(
  value: unknown,
  field: string,
  visit: (text: string, field: string, inKey: boolean) => void,
  depth: number,
): void {
  if (depth > 32) return;
  if (typeof value === 'string') visit(value, field, false);
  else if (Array.isArray(value)) {
    value.forEach((v, i) => {
      walk(v, v !== null && typeof v === 'object' ? `${field}[${i}]` : field, visit, depth + 1);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      visit(k, field, true); // a key is reported by where it is, never by itself
      walk(v, field ? `${field}.${k}` : k, visit, depth + 1);
    }
  }
}

/** The record's fields, with `extra` (unknown keys) flattened as they are in the file. */
function fieldsOf(r: object, only?: readonly string[]): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(r)) {
    if (only && !only.includes(k)) continue;
    if (TOP_LEVEL_OBJECTS.has(k) && v && typeof v === 'object' && !Array.isArray(v))
      for (const [ek, ev] of Object.entries(v as Record<string, unknown>)) out.push([ek, ev]);
    else out.push([k, v]);
  }
  return out;
}

/**
 * Likely secrets in every field of a record: title, body, source, author,
 * alias, tags, scope, anchors, links and unknown keys (names and values).
 * `only` limits the scan to some top-level fields (an update's changed ones).
 */
export function scanRecord(r: object, only?: readonly string[]): RecordFinding[] {
  const out: RecordFinding[] = [];
  for (const [name, value] of fieldsOf(r, only)) {
    const top = (text: string, field: string, inKey: boolean) => {
      for (const f of scanSecrets(text)) out.push({ ...f, field, inKey: inKey || undefined });
    };
    top(name, '', true);
    walk(value, name, top, 0);
  }
  return out;
}

/** One line for a finding: the kind, the field and (in multi-line text) the position. */
function describeFinding(f: RecordFinding, multiline = true): string {
  const where = f.inKey ? `the name of a field${f.field ? ` in ${f.field}` : ''}` : f.field;
  const pos = multiline ? ` at line ${f.line}, column ${f.column}` : '';
  return `${f.kind} in ${where}${pos} (${f.preview})`;
}

/**
 * Refuses a record holding a likely secret anywhere (human input: add,
 * update, import, MCP). Throws E_SECRET naming the field; the store is not
 * touched because callers check before they write.
 */
export function assertRecordClean(r: object, opts: { allow?: boolean; only?: readonly string[] } = {}): void {
  if (opts.allow) return;
  const f = scanRecord(r, opts.only)[0];
  if (!f) return;
  const multiline = f.field === 'body' || f.line > 1;
  throw err(
    'E_SECRET',
    `refusing to store a likely secret: ${describeFinding(f, multiline)}`,
    'remove it, or pass --allow-secret if it is not a secret',
    { kind: f.kind, field: f.field, line: f.line, column: f.column },
  );
}

function redactDeep(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return redactText(v);
  if (depth > 32 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => redactDeep(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>))
    out[redactText(k)] = redactDeep(x, depth + 1);
  return out;
}

/** A copy of a record (or any value) with every likely secret in every field redacted (agent text). */
export function redactRecord<T>(r: T): T {
  return redactDeep(r, 0) as T;
}

/** Throws E_SECRET for the first finding, naming its kind and position. */
export function assertNoSecrets(fields: Record<string, string | undefined>, allow = false): void {
  if (allow) return;
  for (const [field, text] of Object.entries(fields)) {
    if (!text) continue;
    const f = scanSecrets(text)[0];
    if (f) {
      throw err(
        'E_SECRET',
        `refusing to store a likely secret: ${f.kind} in ${field} at line ${f.line}, column ${f.column} (${f.preview})`,
        'remove it, or pass --allow-secret if it is not a secret',
        { kind: f.kind, field, line: f.line, column: f.column },
      );
    }
  }
}
