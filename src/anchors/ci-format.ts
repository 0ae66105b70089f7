/**
 * `git mem ci` output formats, pure: GitHub workflow annotations, a Markdown
 * PR comment, SARIF 2.1.0, JUnit XML and JSON. Each takes the same report.
 */

import type { Loc } from './types.js';
import { locString, STALE_VERDICTS } from './types.js';

export interface CiItem {
  id: string;
  title: string;
  type?: string;
  anchor: number;
  status: string;
  reason: string;
  confidence: number;
  from: Loc;
  to: Loc | null;
  stale: boolean;
}

export interface CiReport {
  base: string;
  head: string;
  items: CiItem[];
  failOn: 'stale' | 'changed' | 'never';
  failed: boolean;
  /** Anchors not checked: their path or lines break the record limits (a record git mem doctor names). */
  invalid?: Array<{ id: string; anchor: number; path: string; problem: string }>;
  /** The repository's address for SARIF's versionControlProvenance (repositoryUri); none: no provenance. */
  repository?: string;
}

/**
 * The repository's address, for code scanning to tie a SARIF run to it: from the CI environment
 * (GitHub Actions: GITHUB_SERVER_URL/GITHUB_REPOSITORY; GitLab: CI_PROJECT_URL), else from the
 * origin remote's URL. Only http(s) and ssh addresses, never with credentials in them (a CI clone's
 * origin may carry a job token); undefined when there is no such address.
 */
export function repositoryUri(
  env: Record<string, string | undefined>,
  originUrl?: string,
): string | undefined {
  const web = (u: string | undefined) => {
    try {
      const url = new URL(u ?? '');
      if (url.protocol !== 'https:' && url.protocol !== 'http:' && url.protocol !== 'ssh:') return undefined;
      url.username = '';
      url.password = '';
      url.search = '';
      url.hash = '';
      return url.href.replace(/\/+$/, '');
    } catch {
      return undefined;
    }
  };
  const repo = env.GITHUB_REPOSITORY?.trim();
  if (repo && /^[\w-]+\/(?!\.\.?$)[\w.-]+$/.test(repo)) {
    const server = web(env.GITHUB_SERVER_URL?.trim() || 'https://github.com');
    if (server) return `${server}/${repo}`;
  }
  const gitlab = web(env.CI_PROJECT_URL?.trim());
  if (gitlab) return gitlab;
  // scp-like ssh (git@host:owner/name.git) has no credentials to strip; other forms go through URL
  const o = originUrl?.trim();
  if (o && /^[\w.-]+@[\w.-]+:[^\s]+$/.test(o)) return o;
  return web(o);
}

export const FORMATS = ['github', 'markdown', 'sarif', 'junit', 'json'] as const;
export type CiFormat = (typeof FORMATS)[number];

/** Whether the report fails the build under the --fail-on policy. */
export function shouldFail(items: readonly CiItem[], failOn: CiReport['failOn']): boolean {
  if (failOn === 'never') return false;
  if (failOn === 'changed') return items.some((i) => i.status !== 'fresh');
  return items.some((i) => i.stale);
}

/** Where to point a reader: the new location when there is one, else the old. */
export function where(i: CiItem): Loc {
  return i.to ?? i.from;
}

const short = (id: string) => id.slice(0, 12);

/** Whether the memory's code only changed place (moved, or its file renamed): nothing to review. */
function onlyMoved(i: CiItem): boolean {
  return !i.stale && (i.status === 'moved' || i.status === 'renamed') && !!i.to;
}

function message(i: CiItem): string {
  if (onlyMoved(i) && i.to)
    return `Memory ${short(i.id)} "${i.title}" ${i.status === 'renamed' ? 'followed its file' : 'moved'}: now at ${locString(i.to)}, was at ${locString(i.from)} (${i.reason}).`;
  const moved =
    i.to && locString(i.to) !== locString(i.from) && !i.reason.includes(locString(i.to))
      ? ` (now ${locString(i.to)})`
      : '';
  return `Memory ${short(i.id)} "${i.title}" is ${i.status}: ${i.reason}${moved}. Anchored at ${locString(i.from)}.`;
}

