/**
 * The secret scanner's rule table: one pattern per kind of secret with a recognisable shape
 * (private key blocks, cloud and service tokens, credentials in URLs and config files), each with
 * its cheap pre-check and the test of its value. The engine that runs them is secrets.ts. Pure.
 */
import { base64Pair, isPlaceholder, passwordLooksReal, tokenLooksReal, urlDecoded } from './secret-words.js';

export interface Rule {
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

export const RULES: Rule[] = [
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
