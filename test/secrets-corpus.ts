/**
 * A corpus of real-format fake secrets, built at run time by concatenation so
 * that this repository holds no literal a secret scanner would flag. Each entry
 * is a line of text as it would appear in a note, a command or tool output, and
 * `secret` is the part that must never reach refs/memory.
 */

/** Deterministic pseudo-random characters from an alphabet (a seeded LCG: the corpus is the same every run). */
function chars(alphabet: string, n: number, seed: number): string {
  let s = seed >>> 0 || 1;
  let out = '';
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out += alphabet[s % alphabet.length];
  }
  return out;
}

const UP = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOW = 'abcdefghijklmnopqrstuvwxyz';
const DIG = '0123456789';
const HEX = '0123456789abcdef';
const ALNUM = UP + LOW + DIG;
const B64 = `${ALNUM}+/`;
const URLSAFE = `${ALNUM}_-`;

const a = (n: number, seed: number) => chars(ALNUM, n, seed);
/** A password-like value: letters, digits and a symbol, never a dictionary word. */
const pw = (seed: number) =>
  `${chars(UP, 2, seed)}${chars(LOW, 4, seed + 1)}${chars(DIG, 3, seed + 2)}!${chars(ALNUM, 3, seed + 3)}`;

export interface CorpusEntry {
  /** What kind of secret this is (for messages). */
  name: string;
  /** The text that carries it (one line). */
  text: string;
  /** The secret itself: must not appear in refs/memory. */
  secret: string;
}

function e(name: string, secret: string, text = secret): CorpusEntry {
  return { name, text, secret };
}

