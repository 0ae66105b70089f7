#!/usr/bin/env node
// The positive half of the secret scanner's corpus: realistic fake secrets in
// the shapes of gitleaks' config/gitleaks.toml and secretlint's rule packages,
// each in lines of code, configuration, shell and logs as people write them.
//
// Every secret is drawn from a seeded generator, so the corpus is the same on
// every run and holds no real credential; the provider prefixes are written in
// pieces (cat('gh', 'p_')) so that this file itself holds no literal a secret
// scanner (ours, or a host's push protection) would flag.
//
//   node eval/secrets/positives.mjs [--out FILE]   writes the corpus as JSONL
//                                                    ({format, text, secret} a line)
// eval/secrets/run.mjs and test/secrets-eval.test.ts build it in memory.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cat = (...parts) => parts.join('');

const UP = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOW = 'abcdefghijklmnopqrstuvwxyz';
const DIG = '0123456789';
const HEX = '0123456789abcdef';
const ALNUM = UP + LOW + DIG;
const B64 = `${ALNUM}+/`;
const URLSAFE = `${ALNUM}_-`;

/** A seeded generator (mulberry32): the same corpus on every run. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function positives() {
  const rand = rng(20261206);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const chars = (alphabet, n) => {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
    return s;
  };
  const b64 = (n) => chars(B64, n);
  const hex = (n) => chars(HEX, n);
  const an = (n) => chars(ALNUM, n);
  const digits = (n) => chars('123456789', 1) + chars(DIG, n - 1);
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
  const b64enc = (s) => Buffer.from(s).toString('base64');
  const b64url = (s) => Buffer.from(s).toString('base64url');
  const WORDS = 'orbit maple cactus violet harbor ember quartz falcon juniper nimbus tundra cobalt saffron'.split(' ');
  const SYMS = '!@#%^&*+?';
  /** Passwords as people and generators make them. */
  const password = () => {
    const kind = Math.floor(rand() * 6);
    const w = pick(WORDS);
    if (kind === 0) return `${w[0].toUpperCase()}${w.slice(1)}${digits(4)}${pick([...SYMS])}`;
    if (kind === 1) return an(16);
    if (kind === 2) return `${chars(UP, 2)}${chars(LOW, 4)}${chars(DIG, 3)}${pick([...SYMS])}${an(3)}`;
    if (kind === 3) return hex(32);
    if (kind === 4) return `${pick(WORDS)}-${pick(WORDS)}-${pick(WORDS)}-${digits(2)}`;
    return chars(`${ALNUM}!#%*+-_`, 20);
  };
  const user = () => pick(['admin', 'deploy', 'app', 'svc_billing', 'postgres', 'root', 'ci', 'jenkins']);
  const host = () => pick(['db.internal', '10.0.3.17', 'prod-db-1.acme.io', 'localhost', 'mq.staging.acme.net']);
  const ts = () => `2026-0${1 + Math.floor(rand() * 9)}-1${Math.floor(rand() * 9)}T0${Math.floor(rand() * 9)}:14:07Z`;

  /** Generic contexts for a token with a recognisable shape: the name around it says nothing. */
  const shaped = (envName) => [
    (s) => `${envName}=${s}`,
    (s) => `export ${envName}="${s}"`,
    (s) => `client = Client("${s}")`,
    (s) => `${ts()} DEBUG retrying with credential ${s} (attempt 2)`,
    (s) => `  - name: ${envName}\n    value: "${s}"`,
    (s) => `The staging one is ${s}, rotate it after the demo.`,
    (s) => `curl -H "X-Auth: ${s}" https://api.example.com/v1/status`,
    (s) => `const client = new Client({ auth: '${s}' });`,
    (s) => `cfg.Credential = "${s}"`,
    (s) => `echo ${s} | docker login --password-stdin`,
  ];
  const out = [];
  /** n secrets of one format, each in a context taken in turn. */
  const add = (format, n, make, contexts) => {
    const start = Math.floor(rand() * contexts.length);
    for (let i = 0; i < n; i++) {
      const secret = make(i);
      const ctx = contexts[(start + i) % contexts.length];
      out.push({ format, text: ctx(secret), secret });
    }
  };
  const token = (format, env, n, make) => add(format, n, make, shaped(env));

  // --- cloud providers
  token('aws-access-key-id', 'AWS_ACCESS_KEY_ID', 8, () => cat(pick(['AK', 'AS']), 'IA', chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)));
  add('aws-secret-access-key', 8, () => b64(40), [
    (s) => `aws_secret_access_key = ${s}`,
    (s) => `AWS_SECRET_ACCESS_KEY=${s}`,
    (s) => `  secretAccessKey: "${s}"`,
    (s) => `const creds = { accessKeyId: process.env.AWS_KEY, secretAccessKey: '${s}' };`,
    (s) => `"SecretAccessKey": "${s}",`,
    (s) => `aws configure set aws_secret_access_key ${s}`,
    (s) => `  aws_secret_key: ${s}`,
    (s) => `secret_key = "${s}"`,
  ]);
  token('gcp-api-key', 'GOOGLE_API_KEY', 8, () => cat('AI', 'za', chars(URLSAFE, 35)));
  token('google-oauth-access-token', 'GOOGLE_ACCESS_TOKEN', 8, () => cat('ya', '29.', chars(URLSAFE, 120 + Math.floor(rand() * 60))));
  token('google-oauth-client-secret', 'GOOGLE_CLIENT_SECRET', 6, () => cat('GOC', 'SPX-', chars(URLSAFE, 28)));
  add('gcp-service-account-key', 6, () => `MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ${b64(14)}`, [
    (s) => `  "private_key": "-----BEGIN ${'PRIVATE'} KEY-----\\n${s}\\n${b64(64)}\\n${b64(64)}\\n-----END ${'PRIVATE'} KEY-----\\n",`,
    (s) => `{"type": "service_account", "project_id": "acme-prod", "private_key": "-----BEGIN ${'PRIVATE'} KEY-----\\n${s}${b64(64)}\\n-----END ${'PRIVATE'} KEY-----\\n"}`,
  ]);
  add('azure-storage-account-key', 6, () => `${b64(86)}==`, [
    (s) => `DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=${s};EndpointSuffix=core.windows.net`,
    (s) => `"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=fn01;AccountKey=${s}"`,
    (s) => `AZURE_STORAGE_KEY=${s}`,
    (s) => `az storage blob upload --account-name acme --account-key ${s} -f out.tgz`,
  ]);
  add('azure-shared-access-key', 8, () => `${b64(43)}=`, [
    (s) => `Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${s}`,
    (s) => `"ServiceBus": "Endpoint=sb://orders.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=${s};EntityPath=orders"`,
    (s) => `HostName=iot-hub-01.azure-devices.net;DeviceId=sensor-7;SharedAccessKey=${s}`,
    (s) => `EVENTHUB_CONN="Endpoint=sb://ev.servicebus.windows.net/;SharedAccessKeyName=listen;SharedAccessKey=${s}"`,
  ]);
  add('azure-sas-signature', 8, () => `${b64(43).replace(/\+/g, '%2B').replace(/\//g, '%2F')}%3D`, [
    (s) => `https://acmelogs.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=sco&sp=rwdlacx&se=2026-12-31T23:59:59Z&st=2026-01-01T00:00:00Z&spr=https&sig=${s}`,
    (s) => `AZURE_SAS_TOKEN="?sv=2021-08-06&ss=bfqt&srt=sco&sp=rl&se=2027-01-01T00:00:00Z&sig=${s}"`,
    (s) => `azcopy copy ./dist "https://cdn01.blob.core.windows.net/web?sp=racwdl&st=2026-02-01&se=2026-03-01&sv=2022-11-02&sr=c&sig=${s}" --recursive`,
    (s) => `sas_url: "https://x.queue.core.windows.net/jobs?sv=2019-12-12&sig=${s}&se=2026-05-01"`,
  ]);
  add('azure-ad-client-secret', 6, () => `${an(3)}${digits(1)}${cat('Q', '~')}${chars(`${ALNUM}_~.-`, 34)}`, shaped('AZURE_CLIENT_SECRET'));
  // --- source hosts and CI
  token('github-classic-token', 'GH_TOKEN', 8, () => cat('gh', 'p_', an(36)));
  token('github-app-token', 'GITHUB_APP_TOKEN', 8, () => cat('gh', pick(['o', 'u', 's', 'r']), '_', an(36)));
  token('github-fine-grained-token', 'GITHUB_PAT', 6, () => cat('github', '_pat_', chars(`${UP}${DIG}`, 22), '_', an(59)));
  token('gitlab-token', 'GITLAB_TOKEN', 8, () => cat(pick(['glpat-', 'gldt-', 'glrt-', 'glptt-']), chars(URLSAFE, 20)));
  add('git-credential-url', 6, (i) => (i % 2 ? cat('gh', 'p_', an(36)) : an(20)), [
    (s) => `git clone https://x-access-token:${s}@github.com/acme/infra.git`,
    (s) => `https://oauth2:${s}@gitlab.com/acme/api.git`,
    (s) => `remote.origin.url=https://deploy:${s}@git.acme.io/acme/app.git`,
  ]);
  // --- chat
  add('slack-token', 10, (i) => {
    const t = ['xoxb', 'xoxp', 'xoxa', 'xoxr', 'xoxe'][i % 5];
    if (t === 'xoxe') return cat('xo', 'xe-1-', chars(`${UP}${DIG}`, 140));
    if (t === 'xoxa' || t === 'xoxr') return cat('xo', t.slice(2), '-2-', digits(12), '-', digits(12), '-', hex(64));
    return cat('xo', t.slice(2), '-', digits(12), '-', digits(13), '-', an(24));
  }, shaped('SLACK_TOKEN'));
  add('slack-config-token', 4, () => cat('xo', 'xe.xo', 'xp-1-', chars(`${UP}${DIG}`, 164)), shaped('SLACK_CONFIG_TOKEN'));
  token('slack-webhook', 'SLACK_WEBHOOK_URL', 6, () => cat('https://hooks.', 'slack', '.com/services/T', chars(`${UP}${DIG}`, 10), '/B', chars(`${UP}${DIG}`, 10), '/', an(24)));
  token('discord-webhook', 'DISCORD_WEBHOOK', 4, () => cat('https://discord.com/api/', 'webhooks/', digits(18), '/', chars(URLSAFE, 68)));
  token('discord-bot-token', 'DISCORD_TOKEN', 6, () => `${b64enc(digits(18)).replace(/=+$/, '')}.${chars(URLSAFE, 6)}.${chars(URLSAFE, 38)}`);
  token('telegram-bot-token', 'TELEGRAM_BOT_TOKEN', 6, () => cat(digits(10), ':A', 'A', chars(URLSAFE, 33)));
  // --- payments and SaaS
  token('stripe-secret-key', 'STRIPE_SECRET_KEY', 10, () => cat(pick(['s', 'r']), 'k_', pick(['live', 'test']), '_', an(pick([24, 99]))));
  token('stripe-webhook-secret', 'STRIPE_WEBHOOK_SECRET', 6, () => cat('wh', 'sec_', an(32)));
  token('twilio-api-key', 'TWILIO_API_KEY', 6, () => cat('S', 'K', hex(32)));
  add('twilio-auth-token', 4, () => hex(32), [
    (s) => `TWILIO_AUTH_TOKEN=${s}`,
    (s) => `client = Client(account_sid, auth_token="${s}")`,
    (s) => `  authToken: '${s}',`,
    (s) => `twilio_auth_token: ${s}`,
  ]);
  token('sendgrid-api-key', 'SENDGRID_API_KEY', 6, () => cat('S', 'G.', chars(URLSAFE, 22), '.', chars(URLSAFE, 43)));
  token('mailgun-api-key', 'MAILGUN_API_KEY', 6, (i) => (i % 2 ? cat('ke', 'y-', hex(32)) : `${hex(32)}-${hex(8)}-${hex(8)}`));
  token('mailchimp-api-key', 'MAILCHIMP_API_KEY', 4, () => `${hex(32)}-us${digits(2)}`);
  token('sendinblue-api-key', 'BREVO_API_KEY', 4, () => cat('xkey', 'sib-', hex(64), '-', an(16)));
  token('shopify-token', 'SHOPIFY_ACCESS_TOKEN', 6, () => cat('shp', pick(['at', 'ca', 'pa', 'ss']), '_', hex(32)));
  token('square-token', 'SQUARE_ACCESS_TOKEN', 4, () => cat(pick(['EAAA', 'sq0atp-', 'sq0csp-']), chars(URLSAFE, 60)));
  token('postman-api-key', 'POSTMAN_API_KEY', 4, () => cat('PM', 'AK-', hex(24), '-', hex(34)));
  // --- package registries
  add('npm-token', 8, () => cat('np', 'm_', an(36)), [
    ...shaped('NPM_TOKEN').slice(0, 6),
    (s) => `//registry.npmjs.org/:_authToken=${s}`,
    (s) => `npm config set //registry.npmjs.org/:_authToken ${s}`,
  ]);
  add('npmrc-auth', 4, () => b64enc(`${user()}:${password()}`), [
    (s) => `_auth=${s}`,
    (s) => `//npm.acme.io/:_auth="${s}"`,
  ]);
  token('pypi-token', 'TWINE_PASSWORD', 6, () => cat('py', 'pi-', 'AgEIcHlwaS5vcmc', chars(URLSAFE, 70 + Math.floor(rand() * 80))));
  token('rubygems-token', 'GEM_HOST_API_KEY', 4, () => cat('ruby', 'gems_', hex(48)));
  token('docker-pat', 'DOCKERHUB_TOKEN', 4, () => cat('dckr', '_pat_', chars(URLSAFE, 27)));
  add('docker-config-auth', 8, () => b64enc(`${user()}:${password()}`), [
    (s) => `{"auths": {"https://index.docker.io/v1/": {"auth": "${s}"}}}`,
    (s) => `        "auth": "${s}"`,
    (s) => `{"auths":{"ghcr.io":{"auth":"${s}","email":"ci@acme.io"}}}`,
    (s) => `  .dockerconfigjson: '{"auths":{"registry.acme.io":{"auth":"${s}"}}}'`,
  ]);
  // --- AI
  token('openai-api-key', 'OPENAI_API_KEY', 8, (i) => (i % 2 ? cat('s', 'k-proj-', chars(URLSAFE, 74), cat('T3Blbk', 'FJ'), chars(URLSAFE, 74)) : cat('s', 'k-', an(20), cat('T3Blbk', 'FJ'), an(20))));
  token('anthropic-api-key', 'ANTHROPIC_API_KEY', 6, () => cat('s', 'k-ant-', pick(['api03', 'admin01']), '-', chars(URLSAFE, 93), 'AA'));
  token('huggingface-token', 'HF_TOKEN', 6, () => cat('h', 'f_', an(34)));
  token('perplexity-groq-key', 'LLM_API_KEY', 4, (i) => (i % 2 ? cat('pp', 'lx-', an(48)) : cat('gs', 'k_', an(52))));
  // --- infrastructure
  token('heroku-api-key', 'HEROKU_API_KEY', 4, () => cat('HR', 'KU-AA', chars(URLSAFE, 58)));
  // a UUID is a secret only where its name says so (Heroku's older keys, Snyk, Vault's older tokens)
  add('uuid-secret', 4, () => uuid(), [
    (s) => `HEROKU_API_KEY=${s}`,
    (s) => `  snyk_token: "${s}"`,
    (s) => `export VAULT_TOKEN=${s}`,
    (s) => `heroku_api_key = '${s}'`,
  ]);
  token('digitalocean-token', 'DIGITALOCEAN_TOKEN', 6, () => cat('do', pick(['p', 'o', 'r']), '_v1_', hex(64)));
  add('datadog-key', 6, (i) => (i % 2 ? hex(40) : hex(32)), [
    (s) => `DD_API_KEY=${s}`,
    (s) => `datadog_api_key = "${s}"`,
    (s) => `  DD_APP_KEY: ${s}`,
    (s) => `datadog:\n  apiKey: ${s}`,
  ]);
  token('newrelic-key', 'NEW_RELIC_LICENSE_KEY', 6, () => cat('NR', pick(['AK', 'II']), '-', chars(`${UP}${DIG}`, 27)));
  token('vault-token', 'VAULT_TOKEN', 6, () => cat('hv', pick(['s', 'b']), '.', chars(URLSAFE, 90 + Math.floor(rand() * 60))));
  token('databricks-token', 'DATABRICKS_TOKEN', 4, () => cat('da', 'pi', hex(32)));
  token('age-secret-key', 'SOPS_AGE_KEY', 4, () => cat('AGE-', 'SECRET-', 'KEY-1', chars(`${UP}${DIG}`, 58)));
  token('linear-api-key', 'LINEAR_API_KEY', 4, () => cat('lin', '_api_', an(40)));
  token('sentry-token', 'SENTRY_AUTH_TOKEN', 4, () => cat('sntr', 'yu_', hex(64)));
  token('grafana-token', 'GRAFANA_TOKEN', 4, (i) => (i % 2 ? cat('gl', 'sa_', an(32), '_', hex(8)) : cat('gl', 'c_', b64(80))));
  token('doppler-token', 'DOPPLER_TOKEN', 4, () => cat('dp', '.pt.', an(43)));
  token('dynatrace-token', 'DT_API_TOKEN', 4, () => cat('dt0', 'c01.', chars(`${UP}${DIG}`, 24), '.', chars(`${UP}${DIG}`, 64)));
  token('pulumi-token', 'PULUMI_ACCESS_TOKEN', 4, () => cat('pu', 'l-', hex(40)));
  token('terraform-cloud-token', 'TFE_TOKEN', 4, () => cat(an(14), '.atlas', 'v1.', chars(URLSAFE, 67)));
  token('tailscale-key', 'TS_AUTHKEY', 4, () => cat('ts', 'key-', pick(['auth', 'api', 'client']), '-', an(12), '-', an(30)));
  token('vercel-figma-notion', 'INTEGRATION_TOKEN', 6, (i) => [cat('vc', 'p_', an(40)), cat('fi', 'gd_', chars(URLSAFE, 40)), cat('nt', 'n_', digits(11), an(35))][i % 3]);
  token('cloudflare-origin-ca-key', 'CF_ORIGIN_CA_KEY', 2, () => cat('v1', '.0-', hex(24), '-', hex(146)));
  token('planetscale-password', 'DATABASE_PASSWORD', 4, () => cat('psc', 'ale_pw_', chars(URLSAFE, 43)));
  token('facebook-access-token', 'FB_PAGE_TOKEN', 4, () => cat('EA', 'AM', an(140)));
  token('sonarqube-token', 'SONAR_TOKEN', 4, () => cat('sq', pick(['p', 'a', 'u']), '_', hex(40)));
  token('slack-workflow-webhook', 'SLACK_WORKFLOW_URL', 2, () => cat('https://hooks.', 'slack', '.com/workflows/T', chars(`${UP}${DIG}`, 10), '/A', chars(`${UP}${DIG}`, 10), '/', digits(18), '/', an(24)));
  // a provider's key under its name only: HEROKU_KEY, mapsKey (no prefix tells what it is)
  add('provider-named-key', 6, () => (rand() < 0.5 ? uuid() : an(24)), [
    (s) => `HEROKU_KEY = "${s}"`,
    (s) => `const mapsKey = '${s}';`,
    (s) => `ALGOLIA_ADMIN_KEY=${s}`,
    (s) => `  mixpanelKey: "${s}"`,
  ]);
  token('jwt', 'SESSION_JWT', 8, () => {
    const head = b64url(JSON.stringify({ alg: pick(['HS256', 'RS256']), typ: 'JWT' }));
    const body = b64url(JSON.stringify({ sub: digits(8), name: pick(WORDS), iat: 1760000000 + Math.floor(rand() * 1e7) }));
    return `${head}.${body}.${chars(URLSAFE, 43)}`;
  });
  // --- private keys
  const pemBody = (magic, lines) => {
    const all = magic + b64(64 * lines - magic.length);
    return all.match(/.{1,64}/g);
  };
  const PEM = [
    ['RSA PRIVATE KEY', 'MIIEowIBAAKCAQEA'],
    ['PRIVATE KEY', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC'],
    ['EC PRIVATE KEY', 'MHcCAQEEI'],
    ['ENCRYPTED PRIVATE KEY', 'MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG'],
    ['DSA PRIVATE KEY', 'MIIBuwIBAAKBgQD'],
  ];
  add('pem-private-key', 10, (i) => pemBody(PEM[i % PEM.length][1], 8).join('\n'), [
    (s) => {
      const [label] = PEM.find(([, m]) => s.startsWith(m));
      return `-----BEGIN ${label}-----\n${s}\n-----END ${label}-----`;
    },
  ]);
  add('openssh-private-key', 6, () => (`b3BlbnNzaC1rZXktdjEAAAAA${b64(70 * 6 - 24)}`.match(/.{1,70}/g) ?? []).join('\n'), [
    (s) => `-----BEGIN OPENSSH ${'PRIVATE'} KEY-----\n${s}\n-----END OPENSSH PRIVATE KEY-----`,
    (s) => `cat > ~/.ssh/id_ed25519 <<'EOF'\n-----BEGIN OPENSSH ${'PRIVATE'} KEY-----\n${s}\n-----END OPENSSH PRIVATE KEY-----\nEOF`,
  ]);
  add('private-key-split', 8, (i) => pemBody(PEM[i % 3][1], 1)[0], [
    (s) => `KEY = ("-----BEGIN ${'PRIVATE'} KEY-----\\n"\n       "${s}\\n"\n       "${b64(64)}\\n"\n       "-----END PRIVATE KEY-----\\n")`,
    (s) => `const key =\n  '-----BEGIN RSA ${'PRIVATE'} KEY-----\\n' +\n  '${s}\\n' +\n  '${b64(64)}\\n' +\n  '-----END RSA PRIVATE KEY-----';`,
    (s) => `  ssh_key: |\n    -----BEGIN OPENSSH ${'PRIVATE'} KEY-----\n    ${s}\n    ${b64(64)}`,
    (s) => `-----BEGIN EC ${'PRIVATE'} KEY-----\n${s}\n(truncated)`,
  ]);
  add('private-key-headerless', 8, (i) => pemBody(PEM[i % PEM.length][1], 6).join('\n'), [
    (s) => s,
    (s) => `key body, pasted from the vault:\n${s}`,
    (s) => `    ${s.split('\n').join('\n    ')}`,
    (s) => `SSH_KEY="${s.split('\n').join('\\n')}"`,
  ]);
  add('putty-private-key', 4, () => cat('AAABAQ', b64(58)), [
    (s) => `PuTTY-User-Key-File-${pick(['2', '3'])}: ssh-rsa\nEncryption: none\nComment: rsa-key-20260101\nPublic-Lines: 2\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ${b64(34)}\n${b64(64)}\nPrivate-Lines: 3\n${s}\n${b64(64)}\n${b64(40)}\nPrivate-MAC: ${hex(40)}`,
  ]);
  add('ssh2-private-key', 4, () => cat('P2/56wAAA', b64(55)), [
    (s) => `---- BEGIN SSH2 ENCRYPTED ${'PRIVATE'} KEY ----\nComment: "rsa-key-20260101"\n${s}\n${b64(64)}\n${b64(30)}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----`,
  ]);
  // --- databases and command lines
  add('database-url-password', 10, () => password().replace(/[@/:#?%]/g, 'x'), [
    (s) => `DATABASE_URL=postgres://${user()}:${s}@${host()}:5432/app`,
    (s) => `mongodb+srv://${user()}:${s}@cluster0.ab1cd.mongodb.net/prod?retryWrites=true`,
    (s) => `REDIS_URL=redis://:${s}@${host()}:6379/0`,
    (s) => `  url: mysql://${user()}:${s}@${host()}/orders`,
    (s) => `amqp://${user()}:${s}@${host()}:5672/%2f`,
    (s) => `sqlalchemy.url = postgresql+psycopg2://${user()}:${s}@${host()}/reports`,
    (s) => `jdbc:postgresql://${host()}:5432/app?user=${user()}&password=${s}`,
    (s) => `Server=tcp:${host()},1433;Database=app;User ID=${user()};Password=${s};Encrypt=true;`,
  ]);
  add('pgpassword', 6, () => password(), [
    (s) => `PGPASSWORD=${s} psql -h ${host()} -U ${user()} app`,
    (s) => `export PGPASSWORD='${s}'`,
    (s) => `PGPASSWORD="${s}" pg_dump -h ${host()} -U postgres app > dump.sql`,
    (s) => `      PGPASSWORD: ${s}`,
  ]);
  add('mysql-p', 6, () => password().replace(/[!&*?^#]/g, 'Q'), [
    (s) => `mysql -u root -p${s} -h ${host()} app`,
    (s) => `mysqldump -u${user()} -p${s} --single-transaction orders > orders.sql`,
    (s) => `mysql -h ${host()} -uadmin -p'${s}' -e "show databases"`,
    (s) => `mysqladmin -u root -p"${s}" status`,
  ]);
  add('sshpass', 6, () => password().replace(/[!&*?^#]/g, 'Z'), [
    (s) => `sshpass -p '${s}' ssh ${user()}@${host()}`,
    (s) => `sshpass -p${s} scp build.tgz deploy@${host()}:/srv`,
    (s) => `sshpass -p "${s}" rsync -a dist/ ${user()}@${host()}:/var/www`,
  ]);
  add('cli-password-flag', 6, () => password().replace(/[!&*?^#]/g, 'K'), [
    (s) => `psql --password=${s} -h db`,
    (s) => `docker login -u ci -p ${s} registry.acme.io`,
    (s) => `redis-cli -h ${host()} -a ${s} ping`,
    (s) => `curl -u ${user()}:${s} https://ci.internal/api/jobs`,
    (s) => `htpasswd -b -c .htpasswd admin ${s}`,
    (s) => `vault login -method=userpass username=ops password=${s}`,
  ]);
  add('netrc', 4, () => password(), [
    (s) => `machine api.acme.io login deploy password ${s}`,
    (s) => `machine github.com\n  login ci-bot\n  password ${s}`,
  ]);
  // --- HTTP headers
  add('authorization-basic', 6, () => b64enc(`${user()}:${password()}`), [
    (s) => `Authorization: Basic ${s}`,
    (s) => `curl -H "Authorization: Basic ${s}" https://ci.internal/api`,
    (s) => `headers = {"Authorization": "Basic ${s}"}`,
  ]);
  add('authorization-bearer', 6, () => chars(URLSAFE, 40), [
    (s) => `Authorization: Bearer ${s}`,
    (s) => `curl -H "Authorization: Bearer ${s}" https://api.acme.io/v2/me`,
    (s) => `req.Header.Set("Authorization", "Bearer ${s}")`,
  ]);
  add('authorization-token', 6, () => (rand() < 0.5 ? hex(40) : an(32)), [
    (s) => `Authorization: Token ${s}`,
    (s) => `curl -H 'Authorization: Token token=${s}' https://api.acme.io/items`,
    (s) => `headers = {'Authorization': 'Token ${s}'}`,
  ]);
  add('api-key-header', 4, () => an(32), [
    (s) => `X-Api-Key: ${s}`,
    (s) => `curl -H "x-api-key: ${s}" https://api.acme.io`,
    (s) => `Private-Token: ${s}`,
    (s) => `X-Auth-Token: ${s}`,
  ]);
  add('url-query-token', 4, () => an(32), [
    (s) => `GET /v1/export?format=csv&access_token=${s} HTTP/1.1`,
    (s) => `https://api.acme.io/hooks?api_key=${s}&page=2`,
    (s) => `wget "https://dl.acme.io/build.tgz?token=${s}"`,
    (s) => `redirect to https://app.acme.io/cb?code=abc&client_secret=${s}`,
  ]);
  // --- assignments by name, in many languages
  const CAMEL = ['dbPassword', 'refreshToken', 'secretAccessKey', 'clientSecret', 'apiKey', 'authToken', 'adminPwd', 'smtpPassword', 'signingKey', 'accessToken', 'privateKey', 'webhookSecret'];
  add('camelcase-assignment', 24, () => password(), [
    (s) => `const ${pick(CAMEL)} = "${s}";`,
    (s) => `  ${pick(CAMEL)}: '${s}',`,
    (s) => `${pick(CAMEL)} := "${s}"`,
    (s) => `private static final String ${pick(CAMEL)} = "${s}";`,
    (s) => `val ${pick(CAMEL)} = "${s}"`,
    (s) => `${pick(CAMEL)}: ${s}`,
    (s) => `this.${pick(CAMEL)} = '${s}';`,
    (s) => `var ${pick(CAMEL)} = @"${s}";`,
    (s) => `  "${pick(CAMEL)}": "${s}",`,
    (s) => `config.${pick(CAMEL)} = "${s}"`,
    (s) => `$${pick(CAMEL)} = '${s}';`,
    (s) => `let ${pick(CAMEL)}: &str = "${s}";`,
  ]);
  const ENV = ['DB_PW', 'DB_PASS', 'DB_PASSWORD', 'MYSQL_ROOT_PASSWORD', 'POSTGRES_PASSWORD', 'REDIS_PASSWORD', 'SECRET_KEY', 'DJANGO_SECRET_KEY', 'SECRET_KEY_BASE', 'JWT_SECRET', 'API_KEY', 'APP_KEY', 'SMTP_PASS', 'ADMIN_PWD', 'ENCRYPTION_KEY', 'SESSION_SECRET', 'RABBITMQ_DEFAULT_PASS', 'LDAP_BIND_PW', 'KEYSTORE_PASSPHRASE', 'OAUTH_CLIENT_SECRET'];
  add('env-assignment', 24, () => password(), [
    (s) => `${pick(ENV)}=${s}`,
    (s) => `export ${pick(ENV)}="${s}"`,
    (s) => `${pick(ENV)}='${s}'`,
    (s) => `      - ${pick(ENV)}=${s}`,
    (s) => `ENV ${pick(ENV)}=${s}`,
    (s) => `set ${pick(ENV)}=${s}`,
    (s) => `$env:${pick(ENV)} = "${s}"`,
    (s) => `heroku config:set ${pick(ENV)}=${s}`,
  ]);
  const KEYS = ['password', 'passwd', 'passcode', 'passphrase', 'secret', 'client_secret', 'api_key', 'apikey', 'auth_token', 'token', 'access_key', 'private_key', 'db_password', 'pin_code_secret'];
  add('config-value', 30, () => password(), [
    (s) => `${pick(KEYS)}: ${s}`,
    (s) => `  ${pick(KEYS)}: "${s}"`,
    (s) => `"${pick(KEYS)}": "${s}",`,
    (s) => `${pick(KEYS)} = "${s}"`,
    (s) => `spring.datasource.${pick(['password', 'secret'])}=${s}`,
    (s) => `<${pick(['password', 'secret', 'apiKey'])}>${s}</${'x'}>`.replace('</x>', ''),
    (s) => `define('DB_PASSWORD', '${s}');`,
    (s) => `    'password' => '${s}',`,
    (s) => `<add key="ClearTextPassword" value="${s}" />`,
    (s) => `${pick(KEYS)}=${s}`,
    (s) => `  - --${pick(['password', 'token', 'api-key'])}=${s}`,
    (s) => `cfg["${pick(KEYS)}"] = "${s}"`,
    (s) => `:${pick(['password', 'secret'])} => '${s}',`,
    (s) => `Set-Variable -Name ${pick(['password', 'apiKey'])} -Value "${s}"`,
  ]);
  add('prose-note', 8, () => password(), [
    (s) => `Staging DB: the admin password is ${s} until Friday.`,
    (s) => `Rotated the API token, it was ${s}`,
    (s) => `- changed the deploy password to ${s} (see runbook)`,
    (s) => `Note: SMTP passphrase is now ${s}`,
  ]);
  add('k8s-secret-data', 4, () => b64enc(password()), [
    (s) => `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  password: ${s}`,
    (s) => `kind: Secret\ndata:\n  DB_PASSWORD: ${s}\n  DB_USER: YWRtaW4=`,
  ]);
  // fix the XML context: close the element it opened
  for (const p of out) {
    const m = /^<(password|secret|apiKey)>(.*)$/.exec(p.text);
    if (m) p.text = `<${m[1]}>${m[2]}</${m[1]}>`;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const file = i >= 0 ? process.argv[i + 1] : fileURLToPath(new URL('positives.jsonl', import.meta.url));
  const all = positives();
  writeFileSync(file, `${all.map((p) => JSON.stringify(p)).join('\n')}\n`);
  const formats = new Set(all.map((p) => p.format));
  console.log(`${all.length} positives in ${formats.size} formats -> ${file}`);
}