// ------------------------------------------------------------------ github

function escData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
function escProp(s: string): string {
  return escData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** What to do about one annotated memory: nothing when its code only moved. */
function advice(i: CiItem): string {
  if (onlyMoved(i))
    return 'The memory still holds: nothing to do (git mem check on the default branch records the new place).';
  return `Update it (git mem update ${short(i.id)}), confirm it (git mem reanchor ${short(i.id)}) or retire it.`;
}

/** GitHub Actions workflow commands: an annotation on the changed lines of each affected anchor. */
export function formatGithub(r: CiReport): string {
  const out: string[] = [];
  for (const i of r.items) {
    if (i.status === 'fresh') continue;
    const level = i.stale ? 'warning' : 'notice';
    const w = where(i);
    const props = [`file=${escProp(w.path)}`];
    if (w.lines) props.push(`line=${w.lines[0]}`, `endLine=${w.lines[1]}`);
    props.push(`title=${escProp(`git-mem: memory ${i.status}`)}`);
    out.push(`::${level} ${props.join(',')}::${escData(`${message(i)} ${advice(i)}`)}`);
  }
  for (const x of r.invalid ?? [])
    out.push(
      `::warning title=${escProp('git-mem: anchor not checked')}::${escData(`Memory ${short(x.id)} anchor ${x.anchor}: ${x.problem}. Run git mem doctor.`)}`,
    );
  const stale = r.items.filter((i) => i.stale).length;
  out.push(
    `git-mem: ${r.items.length} anchor${r.items.length === 1 ? '' : 's'} touched by ${short(r.base)}..${short(r.head)}; ${stale} stale`,
  );
  if (r.failed)
    out.push(
      `::error::git-mem: ${stale} memor${stale === 1 ? 'y is' : 'ies are'} stale after this change (--fail-on ${r.failOn})`,
    );
  return `${out.join('\n')}\n`;
}

// ------------------------------------------------------------------ markdown

function mdCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ').replace(/</g, '&lt;');
}

/** A PR comment body. */
function formatMarkdown(r: CiReport): string {
  const touched = r.items.filter((i) => i.status !== 'fresh');
  const stale = r.items.filter((i) => i.stale);
  const lines = ['<!-- git-mem:ci -->', '### git-mem: memories anchored to code this change touches', ''];
  if (!r.items.length || !touched.length) {
    lines.push(
      `No memory is affected by ${short(r.base)}..${short(r.head)}${r.items.length ? ` (${r.items.length} anchor${r.items.length === 1 ? '' : 's'} checked, all fresh)` : ''}.`,
    );
    return `${lines.join('\n')}\n`;
  }
  lines.push(
    `${stale.length} stale, ${touched.length - stale.length} moved or renamed, ${r.items.length - touched.length} fresh (${short(r.base)}..${short(r.head)}).`,
    '',
    '| memory | anchor | verdict | reason |',
    '|---|---|---|---|',
  );
  for (const i of touched) {
    const to = i.to && locString(i.to) !== locString(i.from) ? ` → \`${mdCell(locString(i.to))}\`` : '';
    lines.push(
      `| \`${short(i.id)}\` ${mdCell(i.title)} | \`${mdCell(locString(i.from))}\`${to} | ${i.stale ? '⚠️ ' : ''}${i.status} | ${mdCell(i.reason)} |`,
    );
  }
  lines.push(
    '',
    'Stale memories may now mislead agents. For each: fix it with `git mem update ID`, confirm it still holds with `git mem reanchor ID`, or retire it with `git mem rm ID` / `git mem supersede OLD NEW`.',
  );
  return `${lines.join('\n')}\n`;
}

// ------------------------------------------------------------------ sarif

const SARIF_SCHEMA_URI = 'https://json.schemastore.org/sarif-2.1.0.json';

const RULES: Record<string, string> = {
  moved: 'The anchored text moved; the anchor was relocated.',
  renamed: 'The anchored file was renamed; the anchor followed it.',
  changed: 'The anchored code was edited: the memory may be stale.',
  symbol_removed: 'The anchored symbol no longer exists: the memory may be stale.',
  symbol_renamed: 'The anchored symbol was renamed: the memory may be stale.',
  deleted: 'The anchored file was deleted: the memory may be stale.',
  fresh: 'The anchored code is unchanged.',
};

