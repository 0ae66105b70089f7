/**
 * JSON-RPC 2.0 over the Language Server Protocol's base protocol: each message
 * is `Content-Length: N\r\n\r\n` and N bytes of UTF-8 JSON. Hand-written (about
 * 200 lines) rather than `vscode-jsonrpc`: the server needs framing, requests
 * both ways, notifications and `$/cancelRequest`, nothing else, and the CLI
 * bundle stays free of another runtime dependency.
 *
 * Input is untrusted (any process may speak to a server on stdio): a header
 * block or a body over the limits, or a body that is not JSON, is answered
 * with a JSON-RPC error where it can be and the server goes on; a stream that
 * cannot be framed any more (a header without Content-Length) ends it.
 */
import type { Readable, Writable } from 'node:stream';

/** The largest message body read (a whole file's text arrives in didOpen/didChange). */
export const MAX_BODY = 64 * 1024 * 1024;
const MAX_HEADER = 8 * 1024;

export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ServerNotInitialized: -32002,
  RequestFailed: -32803,
  RequestCancelled: -32800,
} as const;

/** An error a handler throws to answer a request with this code (and data). */
export class ResponseError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export type RequestHandler = (params: unknown, signal: AbortSignal) => unknown;
export type NotificationHandler = (params: unknown) => void;

