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
  /** The capture group holding the secret (the whole match when absent; the first that matched of several). */
  group?: number | number[];
  /** Further test of the secret (placeholders, entropy); the match counts only when true. */
  check?: (value: string, m: RegExpExecArray) => boolean;
  /** Cheap pre-check: the full pattern runs only on texts that hold one of these strings (or match this). */
  hint?: RegExp | string | string[];
  /** The character before a match must not be one of these (a token starts at a word's start). */
  before?: RegExp;
  /** The character before a match must be one of these, or the text start (`-u` after a space). */
  lead?: RegExp;
  /**
   * The part of the secret before the match, which must end right where it starts (`$`-anchored):
   * a pattern then starts at its rare literal part (.atlasv1., -us12, Q~) and runs fast.
   */
  back?: RegExp;
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

type SecretKind = 'password' | 'secret' | 'key';

/** Does this name (DB_PASSWORD, dbPassword, aws_secret_access_key, X-Api-Key) say its value is a secret? */
function secretName(name: string): SecretKind | null {
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
function isCode(raw: string): boolean {
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
function valueLooksSecret(raw: string, kind: SecretKind): boolean {
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
function passwordLooksReal(v: string): boolean {
  return v.length >= 3 && /[A-Za-z0-9]/.test(v) && !isPlaceholder(v) && !/^\d+$/.test(v);
}

function tokenLooksReal(v: string): boolean {
  return !isPlaceholder(v) && entropy(v) >= 3 && (/\d/.test(v) || v.length >= 20);
}

/** A URL's query value decoded (%2B is +), or as it is where it is not valid percent-encoding. */
function urlDecoded(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v; // %FF, a lone % : hostile or sloppy text must not stop the scan
  }
}

/** A base64 `user:password` pair (Docker's "auth", npm's _auth, HTTP Basic). */
function base64Pair(v: string): boolean {
  try {
    const s = atob(v.replace(/-/g, '+').replace(/_/g, '/'));
    const i = s.indexOf(':');
    return i > 0 && i < s.length - 1 && /^[\x20-\x7e]+$/.test(s) && passwordLooksReal(s.slice(i + 1));
  } catch {
    return false;
  }
}

/** DER starts of private keys (PKCS#1, PKCS#8, SEC1, encrypted PKCS#8) and OpenSSH's key format. */
const KEY_BODY_START =
  '(?:MII[A-Za-z0-9+/]{3}IBA[AD]|MIG[A-Za-z0-9+/]AgEA|MHcCAQEE|MIGkAgEBBDA|MC4CAQAw|MII[A-Za-z0-9+/]{5}BgkqhkiG9w0BBQ0w|MII[A-Za-z0-9+/]{5}BgkqhkiG9w0BDAE|b3BlbnNzaC1rZXktdjE)';

/** A token with a recognisable shape, whole: nothing of a word before it (checked in code, as a
 * leading look-behind would slow every regular expression down) or after it. */
const tok = (kind: string, body: string, hint: Rule['hint'], before = /[A-Za-z0-9_-]/): Rule => ({
  kind,
  re: new RegExp(`${body}(?![A-Za-z0-9_-])`, 'g'),
  hint,
  before,
  check: tokenShape,
});

/** A token's random part is random: no long run of one character (sk_live_AAAA…, xxxxxx), no FakeFake. */
function tokenShape(v: string): boolean {
  return !/(.)\1{11}|FakeFake|xxxxxx/i.test(v);
}

const RULES: Rule[] = [
  {
    kind: 'private key block',
    // the whole block, so redaction removes the key and not only its header
    re: /-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)/g,
    hint: 'PRIVATE KEY',
  },
  {
    kind: 'private key block',
    // (-{4} rather than the dashes: this file, scanned as an anchor's text, must not match itself)
    re: /-{4} BEGIN SSH2 ENCRYPTED PRIVATE KEY -{4}[\s\S]*?(?:-{4} END SSH2 ENCRYPTED PRIVATE KEY -{4}|$)/g,
    hint: 'SSH2 ENCRYPTED',
  },
  {
    kind: 'private key block',
    // PuTTY's .ppk: the private lines up to the MAC
    re: /PuTTY-User-Key-File-\d+:[\s\S]*?(?:Private-MAC:[ \t]*[0-9a-fA-F]+|$)/g,
    hint: 'PuTTY-User-Key-File',
  },
  {
    kind: 'private key body',
    // a key pasted without its header: a DER or OpenSSH start, and the base64 lines that follow it
    // (in a file, indented, or in a string with \n)
    re: new RegExp(
      `${KEY_BODY_START}[A-Za-z0-9+/]{24,}={0,2}(?:(?:\\\\n)?(?:["'\`]?[ \\t]*[+,]?[ \\t]*\\r?\\n)?[ \\t"'\`+]*[A-Za-z0-9+/]{16,}={0,2})*`,
      'g',
    ),
    hint: /MII|MIG|MHcC|MC4C|b3BlbnNzaC1rZXktdjE/,
    before: /[A-Za-z0-9+/]/,
  },
  {
    kind: 'AWS access key id',
    re: /\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g,
    hint: ['AKIA', 'ASIA', 'A3T', 'ABIA', 'ACCA'],
  },
  {
    kind: 'AWS secret access key',
    re: /\baws_?secret_?access_?key\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    group: 1,
    hint: /secret/i,
  },
  {
    kind: 'AWS secret access key',
    re: /\baws configure set (?:aws_secret_access_key|aws_session_token)\s+["']?([A-Za-z0-9/+=]{16,})/g,
    group: 1,
    hint: 'aws configure',
  },
  tok('Google API key', 'AIza[0-9A-Za-z_-]{35}', 'AIza'),
  tok('Google OAuth access token', 'ya29\\.[0-9A-Za-z_-]{20,}', 'ya29.'),
  tok('Google OAuth client secret', 'GOCSPX-[A-Za-z0-9_-]{28}', 'GOCSPX-'),
  {
    kind: 'Azure AD client secret',
    re: /Q~[a-zA-Z0-9_~.-]{31,34}(?![\w~.-])/g,
    back: /(?<![\w~.-])[a-zA-Z0-9_~.]{3}\d$/,
    hint: 'Q~',
  },
  {
    kind: 'Azure key in a connection string',
    re: /\b(?:AccountKey|SharedAccessKey|SharedSecretValue|AccessKey)=([A-Za-z0-9+/]{20,}={0,2})/g,
    group: 1,
    hint: 'Key=',
  },
  {
    kind: 'signature or token in a URL',
    // SAS sig=, ?access_token=, &api_key=, ?token=, &client_secret=
    re: /(?:sig|signature|access_token|accesstoken|api_key|apikey|api-key|token|auth_token|client_secret|password|passwd|secret|private_token)=([A-Za-z0-9%+/=._~-]{16,})/g,
    lead: /[?&;]/,
    group: 1,
    check: (v) => tokenLooksReal(urlDecoded(v)),
    hint: '=',
  },
  tok(
    'GitHub token',
    '(?:gh[pousr]_[A-Za-z0-9]{36,255}|ghs_\\d+_eyJ[A-Za-z0-9_.-]{20,}|github_pat_[A-Za-z0-9_]{22,255})',
    ['gh', 'github_pat_'],
  ),
  tok('GitLab token', 'gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas)-[A-Za-z0-9_-]{20,}', 'gl'),
  tok('Slack token', '(?:xox[abposre]|xoxe\\.xox[bp]|xapp)-[A-Za-z0-9-]{10,}', ['xox', 'xapp-']),
  {
    kind: 'Slack webhook',
    re: /https?:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/T[A-Za-z0-9_]+\/[AB][A-Za-z0-9_]+\/[A-Za-z0-9_/]+/g,
    hint: 'hooks.slack.com',
  },
  {
    kind: 'Discord webhook',
    re: /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]{30,}/g,
    hint: 'discord',
  },
  {
    kind: 'Discord bot token',
    re: /\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])/g,
    back: /(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}$/,
  },
  tok('Stripe key', '(?:[rs]k_(?:live|test|prod)_[0-9A-Za-z]{10,247}|whsec_[A-Za-z0-9+/=]{24,})', [
    'k_live_',
    'k_test_',
    'k_prod_',
    'whsec_',
  ]),
  tok('OpenAI or Anthropic API key', 'sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}', 'sk-'),
  tok('npm token', 'npm_[A-Za-z0-9]{36}', 'npm_'),
  tok('PyPI token', 'pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}', 'pypi-'),
  tok('RubyGems token', 'rubygems_[a-f0-9]{48}', 'rubygems_'),
  tok('Docker access token', 'dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}', 'dckr_'),
  {
    kind: 'registry auth',
    // Docker's config.json "auth": base64(user:password), npm's _auth=
    re: /(?:\\?["']auth\\?["']\s*:\s*\\?["']|(?:^|[\s:/])_auth\s*=\s*["']?)([A-Za-z0-9+/]{8,}={0,2})/gm,
    group: 1,
    check: base64Pair,
    hint: 'auth',
  },
  tok('Facebook access token', 'EAA[A-Za-z0-9]{100,}', 'EAA'),
  tok('SonarQube token', 'sq[pau]_[A-Za-z0-9]{40}', 'sq'),
  tok('SendGrid API key', 'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}', 'SG.'),
  tok('Brevo API key', 'x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}', 'sib-'),
  tok('Twilio API key', 'SK[0-9a-fA-F]{32}', 'SK'),
  tok('Mailgun API key', 'key-[0-9a-zA-Z]{32}', 'key-'),
  {
    kind: 'Mailgun API key',
    re: /-[0-9a-f]{8}-[0-9a-f]{8}(?![\w-])/g,
    back: /(?<![\w-])[0-9a-f]{32}$/,
  },
  { kind: 'Mailchimp API key', re: /-us\d{1,2}(?![\w-])/g, back: /(?<![\w-])[0-9a-f]{32}$/, hint: '-us' },
  tok('Hugging Face token', '(?:hf_[A-Za-z0-9]{34,}|api_org_[A-Za-z0-9]{34})', ['hf_', 'api_org_']),
  tok('Perplexity or Groq API key', '(?:pplx-[A-Za-z0-9]{48}|gsk_[A-Za-z0-9]{52})', ['pplx-', 'gsk_']),
  tok('DigitalOcean token', 'do[por]_v1_[a-f0-9]{64}', '_v1_'),
  tok('Shopify token', 'shp(?:at|ca|pa|ss)_[a-zA-Z0-9]{32,}', 'shp'),
  tok('1Password service account token', 'ops_eyJ[A-Za-z0-9+/]{100,}={0,3}', 'ops_eyJ'),
  tok('Square token', '(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,60}', ['EAAA', 'sq0']),
  tok('Postman API key', 'PMAK-[a-f0-9]{24}-[a-f0-9]{34}', 'PMAK-'),
  tok('Vault token', 'hv[sbr]\\.[A-Za-z0-9_-]{24,}', 'hv'),
  tok('Databricks token', 'dapi[a-f0-9]{32}(?:-\\d)?', 'dapi'),
  tok('Linear API key', 'lin_api_[A-Za-z0-9]{40,}', 'lin_api_'),
  tok('age secret key', 'AGE-SECRET-KEY-1[0-9A-Z]{58}', 'AGE-SECRET-KEY-'),
  {
    kind: 'Telegram bot token',
    re: /:AA[A-Za-z0-9_-]{33}(?![\w-])/g,
    back: /(?<![\w:-])\d{8,10}$/,
    hint: ':AA',
  },
  tok('Heroku API key', 'HRKU-AA[0-9a-zA-Z_-]{58}', 'HRKU-'),
  tok('New Relic key', 'NR(?:AK|II|JS|RA)-[A-Za-z0-9-]{27,32}', 'NR'),
  tok('Sentry token', 'sntry[us]_[A-Za-z0-9+/=_]{40,}', 'sntry'),
  tok('Grafana token', '(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3})', [
    'glsa_',
    'glc_',
  ]),
  tok('Doppler token', 'dp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9]{40,44}', 'dp.'),
  tok('Dynatrace token', 'dt0c01\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}', 'dt0c01.'),
  tok('Pulumi token', 'pul-[a-f0-9]{40}', 'pul-'),
  {
    kind: 'Terraform Cloud token',
    re: /\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![\w-])/g,
    back: /(?<![\w-])[A-Za-z0-9]{14}$/,
    hint: '.atlasv1.',
  },
  tok('Tailscale key', 'tskey-[a-z]+-[0-9A-Za-z_]{8,40}-[0-9A-Za-z_]{16,60}', 'tskey-', /[A-Za-z]/),
  tok('Vercel token', 'vc[pikar]_[A-Za-z0-9]{20,60}', 'vc'),
  tok('Figma token', 'figd_[A-Za-z0-9_-]{40,200}', 'figd_'),
  tok('Notion token', 'ntn_\\d{11}[A-Za-z0-9]{35}', 'ntn_'),
  tok('Cloudflare Origin CA key', 'v1\\.0-[a-f0-9]{24}-[a-f0-9]{146}', 'v1.0-'),
  tok('PlanetScale token', 'pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_=.-]{32,64}', 'pscale_'),
  {
    kind: 'JSON Web Token',
    re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    hint: 'eyJ',
  },
  {
    kind: 'credentials in a URL',
    // scheme://user:password@host: the password (greedy up to the last @, as sloppy URLs hold raw @s)
    re: /:\/\/([^\s:/?#@'"`<>]*):([^\s/?#'"`<>]+)@(?=[^\s@/'"`<>]*[A-Za-z0-9])/g,
    group: 2,
    // postgres:postgres@ is a local default, not a secret
    check: (v, m) => passwordLooksReal(v) && v !== m[1],
    hint: '@',
  },
  {
    kind: 'credentials on a command line',
    // curl -u user:password, --user=user:password, --proxy-user …
    re: /(?:-u|--user|--proxy-user)(?:\s+|=)["']?[^\s:"']+:([^\s"'`,;]+)/g,
    lead: /[\s;|&(]/,
    group: 1,
    check: passwordLooksReal,
    hint: /-u|--user|--proxy-user/,
  },
  {
    kind: 'password on a command line',
    re: /--(?:password|pass|passwd|token|api-key|apikey|account-key|access-key|secret-key|secret|client-secret|auth-token)(?:\s+|=)["']?([^\s"'`,;]+)/gi,
    lead: /[\s;|&("']/,
    group: 1,
    check: passwordLooksReal,
    hint: /--(?:pass|token|api|account|access|secret|client|auth)/i,
  },
  {
    kind: 'password on a command line',
    // mysql -pPASS, mysqldump -p'PASS', sshpass -p PASS, docker login -p PASS, redis-cli -a PASS
    re: /\b(?:(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump)\b[^\n|;&]{0,200}?\s-p|sshpass\s+-p\s*|(?:docker|podman|helm|buildah)\s+(?:registry\s+)?login\b[^\n|;&]{0,200}?\s-p\s+|redis-cli\b[^\n|;&]{0,200}?\s-a\s+)(["']?)([^\s"'`,;]+)\1/g,
    group: 2,
    check: passwordLooksReal,
    hint: /mysql|mariadb|sshpass|login|redis-cli/,
  },
  {
    kind: 'password on a command line',
    // htpasswd -b [-c] FILE USER PASSWORD
    re: /\bhtpasswd\s+-[a-zA-Z]*b[a-zA-Z]*(?:\s+-[a-zA-Z]+)*\s+\S+\s+\S+\s+["']?([^\s"'`,;]+)/g,
    group: 1,
    check: passwordLooksReal,
    hint: 'htpasswd',
  },
  {
    kind: 'password in a .netrc',
    re: /\bmachine\s+\S+\s+(?:login\s+\S+\s+)?password\s+(\S+)/g,
    group: 1,
    check: passwordLooksReal,
    hint: 'machine',
  },
  {
    kind: 'bearer token',
    re: /\bBearer\s+([A-Za-z0-9\-._~+/]{12,}=*)/g,
    group: 1,
    check: tokenLooksReal,
    hint: 'Bearer',
  },
  {
    kind: 'authorization header',
    // Authorization: Basic …, Token …, token=…, as a header line or in a dict or a call
    re: /\bAuthorization\\?["']?\s*[:=,]\s*\\?["']?(?:(Basic)\s+([A-Za-z0-9+/]{8,}={0,2})|(?:Token|token|Digest|Key|SSWS|Api-Key|GenieKey)\s+(?:token=)?["']?([A-Za-z0-9._~+/=-]{12,}))/gi,
    group: [2, 3],
    check: (v) => !isPlaceholder(v),
    hint: /Authorization/i,
  },
  {
    kind: 'password in a config file',
    // NuGet's <add key="ClearTextPassword" value="…" />
    re: /<add\s+key="(?:ClearText)?Password"\s+value="([^"]{4,})"/gi,
    group: 1,
    check: (v) => !isPlaceholder(v),
    hint: /Password/i,
  },
];

// ------------------------------------------------------------------ assignments

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
function scanAssignments(
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

/** Line and column of offsets in one text: the line starts found once, then a binary search each. */
function positions(text: string): (index: number) => { line: number; column: number } {
  let starts: number[] | undefined;
  return (index) => {
    if (!starts) {
      starts = [0];
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: index - starts[lo] + 1 };
  };
}

function mask(s: string): string {
  if (s.length <= 8) return '****';
  return `${s.slice(0, 4)}…${'*'.repeat(4)}`;
}

function hinted(text: string, hint: Rule['hint']): boolean {
  if (hint === undefined) return true;
  if (typeof hint === 'string') return text.includes(hint);
  if (Array.isArray(hint)) return hint.some((h) => text.includes(h));
  return hint.test(text);
}

/** Likely secrets in one text, in text order (one finding where several rules see the same secret). */
export function scanSecrets(text: string): SecretFinding[] {
  if (!text) return [];
  const found: Array<{ kind: string; at: number; start: number; end: number; match?: string }> = [];
  for (const rule of RULES) {
    if (!hinted(text, rule.hint)) continue;
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m; m = rule.re.exec(text)) {
      if (m[0] === '') {
        rule.re.lastIndex++;
        continue;
      }
      let at = m.index;
      if (rule.back) {
        const b = rule.back.exec(text.slice(Math.max(0, at - 64), at));
        if (!b) continue;
        at -= b[0].length;
      }
      if (rule.before && at > 0 && rule.before.test(text[at - 1])) continue;
      if (rule.lead && at > 0 && !rule.lead.test(text[at - 1])) continue;
      const group = Array.isArray(rule.group) ? rule.group.find((g) => m?.[g] !== undefined) : rule.group;
      const value = group ? (m[group] ?? '') : text.slice(at, m.index + m[0].length);
      if (!value || (rule.check && !rule.check(value, m))) continue;
      const start = group ? m.index + m[0].lastIndexOf(value) : at;
      found.push({
        kind: rule.kind,
        at,
        start,
        end: start + value.length,
        match: text.slice(at, m.index + m[0].length),
      });
    }
  }
  scanAssignments(text, found);
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: SecretFinding[] = [];
  const position = positions(text);
  let covered = -1;
  for (const f of found) {
    if (f.end <= covered) continue; // the same secret, seen by another rule
    covered = Math.max(covered, f.end);
    const { line, column } = position(f.at);
    out.push({
      kind: f.kind,
      line,
      column,
      preview: mask(f.match ?? text.slice(f.at, f.end)),
      start: f.start,
      end: f.end,
    });
  }
  return out;
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
