/**
 * Secret scanning for every text headed for refs/memory (which is pushed to
 * shared remotes). Pure: returns findings with the kind and the position.
 */
import { err } from '../errors.js';

export interface SecretFinding {
  kind: string;
  line: number;
  column: number;
  /** The match with most of it masked, for messages. */
  preview: string;
}

const RULES: Array<{ kind: string; re: RegExp; entropy?: number; hint?: RegExp }> = [
  { kind: 'private key block', re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g },
  { kind: 'AWS access key id', re: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  {
    kind: 'AWS secret access key',
    re: /\baws_?secret_?access_?key\b\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}\b/gi,
  },
  { kind: 'Google API key', re: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: 'GitHub token', re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { kind: 'GitLab token', re: /\bglpat-[A-Za-z0-9_-]{20,}\b/g },
  { kind: 'Slack token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g },
  {
    kind: 'Slack webhook',
    re: /https:\/\/hooks\.slack\.com\/services\/T[A-Za-z0-9_]+\/B[A-Za-z0-9_]+\/[A-Za-z0-9_]+/g,
  },
  { kind: 'Stripe secret key', re: /\b[rs]k_live_[0-9A-Za-z]{20,}\b/g },
  { kind: 'OpenAI API key', re: /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}\b/g },
  { kind: 'JSON Web Token', re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  {
    kind: 'password or token assignment',
    re: /(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*(?:password|passwd|pwd|secret|token|api_?key|access_?key|auth_?token|client_?secret)(?:[_-][A-Za-z0-9]+)*["']?\s*[:=]\s*["']?([^\s"'`,;]{8,})/gi,
    entropy: 3.0,
    // cheap pre-check: the full pattern backtracks, so run it only where a keyword occurs
    hint: /pass|pwd|secret|token|key/i,
  },
];

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

function position(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = 0; i < index; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      last = i;
    }
  }
  return { line, column: index - last };
}

function mask(s: string): string {
  if (s.length <= 8) return '****';
  return `${s.slice(0, 4)}…${'*'.repeat(4)}`;
}

export function scanSecrets(text: string): SecretFinding[] {
  const out: SecretFinding[] = [];
  for (const rule of RULES) {
    if (rule.hint && !rule.hint.test(text)) continue;
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m; m = rule.re.exec(text)) {
      if (rule.entropy !== undefined) {
        const value = m[1] ?? '';
        // placeholders ("password=changeme", "${TOKEN}", "<token>") are not secrets
        if (/^[<{$%]|^(?:x+|\*+|changeme|example|placeholder|redacted|dummy|secret|password)$/i.test(value))
          continue;
        if (entropy(value) < rule.entropy || !/\d/.test(value) || !/[A-Za-z]/.test(value)) continue;
      }
      const { line, column } = position(text, m.index);
      out.push({ kind: rule.kind, line, column, preview: mask(m[0]) });
    }
  }
  return out.sort((a, b) => a.line - b.line || a.column - b.column);
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
