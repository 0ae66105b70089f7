/**
 * The secret-scan policy of a write, decided here once for every surface (the
 * CLI, the MCP server, the UI, the hooks): `block` refuses text that looks
 * like a secret (unless a person passed --allow-secret), `warn` stores it and
 * says so, `off` skips the scan. The setting is the store's layered config
 * (src/gitstore/config.ts), whose shared layer may tighten it, never loosen
 * it; a write that two stores' settings govern (add --store: the project's
 * and the team store's) takes the stricter.
 */
import { resolveConfig } from '../gitstore/config.js';
import type { Store } from '../gitstore/store.js';
import { TEXT_FIELDS } from '../model/fields.js';
import { scanSecrets } from '../safety/secrets.js';

/** The values of `secret-scan`, weakest first. */
export const SECRET_SCANS = ['off', 'warn', 'block'] as const;
export type SecretScan = (typeof SECRET_SCANS)[number];

/** A setting's value as a policy: anything unknown is `block`. */
export function asSecretScan(v: unknown): SecretScan {
  const s = String(v ?? 'block');
  return (SECRET_SCANS as readonly string[]).includes(s) ? (s as SecretScan) : 'block';
}

/** The stricter of policies. */
export function stricterScan(...scans: SecretScan[]): SecretScan {
  return scans.reduce<SecretScan>(
    (a, b) => (SECRET_SCANS.indexOf(b) > SECRET_SCANS.indexOf(a) ? b : a),
    'off',
  );
}

/** The policy of a write to `store`, read afresh from its config; an unreadable config counts as `block`. */
export async function secretScanOf(
  store: Store,
  env: NodeJS.ProcessEnv = store.repo.env,
): Promise<SecretScan> {
  try {
    return asSecretScan((await resolveConfig(env, store)).values['secret-scan']);
  } catch {
    return 'block';
  }
}

export interface SecretDecision {
  /** the write may store what looks like a secret (Store.write's allowSecret) */
  allow: boolean;
  /** under `warn`: one line per field that holds a likely secret (without a "warning:" prefix) */
  warnings: string[];
}

/**
 * What a write under `scan` does with its text: `fields` are the texts it stores, by field name;
 * `personAllowed` a person's --allow-secret (an agent has none). Under `block` a likely secret is
 * refused later, by the write's own scan (assertRecordClean), with E_SECRET.
 */
export function decideSecrets(
  scan: SecretScan,
  fields: Record<string, string | undefined>,
  personAllowed = false,
): SecretDecision {
  if (personAllowed || scan === 'off') return { allow: true, warnings: [] };
  if (scan === 'block') return { allow: false, warnings: [] };
  const warnings: string[] = [];
  for (const [field, text] of Object.entries(fields)) {
    const f = text ? scanSecrets(text)[0] : undefined;
    if (f)
      warnings.push(
        `likely secret (${f.kind}) in ${field} at line ${f.line}, column ${f.column}; stored because secret-scan is warn`,
      );
  }
  return { allow: true, warnings };
}

/**
 * The texts a patch or an add stores, by field (what decideSecrets scans): every text field of
 * the table (src/model/fields.ts TEXT_FIELDS), a list as one text, the tags an update adds with the tags.
 */
export function textsOf(input: object): Record<string, string | undefined> {
  const given = input as Record<string, unknown> & { addTags?: readonly string[] };
  const out: Record<string, string | undefined> = {};
  for (const key of TEXT_FIELDS) {
    const v = key === 'tags' ? [...((given.tags as string[]) ?? []), ...(given.addTags ?? [])] : given[key];
    if (Array.isArray(v)) out[key] = v.length ? v.join(key === 'scope' ? ' ' : ',') : undefined;
    else out[key] = v == null ? undefined : String(v);
  }
  return out;
}