export function secretsCorpus(): CorpusEntry[] {
  const out: CorpusEntry[] = [];
  // provider tokens, whole
  out.push(e('AWS access key id', `${'AK'}IA${chars(UP + DIG, 16, 1)}`));
  out.push(e('AWS session key id', `${'AS'}IA${chars(UP + DIG, 16, 2)}`));
  const awsSecret = chars(B64, 40, 3);
  out.push(e('AWS secret key', awsSecret, `aws_secret_access_key = ${awsSecret}`));
  out.push(e('Google API key', `AI${'za'}${chars(URLSAFE, 35, 4)}`));
  out.push(e('Google OAuth secret', `GOC${'SPX'}-${chars(URLSAFE, 28, 5)}`));
  for (const p of ['p', 'o', 'u', 's', 'r'])
    out.push(e(`GitHub gh${p}_ token`, `gh${p}_${a(36, 6 + p.charCodeAt(0))}`));
  out.push(e('GitHub fine-grained token', `github${'_pat'}_${chars(`${ALNUM}_`, 82, 7)}`));
  out.push(e('GitLab token', `gl${'pat'}-${chars(URLSAFE, 20, 8)}`));
  out.push(e('Slack bot token', `xo${'xb'}-${chars(DIG, 12, 9)}-${chars(DIG, 12, 10)}-${a(24, 11)}`));
  out.push(e('Slack user token', `xo${'xp'}-${chars(DIG, 12, 12)}-${a(24, 13)}`));
  out.push(
    e(
      'Slack app token',
      `xa${'pp'}-1-${chars(UP + DIG, 11, 14)}-${chars(DIG, 13, 15)}-${chars(HEX, 64, 16)}`,
    ),
  );
  out.push(
    e(
      'Slack webhook',
      `https://hooks.${'slack'}.com/services/T${chars(UP + DIG, 8, 17)}/B${chars(UP + DIG, 8, 18)}/${a(24, 19)}`,
    ),
  );
  out.push(
    e(
      'Discord webhook',
      `https://discord.com/api/${'webhooks'}/${chars(DIG, 18, 20)}/${chars(URLSAFE, 68, 21)}`,
    ),
  );
  out.push(e('Stripe live key', `s${'k_li'}ve_${a(24, 22)}`));
  out.push(e('Stripe restricted key', `r${'k_li'}ve_${a(24, 23)}`));
  out.push(e('OpenAI key', `s${'k-'}proj-${chars(URLSAFE, 48, 24)}`));
  out.push(e('Anthropic key', `s${'k-'}ant-api03-${chars(URLSAFE, 93, 25)}`));
  out.push(e('npm token', `np${'m_'}${a(36, 26)}`));
  out.push(e('PyPI token', `py${'pi'}-AgEIcHlwaS5vcmc${chars(URLSAFE, 60, 27)}`));
  out.push(e('SendGrid key', `S${'G.'}${chars(URLSAFE, 22, 28)}.${chars(URLSAFE, 43, 29)}`));
  out.push(e('Twilio key', `S${'K'}${chars(HEX, 32, 30)}`));
  out.push(e('Hugging Face token', `h${'f_'}${a(34, 31)}`));
  out.push(e('DigitalOcean token', `do${'p_'}v1_${chars(HEX, 64, 32)}`));
  out.push(e('Shopify token', `shp${'at'}_${chars(HEX, 32, 33)}`));
  out.push(e('Mailgun key', `ke${'y-'}${a(32, 34)}`));
  out.push(e('Postman key', `PM${'AK'}-${chars(HEX, 24, 35)}-${chars(HEX, 34, 36)}`));
  out.push(e('Vault token', `hv${'s.'}${chars(URLSAFE, 90, 37)}`));
  out.push(e('Databricks token', `da${'pi'}${chars(HEX, 32, 38)}`));
  out.push(e('Linear key', `lin${'_api'}_${a(40, 39)}`));
  out.push(e('age key', `AGE-${'SECRET'}-KEY-1${chars(UP + DIG, 58, 40)}`));
  out.push(e('Telegram bot token', `${chars(DIG, 10, 41)}:A${'A'}${chars(URLSAFE, 33, 42)}`));
  const azure = `${chars(B64, 86, 43)}==`;
  out.push(
    e('Azure storage key', azure, `DefaultEndpointsProtocol=https;AccountName=acme;Account${'Key'}=${azure}`),
  );
  const jwt = `ey${'J'}hbGciOiJIUzI1NiJ9.ey${'J'}${chars(URLSAFE, 40, 44)}.${chars(URLSAFE, 43, 45)}`;
  out.push(e('JSON Web Token', jwt, `session cookie ${jwt}`));
  const key = chars(B64, 64, 46);
  out.push(
    e(
      'RSA private key',
      key,
      `-----BEGIN RSA ${'PRIVATE'} KEY-----\\n${key}\\n-----END RSA ${'PRIVATE'} KEY-----`,
    ),
  );
  // shapes from the issue: credentials in URLs, -u user:pass, secret-named assignments, bearer tokens
  const urls = ['postgres', 'mysql', 'redis', 'amqp', 'mongodb+srv', 'https'];
  urls.forEach((scheme, i) => {
    const p = pw(50 + i);
    out.push(
      e(
        `${scheme} URL password`,
        p,
        `error: could not connect to ${scheme}://admin:${p}@db${i}.internal:5432/app`,
      ),
    );
  });
  const curlPw = pw(60);
  out.push(e('curl -u', curlPw, `curl -u admin:${curlPw} https://ci.internal/api/jobs`));
  const curlPw2 = pw(61);
  out.push(e('curl --user=', curlPw2, `curl -s --user=deploy:${curlPw2} https://ci.internal/`));
  const names = [
    'DB_PASS',
    'DB_PASSWORD',
    'MYSQL_ROOT_PASSWORD',
    'API_KEY',
    'STRIPE_SECRET',
    'GITHUB_TOKEN',
    'PRIVATE_KEY',
    'CLIENT_SECRET',
    'AUTH_TOKEN',
    'SECRET_KEY_BASE',
  ];
  names.forEach((n, i) => {
    const v = i % 2 ? `${a(20, 70 + i)}` : pw(70 + i);
    out.push(e(`${n}= assignment`, v, i % 3 === 0 ? `export ${n}=${v}` : `${n}=${v} npm start`));
  });
  const yamlPw = pw(90);
  out.push(e('password: yaml', yamlPw, `password: ${yamlPw}`));
  const jsonTok = a(24, 91);
  out.push(e('"api_key": json', jsonTok, `{"api_key": "${jsonTok}"}`));
  const header = a(32, 92);
  out.push(e('X-Api-Key header', header, `X-Api-Key: ${header}`));
  const bearer = `${a(24, 93)}.${a(16, 94)}`;
  out.push(e('Authorization: Bearer', bearer, `Authorization: Bearer ${bearer}`));
  const bearer2 = chars(URLSAFE, 40, 95);
  out.push(e('curl -H bearer', bearer2, `curl -H "Authorization: Bearer ${bearer2}" https://api.internal`));
  const basic = chars(B64, 24, 96);
  out.push(e('Authorization: Basic', basic, `Authorization: Basic ${basic}`));
  const flagPw = pw(97);
  out.push(e('--password flag', flagPw, `psql --password=${flagPw} -h db`));
  return out;
}

/** Texts that must pass: prose about secrets, placeholders, references to variables. */
export const HARMLESS = [
  'Use a token to authenticate against the API.',
  'password=changeme',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable, as people write it
  'token: ${GITHUB_TOKEN}',
  'export API_KEY=$API_KEY',
  'curl -u $USER:$TOKEN https://ci.internal',
  'postgres://user:password@localhost/app',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable, as people write it
  'postgres://admin:${DB_PASS}@db/app',
  'docker run -u 1000:1000 node',
  'apiKey: process.env.API_KEY',
  'Authorization: Bearer <token>',
  'max_tokens: 1024',
  // GitHub Actions permissions, written in prose: the value is a word, the bracket is the sentence's
  'grants extra scopes (pull-requests: write, id-token: write) only on the jobs that need them',
  'permissions: { id-token: write }',
  'const token = await fetchToken()',
  'SECRET_FILE=/etc/app/secret.yaml',
  'git push -u origin HEAD:main',
];
