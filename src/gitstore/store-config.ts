/**
 * What the store reads of git's configuration and the environment: every config entry (one
 * `git config --list` per store), the committer's identity, whether commits are signed, and the
 * actor (a person or an agent) its commits name. A long-lived store forgets them between the
 * commands it runs for others.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { actorFromEnv, type Provenance } from '../model/provenance.js';
import { type GitProcess, git, output } from './git.js';
import { StoreCatalog } from './store-catalog.js';
import { CONFIG_LIST } from './store-start.js';

export interface Ident {
  name: string;
  email: string;
}

/** An identity as a record and git name it: `Name <email>`. */
export const identLine = (i: Ident): string => `${i.name} <${i.email}>`;

export class StoreConfig extends StoreCatalog {
  identity?: Ident;
  /**
   * Who is writing: a person, or an agent (its name, session, model). New
   * records keep it (`by`); every commit names it in its trailers. Set by the
   * MCP server and the agent hooks; otherwise read from the environment.
   */
  actor?: Provenance;

  private configP?: Promise<Array<{ scope: string; key: string; value: string }>>;

  /**
   * Forgets what was read of git's configuration and the environment (the identity, signing,
   * the actor), so the next read is afresh, as a new process's would be. A long-lived store
   * re-reads git config by itself once the clone's config file changes (gitConfig); this is for
   * a caller that changes what it cannot see, such as the environment (the ops tests' stores).
   */
  forgetSettings(): void {
    this.configP = undefined;
    this.signP = undefined;
    this.identity = undefined;
    this.actor = undefined;
  }

  /** Whether the config read has not started yet (StoreWriter.prepareWrite starts it beside the writers). */
  protected configUnread(): boolean {
    return !this.configP;
  }

  /** The stamp (size and mtime) of this clone's config files when configP was read. */
  private configStamp?: string;

  /**
   * Every git config entry with its scope, in git's order: one `git config --list` per store
   * (`proc`: that process, started with others; CONFIG_LIST are its arguments). A long-lived
   * store (the MCP server, the UI) reads it again once this clone's config files changed, so a
   * setting made meanwhile (`git mem config set secret-scan warn`) applies at its next write, as
   * it would in a new process.
   */
  gitConfig(proc?: GitProcess): Promise<Array<{ scope: string; key: string; value: string }>> {
    if (this.longLived) {
      const stamp = [join(this.repo.commonDir, 'config'), join(this.repo.gitDir, 'config.worktree')]
        .map((f) => {
          try {
            const st = statSync(f);
            return `${st.size}:${st.mtimeMs}`;
          } catch {
            return '-';
          }
        })
        .join(' ');
      if (stamp !== this.configStamp) {
        this.configStamp = stamp;
        this.configP = undefined;
        this.signP = undefined;
      }
    }
    if (this.configP) {
      proc?.stdin.destroy(); // read already: the process given is not needed
      return this.configP;
    }
    this.configP = (
      proc
        ? output(proc, 'config').then((r) => r.stdout)
        : git(CONFIG_LIST, { cwd: this.repo.cwd, env: this.repo.env, allowFail: true }).then((r) => r.stdout)
    ).then((stdout) => {
      // scope NUL key LF value NUL (a key alone: a boolean true)
      const parts = stdout.toString('utf8').split('\0');
      const out: Array<{ scope: string; key: string; value: string }> = [];
      for (let i = 0; i + 1 < parts.length; i += 2) {
        const kv = parts[i + 1];
        const nl = kv.indexOf('\n');
        out.push({
          scope: parts[i],
          key: nl < 0 ? kv : kv.slice(0, nl),
          value: nl < 0 ? 'true' : kv.slice(nl + 1),
        });
      }
      return out;
    });
    return this.configP;
  }

  /** The actor, as set or as the environment says (src/model/provenance.ts actorFromEnv). */
  writerActor(): Provenance {
    this.actor ??= actorFromEnv(this.repo.env);
    return this.actor;
  }

  private signP?: Promise<boolean>;

  /** Whether commits are signed here, as git decides for `git commit`: `commit.gpgsign` (the last value wins). */
  signsCommits(): Promise<boolean> {
    // git reads its own config (every file, include, and -c): a guess at its files could miss a signer
    this.signP ??= this.gitConfig().then((all) => {
      let v = 'false';
      for (const e of all) if (e.key === 'commit.gpgsign') v = e.value;
      return /^(true|yes|on|1)$/i.test(v.trim());
    });
    return this.signP;
  }

  async ident(): Promise<Ident> {
    if (this.identity) return this.identity;
    const env = this.repo.env;
    let name = env.GIT_AUTHOR_NAME;
    let email = env.GIT_AUTHOR_EMAIL;
    if (!name || !email) {
      // as in git, the last value wins (system < global < local < worktree)
      let cname: string | undefined;
      let cemail: string | undefined;
      for (const e of await this.gitConfig()) {
        if (e.key === 'user.name') cname = e.value;
        if (e.key === 'user.email') cemail = e.value;
      }
      name ||= cname;
      email ||= cemail;
    }
    // CI runners and agent sandboxes often have no identity: never fail a write over it.
    this.identity = { name: name || 'git-mem', email: email || 'git-mem@localhost' };
    return this.identity;
  }
}
