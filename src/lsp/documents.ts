/**
 * The documents the editor has open: their text as the buffer holds it (saved
 * or not), kept up to date from didOpen/didChange (whole or incremental
 * changes; positions count UTF-16 code units, as JavaScript strings do), and
 * their lines, split once per version.
 */

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}

export interface ContentChange {
  range?: Range;
  text: string;
}

export class Doc {
  private cached?: string[];
  constructor(
    readonly uri: string,
    public text: string,
    public version: number,
  ) {}

  /** The buffer's lines, without their line ends. */
  get lines(): string[] {
    if (!this.cached) {
      const ls = this.text.split('\n');
      if (ls.length && ls[ls.length - 1] === '') ls.pop(); // the newline that ends the last line
      this.cached = ls.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
    }
    return this.cached;
  }

  /** The offset in `text` of a position (clamped to the text, as the protocol asks). */
  offsetAt(p: Position): number {
    let at = 0;
    for (let l = 0; l < p.line; l++) {
      const nl = this.text.indexOf('\n', at);
      if (nl < 0) return this.text.length;
      at = nl + 1;
    }
    const eol = this.text.indexOf('\n', at);
    const lineEnd = eol < 0 ? this.text.length : eol;
    return Math.min(at + Math.max(0, p.character), lineEnd);
  }

  apply(changes: readonly ContentChange[], version: number): void {
    for (const c of changes) {
      if (typeof c?.text !== 'string') continue;
      if (!c.range) this.text = c.text;
      else {
        const s = this.offsetAt(c.range.start);
        const e = Math.max(s, this.offsetAt(c.range.end));
        this.text = this.text.slice(0, s) + c.text + this.text.slice(e);
      }
    }
    this.version = version;
    this.cached = undefined;
  }
}

export class Documents {
  private readonly docs = new Map<string, Doc>();
  get(uri: string): Doc | undefined {
    return this.docs.get(uri);
  }
  open(uri: string, text: string, version: number): Doc {
    const d = new Doc(uri, text, version);
    this.docs.set(uri, d);
    return d;
  }
  close(uri: string): void {
    this.docs.delete(uri);
  }
  all(): Doc[] {
    return [...this.docs.values()];
  }
}