export function buildSarif(r: CiReport, version = '0.1.0'): Record<string, unknown> {
  const used = [...new Set(r.items.filter((i) => i.status !== 'fresh').map((i) => i.status))].sort();
  const rules = used.map((s) => ({
    id: `git-mem/${s}`,
    name: s.replace(/(^|_)(\w)/g, (_m, _u, c: string) => c.toUpperCase()),
    shortDescription: { text: RULES[s] ?? s },
    defaultConfiguration: { level: STALE_VERDICTS.has(s) ? 'warning' : 'note' },
  }));
  const results = r.items
    .filter((i) => i.status !== 'fresh')
    .map((i) => {
      const w = where(i);
      const region: Record<string, number> = {};
      if (w.lines) {
        region.startLine = w.lines[0];
        region.endLine = w.lines[1];
      }
      return {
        ruleId: `git-mem/${i.status}`,
        ruleIndex: used.indexOf(i.status),
        level: i.stale ? 'warning' : 'note',
        message: { text: message(i) },
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri: w.path, uriBaseId: '%SRCROOT%' },
              ...(w.lines ? { region } : {}),
            },
          },
        ],
        partialFingerprints: { 'gitMemAnchor/v1': `${i.id}:${i.anchor}` },
        properties: {
          memoryId: i.id,
          memoryTitle: i.title,
          verdict: i.status,
          confidence: i.confidence,
          anchoredAt: locString(i.from),
        },
      };
    });
  return {
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'git-mem',
            version,
            informationUri: 'https://www.npmjs.com/package/git-mem',
            rules,
          },
        },
        automationDetails: { id: `git-mem/ci/${short(r.base)}..${short(r.head)}` },
        ...(r.repository
          ? { versionControlProvenance: [{ repositoryUri: r.repository, revisionId: r.head }] }
          : {}),
        results,
      },
    ],
  };
}

function formatSarif(r: CiReport): string {
  return `${JSON.stringify(buildSarif(r), null, 2)}\n`;
}

// ------------------------------------------------------------------ junit

function xml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '');
}

/** One test case per anchor; stale anchors are failures (or all non-fresh with --fail-on changed). */
function formatJunit(r: CiReport): string {
  const failing = (i: CiItem) => (r.failOn === 'changed' ? i.status !== 'fresh' : i.stale);
  const failures = r.items.filter(failing).length;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="git-mem" tests="${r.items.length}" failures="${failures}">`,
    `  <testsuite name="git-mem anchors ${xml(short(r.base))}..${xml(short(r.head))}" tests="${r.items.length}" failures="${failures}" errors="0" skipped="0">`,
  ];
  for (const i of r.items) {
    const name = `${locString(i.from)} [${i.status}]`;
    lines.push(
      `    <testcase classname="git-mem.${xml(short(i.id))}" name="${xml(name)}" file="${xml(where(i).path)}">`,
    );
    if (failing(i))
      lines.push(
        `      <failure message="${xml(`${i.status}: ${i.reason}`)}" type="${xml(i.status)}">${xml(message(i))}</failure>`,
      );
    else if (i.status !== 'fresh') lines.push(`      <system-out>${xml(message(i))}</system-out>`);
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>', '</testsuites>');
  return `${lines.join('\n')}\n`;
}

// ------------------------------------------------------------------ json

function formatJson(r: CiReport): string {
  return `${JSON.stringify({ base: r.base, head: r.head, failOn: r.failOn, failed: r.failed, items: r.items, invalid: r.invalid ?? [] }, null, 2)}\n`;
}

export function formatCi(r: CiReport, f: CiFormat): string {
  switch (f) {
    case 'github':
      return formatGithub(r);
    case 'markdown':
      return formatMarkdown(r);
    case 'sarif':
      return formatSarif(r);
    case 'junit':
      return formatJunit(r);
    default:
      return formatJson(r);
  }
}
