#!/usr/bin/env node
// The registry these machines reach serves only the platform packages that can
// run here (linux x64/arm64, glibc), so `npm install` writes a lock file without
// the other platforms' optional binaries (biome, esbuild, rollup) and then
// `npm ci` refuses that same lock as "out of sync". This adds the missing
// optional entries with the os/cpu/libc their names state, exactly as npm on
// an unrestricted registry would record them; npm ci then skips them here as
// it would on any machine of another platform. Run after changing dependencies:
//   node scripts/lock-platforms.mjs
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);

function missing() {
  try {
    execFileSync('npm', ['ci', '--dry-run', '--ignore-scripts'], { stdio: 'pipe', encoding: 'utf8' });
    return [];
  } catch (e) {
    const out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    return [...out.matchAll(/Missing: (@?[^@\s]+)@\S* from lock file/g)].map((m) => m[1]);
  }
}

const OS = ['android', 'darwin', 'linux', 'win32', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony', 'cygwin'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 'riscv64', 's390x', 'loong64', 'mips64el', 'mipsel', 'wasm32', 'ppc'];

function platformOf(name) {
  const base = name.split('/').pop();
  const parts = base.split('-');
  const os = parts.find((p) => OS.includes(p)) ?? (base.includes('sunos') ? 'sunos' : undefined);
  let cpu = parts.find((p) => CPU.includes(p));
  if (!cpu && base.includes('x86_64')) cpu = 'x64';
  const entry = {};
  if (os) entry.os = [os];
  if (cpu) entry.cpu = [cpu];
  if (/musl/.test(base)) entry.libc = ['musl'];
  else if (/gnu/.test(base) && os === 'linux') entry.libc = ['glibc'];
  return entry;
}

for (let round = 0; round < 5; round++) {
  const names = missing();
  if (!names.length) {
    console.log('package-lock.json: npm ci accepts it');
    process.exit(0);
  }
  const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
  const pkgs = lock.packages;
  for (const name of names) {
    // the version the dependent asks for, and whether it is a dev dependency
    let version;
    let dev = true;
    for (const [path, p] of Object.entries(pkgs)) {
      const spec = p.optionalDependencies?.[name];
      if (spec) {
        version = spec.replace(/^[\^~=]/, '');
        dev = dev && !!p.dev;
        void path;
      }
    }
    if (!version) {
      console.error(`cannot tell which version of ${name} is wanted`);
      process.exit(1);
    }
    const fields = { ...(dev ? { dev: true } : {}), optional: true, ...platformOf(name) };
    // keys in npm's own order (version first, the rest alphabetical), or the next
    // `npm install` rewrites every entry this adds and leaves the tree dirty
    const entry = { version };
    for (const k of Object.keys(fields).sort()) entry[k] = fields[k];
    pkgs[`node_modules/${name}`] = entry;
  }
  lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`added ${names.length} optional platform entries`);
}
console.error('package-lock.json: still refused by npm ci');
process.exit(1);