interface Message {
  jsonrpc?: string;
  id?: number | string | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export class Connection {
  private buf: Buffer = Buffer.alloc(0);
  /** body bytes still to read (-1: reading a header; -2: skipping an oversized body) */
  private want = -1;
  private skipping = 0;
  private readonly requests = new Map<string, RequestHandler>();
  private readonly notifications = new Map<string, NotificationHandler>();
  private readonly running = new Map<string, AbortController>();
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private ended = false;
  readonly closed: Promise<void>;
  private close!: () => void;
  /** Called for a failure that is not the client's (a handler's bug): the server logs it to stderr. */
  onError: (e: unknown) => void = () => {};

  constructor(
    input: Readable,
    private readonly output: Writable,
    /** the largest body read (tests set a small one) */
    private readonly maxBody = MAX_BODY,
  ) {
    this.closed = new Promise((resolve) => {
      this.close = resolve;
    });
    input.on('data', (d: Buffer) => this.feed(d));
    input.once('end', () => this.end());
    input.once('close', () => this.end());
    input.once('error', () => this.end());
  }

  onRequest(method: string, h: RequestHandler): void {
    this.requests.set(method, h);
  }
  onNotification(method: string, h: NotificationHandler): void {
    this.notifications.set(method, h);
  }

  notify(method: string, params?: unknown): void {
    this.write({ jsonrpc: '2.0', method, params });
  }

  /** A request to the client; resolves with its result (rejects with its error). */
  request(method: string, params?: unknown): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.write({ jsonrpc: '2.0', id, method, params });
    });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const c of this.running.values()) c.abort();
    for (const p of this.pending.values()) p.reject(new Error('connection closed'));
    this.pending.clear();
    this.close();
  }

  private write(m: Message): void {
    if (this.ended) return;
    const body = Buffer.from(JSON.stringify(m), 'utf8');
    this.output.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  private feed(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    while (!this.ended) {
      if (this.want === -1) {
        const h = this.buf.indexOf('\r\n\r\n');
        if (h < 0) {
          if (this.buf.length > MAX_HEADER) this.fail('a header block over 8 KiB');
          return;
        }
        const head = this.buf.toString('ascii', 0, h);
        const m = /(?:^|\r\n)content-length:\s*(\d+)\s*(?:\r\n|$)/i.exec(head);
        if (!m) {
          this.fail('a message without Content-Length');
          return;
        }
        this.want = Number(m[1]);
        if (this.want > this.maxBody) {
          // the body is skipped as it arrives, and the client told
          this.skipping = this.want;
          this.want = -2;
        }
        this.buf = this.buf.subarray(h + 4);
      }
      if (this.want === -2) {
        const skip = Math.min(this.skipping, this.buf.length);
        this.skipping -= skip;
        this.buf = this.buf.subarray(skip);
        if (this.skipping) return;
        this.want = -1;
        this.tooLarge();
        continue;
      }
      if (this.buf.length < this.want) return;
      const body = this.buf.toString('utf8', 0, this.want);
      this.buf = this.buf.subarray(this.want);
      this.want = -1;
      let msg: Message;
      try {
        msg = JSON.parse(body);
      } catch {
        this.write({
          jsonrpc: '2.0',
          id: null,
          error: { code: ErrorCodes.ParseError, message: 'body is not JSON' },
        });
        continue;
      }
      if (!msg || typeof msg !== 'object' || Array.isArray(msg)) {
        this.write({
          jsonrpc: '2.0',
          id: null,
          error: { code: ErrorCodes.InvalidRequest, message: 'a message is a JSON object' },
        });
        continue;
      }
      this.dispatch(msg);
    }
  }

  private tooLarge(): void {
    this.write({
      jsonrpc: '2.0',
      id: null,
      error: { code: ErrorCodes.InvalidRequest, message: `a message over ${this.maxBody} bytes was ignored` },
    });
  }

  private fail(why: string): void {
    this.onError(new Error(`git-mem lsp: cannot read the client's messages (${why}); stopping`));
    this.end();
  }

  private dispatch(m: Message): void {
    if (typeof m.method !== 'string') {
      // a response to one of our requests
      if (typeof m.id !== 'number') return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error) p.reject(new ResponseError(m.error.code, String(m.error.message)));
      else p.resolve(m.result);
      return;
    }
    const id = m.id;
    if (id === undefined || id === null) {
      if (m.method === '$/cancelRequest') {
        const c = this.running.get(String((m.params as { id?: unknown } | undefined)?.id));
        c?.abort();
        return;
      }
      const h = this.notifications.get(m.method);
      if (!h) return; // unknown notifications (and `$/` ones) are ignored, as the protocol says
      try {
        h(m.params);
      } catch (e) {
        this.onError(e);
      }
      return;
    }
    if (typeof id !== 'number' && typeof id !== 'string') {
      this.write({ jsonrpc: '2.0', id: null, error: { code: ErrorCodes.InvalidRequest, message: 'bad id' } });
      return;
    }
    const h = this.requests.get(m.method);
    if (!h) {
      this.write({
        jsonrpc: '2.0',
        id,
        error: { code: ErrorCodes.MethodNotFound, message: `no method ${m.method}` },
      });
      return;
    }
    const key = String(id);
    const ctl = new AbortController();
    this.running.set(key, ctl);
    Promise.resolve()
      .then(() => {
        // cancelled before it started (the cancel came in the same read): not run at all
        if (ctl.signal.aborted) throw new ResponseError(ErrorCodes.RequestCancelled, 'cancelled');
        return h(m.params, ctl.signal);
      })
      .then((result) => {
        if (ctl.signal.aborted) throw new ResponseError(ErrorCodes.RequestCancelled, 'cancelled');
        this.write({ jsonrpc: '2.0', id, result: result ?? null });
      })
      .catch((e: unknown) => {
        if (e instanceof ResponseError) {
          this.write({ jsonrpc: '2.0', id, error: { code: e.code, message: e.message, data: e.data } });
          return;
        }
        if (ctl.signal.aborted) {
          this.write({
            jsonrpc: '2.0',
            id,
            error: { code: ErrorCodes.RequestCancelled, message: 'cancelled' },
          });
          return;
        }
        this.onError(e);
        this.write({
          jsonrpc: '2.0',
          id,
          error: { code: ErrorCodes.InternalError, message: String((e as Error)?.message ?? e) },
        });
      })
      .finally(() => this.running.delete(key));
  }
}
