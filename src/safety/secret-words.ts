/**
 * What the secret scanner knows of names and values: the words people put where a secret goes in
 * examples (placeholders), the entropy of a value, the names that say their value is a secret
 * (db_password, apiKey, …), and whether a value looks like a real password or token rather than
 * code, prose or a placeholder. Pure.
 */

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
export function isPlaceholder(v: string): boolean {
  const s = v.replace(/^["'`]|["'`]$/g, '');
  if (!s) return true;
  if (/^[<{$%[(]/.test(s)) return true; // ${VAR}, $VAR, <token>, {{ x }}, %VAR%, [REDACTED]
  if (/\$\{|\{\{|#\{|%\(|\$\(/.test(s)) return true; // an interpolation inside: "postgres-${env}", "#{ENV}"
  if (/^(?:x+|\*+|\.+|…+|#+|-+|_+|0+)$/i.test(s)) return true;
  if (PLACEHOLDER_WORDS.has(s.toLowerCase())) return true;
  // a description of the value: REPLACE_WITH_PASSWORD, mypassword, db_password, enter-your-token
  if (
    /^(?:replace|insert|enter|put|add|set|fill)[-_]?(?:in[-_]?)?(?:with|your|me|here|the)?[-_]?[a-z_-]*$/i.test(
      s,
    )
  )
    return true;
  if (
    /^(?:my|your|the|some|a|db|user|admin|new|old|real|actual|strong|secure|default|sample|fake)[-_]?(?:pass(?:word)?|passwd|secret|token|key)$/i.test(
      s,
    )
  )
    return true;
  // a word people use as a sample password, numbered: password1, secret123, changeme2
  if (
    /^(?:password|passwd|pass|secret|token|changeme|admin|test|demo|sample|default|foobar|foo|bar|qwerty|letmein|welcome)[-_]?\d{0,4}!?$/i.test(
      s,
    )
  )
    return true;
  if (
    /^(?:your|my|some|the)[-_]|example|placeholder|changeme|change[-_]me|redacted|dummy|xxxx|\*\*\*/i.test(s)
  )
    return true;
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

/** The words of an identifier: db_password, dbPassword, DBPassword and DB-PASSWORD are all [db, password]. */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** A word of a name that says its value is a secret, alone or at the end of a glued word (pgpassword, dbpass). */
const SECRET_WORD =
  /^(?:pass|pw|pwd|passwd|password|passphrase|passcode|secret|token|apikey|credentials?|creds)$/;
const GLUED_SECRET =
  /(?:passwd|password|passphrase|passcode|secret|token|apikey|accesskey|privatekey|secretkey|authkey|accountkey|appkey|pwd)$/;
/** `X key` pairs that name a secret: api key, access key, private key, account key, … */
const KEY_OWNERS =
  /^(?:api|access|private|secret|signing|encryption|master|session|account|storage|app|application|shared|auth|service|license|consumer|hmac|jwt|crypto|webhook|client|sas|admin|deploy|ssh|gpg|pgp|sendgrid|stripe|mailgun|datadog|dd|encrypt|decrypt|cipher|aes|root|sig|signature)$/;
/** Words after the secret word that make the name about something else: token_url, password_file, secretKeyRef. */
const NOT_SECRET_AFTER = new Set(
  (
    'url uri urls endpoint path paths file files filename dir name names type types id ids length len size count ' +
    'expiry expires expiration expire exp expired ttl timeout lifetime header headers prefix suffix env var vars ' +
    'field fields param params label mode policy policies enabled enable disabled required format hash hashed ' +
    'digest sha checksum provider providers source ref refs reference arn version method methods scope scopes ' +
    'kind gid uid max min rotation store manager class helper fn func function callback handler validator regex ' +
    'pattern reset change changed confirm confirmation hint prompt question strength location command cmd script ' +
    'template placeholder sentinel input form button text message error errors encrypted fingerprint public pub ' +
    'cert certificate index idx status state valid validity usage used user username users login issuer ' +
    'audience claims page limit limits budget budgets cost costs estimate counter rate bucket parser lexer ' +
    'entropy info metadata schema spec json yaml annotation annotations selector selectors mount mounts volume ' +
    'volumes keyref lookup getter setter strategy generator generate rules rule check checks regexp scan ' +
    'scanner scanning detection detector leak leaks'
  ).split(' '),
);
/** Words before the secret word that make the name about something else: page_token, max_tokens, public_key. */
const NOT_SECRET_BEFORE = new Set(
  'page next continuation cancellation sync max min num public pub lexer parse parser has is no show'.split(
    ' ',
  ),
);

/** `X key` pairs that name no secret: a sort key, a cache key, a primary key, a public key. */
const NOT_KEY_OWNERS = new Set(
  (
    'sort cache primary foreign partition map object s3 idempotency lookup hash row dedupe dedup i18n ' +
    'translation locale hot short shortcut keyboard react list unique composite index dict field column table ' +
    'json yaml config settings env public pub host gpg ssh group label meta metadata message storage_ range ' +
    'bucket file path name type id kid query state store redis memcache session_ item entry node'
  ).split(' '),
);

export type SecretKind = 'password' | 'secret' | 'key';

/** Does this name (DB_PASSWORD, dbPassword, aws_secret_access_key, X-Api-Key) say its value is a secret? */
export function secretName(name: string): SecretKind | null {
  const words = wordsOf(name);
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    let hit = SECRET_WORD.test(w) || (w.length > 6 && GLUED_SECRET.test(w));
    if (!hit && w === 'key' && i > 0 && KEY_OWNERS.test(words[i - 1])) hit = true;
    // HEROKU_KEY, mapsKey: a provider's key, where the value looks random enough (valueLooksSecret)
    if (!hit && w === 'key' && i === words.length - 1 && i > 0 && !NOT_KEY_OWNERS.has(words[i - 1]))
      return NOT_SECRET_BEFORE.has(words[i - 1]) ? null : 'key';
    if (!hit) continue;
    if (i > 0 && NOT_SECRET_BEFORE.has(words[i - 1])) return null;
    // the last word decides: password_file is a path, token_type a word, secret_key_base still a secret
    for (const after of words.slice(i + 1)) if (NOT_SECRET_AFTER.has(after)) return null;
    return /^(?:pass|pw|pwd|passwd|password|passphrase|passcode)$/.test(w) || /pass|pwd/.test(w)
      ? 'password'
      : 'secret';
  }
  return null;
}

/** A word of an identifier: at least two letters with a vowel, or a short acronym (AD, API, T). */
const identWord = (w: string) => /^[A-Z]{1,5}$/.test(w) || (w.length >= 2 && /[aeiouy]/i.test(w));

/**
 * An identifier made of words (api_key, apiKeyFromEnv, AzureADTokenProvider, _AzureApiKeyT,
 * workload-identity-auth): a variable, a type or a label, not a random string.
 */
function wordy(v: string): boolean {
  const s = v.replace(/^[_$@]+/, '');
  if (!/^[A-Za-z][\w-]*$/.test(s)) return false;
  const parts = s.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+/g) ?? [];
  if (parts.join('').length !== s.replace(/[_-]/g, '').length) return false;
  const digits = parts.filter((p) => /^\d/.test(p));
  if (digits.length > 1 || digits.some((d) => d.length > 2)) return false;
  // snake and kebab case may hold abbreviations (gdch_service_account): short lower-case parts pass
  const separated = /[_-]/.test(s);
  return parts
    .filter((p) => !/^\d/.test(p))
    .every((p) => identWord(p) || (separated && /^[a-z]{1,4}$/.test(p)));
}

/** An unquoted value that is code, not a literal: os.environ['X'], getToken(), &Token{, var.db_password, api_key. */
export function isCode(raw: string): boolean {
  // the end of the expression around it: {RefreshToken: f.RefreshToken}, process.env.SECRET!
  const v = raw.replace(/[)\]}>,;!?]+$/, '');
  if (/^(?:new|await|typeof|yield|function|lambda|async|not)\b/.test(v)) return true;
  if (/^![A-Za-z]\w*$/.test(v)) return true; // a YAML tag: password: !vault |, !Ref DbPassword
  if (/^[&*!]?[A-Za-z_$@][\w$@]*(?:(?:\.|::|->|\?\.)[A-Za-z_$][\w$-]*)*\s*[[({<]/.test(v)) return true;
  if (/^[A-Za-z_$@][\w$@]*(?:(?:\.|::|->|\?\.)[A-Za-z_$][\w$-]*)+$/.test(v)) return true;
  // a variable: words with an underscore or more than one word (admin_api_key, apiKeyFromEnv)
  if (
    /^[\w$@]+$/.test(v) &&
    wordy(v) &&
    (/_/.test(v) || (v.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])/g) ?? []).length > 1)
  )
    return true;
  return false;
}

/**
 * The value of a secret-named assignment looks like a real secret: not a placeholder, a reference,
 * a path, a URL, a number or a label made of words.
 */
export function valueLooksSecret(raw: string, kind: SecretKind): boolean {
  // the sentence's closing bracket or full stop is not part of the value: `(id-token: write)`; a
  // value in a string of source code ends at its escaped newline ('secret-scan: block\n')
  const v = raw.replace(/\\[nrt][\s\S]*$/, '').replace(/[)\]}>.!?:,;]+$/, '');
  if (v.length < 6 || isPlaceholder(v) || /\s/.test(v)) return false;
  if (/^(?:\/|\.\.?\/|~\/|[A-Za-z]:\\)|:\/\//.test(v)) return false; // a path, or a URL (credentials in URLs have their rule)
  // a reference to where the secret is: vault:secret/data/db#password, arn:aws:…, env:DB_PASS, sm://…
  if (/^[a-z][a-z0-9+.-]*:[^\s]/.test(v) && !/^[a-z]+:[A-Za-z0-9+/]{30,}={0,2}$/.test(v)) return false;
  // a file name (deploy.pem, service-account.json), not a random string that an anchor's path ends
  const file =
    /^(.+)\.(?:pem|key|json|ya?ml|txt|crt|cer|p12|pfx|env|gpg|asc|jks|keystore|md|conf|ini|properties)$/i.exec(
      v,
    );
  if (file && (/[/\\]/.test(file[1]) || wordy(file[1].replace(/\./g, '-')))) return false;
  // digits: a passcode where the name says password, a number (a port, a count, an id) elsewhere
  if (/^\d+$/.test(v)) return kind === 'password' && v.length >= 6 && !/^(\d)\1+$|^123456/.test(v);
  if (!/[A-Za-z]/.test(v)) return false;
  if (/^[A-Za-z]+(?:[/.-][A-Za-z]+)+$/.test(v)) return false; // words: read/write, reset/changed, a.b
  if (wordy(v) && !/\d/.test(v)) {
    // letters only: a passphrase of words (correcthorsebatterystaple, 3.4 bits a letter) is a secret
    // where the name says so; a repeated word (passwordpassword, 2.8) or a label of words is not
    return kind !== 'key' && /^[a-z]+$|^[A-Z]+$/.test(v) && v.length >= 16 && entropy(v) >= 3;
  }
  if (/^[A-Za-z]+$/.test(v)) return kind !== 'key' && v.length >= 10 && entropy(v) >= 3;
  // a key of some provider: long, letters and digits, random
  if (kind === 'key') return v.length >= 16 && /\d/.test(v) && entropy(v) >= 3;
  return entropy(v) >= 2.5;
}

/** A password in a URL or after -u: anything that is not a placeholder or a plain number (uid:gid). */
export function passwordLooksReal(v: string): boolean {
  return v.length >= 3 && /[A-Za-z0-9]/.test(v) && !isPlaceholder(v) && !/^\d+$/.test(v);
}

export function tokenLooksReal(v: string): boolean {
  return !isPlaceholder(v) && entropy(v) >= 3 && (/\d/.test(v) || v.length >= 20);
}

/** A URL's query value decoded (%2B is +), or as it is where it is not valid percent-encoding. */
export function urlDecoded(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v; // %FF, a lone % : hostile or sloppy text must not stop the scan
  }
}

/** A base64 `user:password` pair (Docker's "auth", npm's _auth, HTTP Basic). */
export function base64Pair(v: string): boolean {
  try {
    const s = atob(v.replace(/-/g, '+').replace(/_/g, '/'));
    const i = s.indexOf(':');
    return i > 0 && i < s.length - 1 && /^[\x20-\x7e]+$/.test(s) && passwordLooksReal(s.slice(i + 1));
  } catch {
    return false;
  }
}
