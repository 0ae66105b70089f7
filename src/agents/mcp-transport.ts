/**
 * The MCP server's stdio transport: newline-delimited JSON-RPC, read with a
 * bound. The SDK's own stdio transport appends every chunk to one growing
 * buffer (quadratic copying on a long line) and shuts the server down when a
 * line passes its limit; here a line over MAX_MESSAGE_BYTES is skipped as it
 * arrives (only its first and last few KiB are kept, to find its id) and
 * answered with -32600, and the server goes on serving. What is not JSON gets
 * -32700, what is not JSON-RPC -32600, and a request whose params do not fit
 * the method (`arguments: "str"`) -32602 in plain words, before the SDK sees
 * it (the SDK would answer -32603 with the validation library's dump).
 */
import type { Readable, Writable } from 'node:stream';
import { type JSONRPCMessage, specTypeSchemas, type Transport } from '@modelcontextprotocol/server';

/** JSON-RPC's error codes this transport answers with. */
const ErrorCode = { ParseError: -32700, InvalidRequest: -32600, InvalidParams: -32602 } as const;

/** The longest message read (4 MiB); a memory body is at most 64 KiB. */
export const MAX_MESSAGE_BYTES = 4 << 20;
/** How much of an oversized line is kept at each end to find its id. */
const KEEP = 4096;

type RequestId = string | number;

/** A schema of the SDK's, as it is at run time (zod): `safeParse` gives the issues with their codes. */
type SafeParser = { safeParse(v: unknown): { success: boolean; data?: unknown; error?: unknown } };
const zodOf = (s: unknown) => s as SafeParser;

/** Schemas of the requests this server answers, checked before the SDK sees them. */
const PARAMS: Record<string, SafeParser> = {
  initialize: zodOf(specTypeSchemas.InitializeRequest),
  'server/discover': zodOf(specTypeSchemas.DiscoverRequest),
  'tools/list': zodOf(specTypeSchemas.ListToolsRequest),
  'tools/call': zodOf(specTypeSchemas.CallToolRequest),
  'resources/list': zodOf(specTypeSchemas.ListResourcesRequest),
  'resources/templates/list': zodOf(specTypeSchemas.ListResourceTemplatesRequest),
  'resources/read': zodOf(specTypeSchemas.ReadResourceRequest),
};
const JSONRPCMessageSchema = zodOf(specTypeSchemas.JSONRPCMessage);

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return 'a number';
  if (typeof v === 'boolean') return 'a boolean';
  return typeof v;
}

const EXPECTED: Record<string, string> = {
  record: 'an object',
  object: 'an object',
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
};

interface Issue {
  code?: string;
  path?: PropertyKey[];
  expected?: string;
  message?: string;
  values?: unknown[];
  keys?: string[];
}

/** One line about the first problem the schema found, in words a person reads. */
function describeIssue(method: string, msg: Record<string, unknown>, error: unknown): string {
  const issues = ((error as { issues?: Issue[] })?.issues ?? []) as Issue[];
  const issue = issues[0];
  if (!issue) return `${method}: invalid params`;
  const path = (issue.path ?? []).map(String);
  const where = path.length ? path.join('.') : 'the request';
  let value: unknown = msg;
  for (const k of path) value = value && typeof value === 'object' ? (value as Json)[k] : undefined;
  if (issue.code === 'invalid_type') {
    const want = EXPECTED[String(issue.expected)] ?? String(issue.expected);
    return value === undefined
      ? `${method}: ${where} is required (${want})`
      : `${method}: ${where} must be ${want}, not ${kindOf(value)}`;
  }
  if (issue.code === 'invalid_value' && issue.values?.length)
    return `${method}: ${where} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  if (issue.code === 'unrecognized_keys' && issue.keys?.length)
    return `${method}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')} in ${where}`;
  // other cases: the library's message is one short sentence; keep it to one line
  const said = String(issue.message ?? 'invalid')
    .replace(/\s+/g, ' ')
    .slice(0, 200);
  return `${method}: ${where}: ${said}`;
}

type Json = Record<string, unknown>;

/** The id of an oversized request from its first or last bytes, if it shows there at the top level. */
export function idFromEnds(head: string, tail: string): RequestId | null {
  const VALUE = '(-?\\d{1,16}|"(?:[^"\\\\]|\\\\.){0,256}")';
  const m =
    new RegExp(`^\\s*\\{\\s*(?:"jsonrpc"\\s*:\\s*"2\\.0"\\s*,\\s*)?"id"\\s*:\\s*${VALUE}`).exec(head) ??
    new RegExp(`[,{]\\s*"id"\\s*:\\s*${VALUE}\\s*\\}\\s*$`).exec(tail);
  if (!m) return null;
  try {
    const v = JSON.parse(m[1]) as unknown;
    return typeof v === 'string' || typeof v === 'number' ? v : null;
  } catch {
    return null;
  }
}

function mib(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(n % (1 << 20) ? 1 : 0)} MiB` : `${n} bytes`;
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** over the limit: the rest of the line is skipped, keeping its ends */
  private skipping = false;
  private head = '';
  private tail = Buffer.alloc(0);
  private closed = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly maxBytes = MAX_MESSAGE_BYTES,
  ) {}

  private readonly onData = (chunk: Buffer | string) => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let pos = 0;
    while (pos < buf.length && !this.closed) {
      const nl = buf.indexOf(10, pos);
      const end = nl < 0 ? buf.length : nl;
      this.take(buf.subarray(pos, end));
      if (nl < 0) break;
      this.endLine();
      pos = nl + 1;
    }
  };

  private readonly onError = (e: Error) => this.onerror?.(e);

  private take(piece: Buffer): void {
    if (!piece.length) return;
    if (!this.skipping && this.size + piece.length > this.maxBytes) {
      // keep the first bytes (an id written first) and drop the rest as it comes
      const first: Buffer[] = [];
      let n = 0;
      for (const c of [...this.chunks, piece]) {
        if (n >= KEEP) break;
        first.push(c.subarray(0, KEEP - n));
        n += first[first.length - 1].length;
      }
      this.head = Buffer.concat(first).toString('utf8');
      this.chunks = [];
      this.skipping = true;
    }
    this.size += piece.length;
    if (this.skipping) {
      const t =
        piece.length >= KEEP ? piece.subarray(piece.length - KEEP) : Buffer.concat([this.tail, piece]);
      this.tail = Buffer.from(t.subarray(Math.max(0, t.length - KEEP)));
      return;
    }
    this.chunks.push(piece);
  }

  private endLine(): void {
    const size = this.size;
    if (this.skipping) {
      const id = idFromEnds(this.head, this.tail.toString('utf8'));
      this.reset();
      this.reply(
        id,
        ErrorCode.InvalidRequest,
        `message too large: ${mib(size)} in one line, the limit is ${mib(this.maxBytes)}; nothing was done`,
      );
      return;
    }
    const line = Buffer.concat(this.chunks, size).toString('utf8').replace(/\r$/, '');
    this.reset();
    if (!line.trim()) return;
    this.handle(line);
  }

  private reset(): void {
    this.chunks = [];
    this.size = 0;
    this.skipping = false;
    this.head = '';
    this.tail = Buffer.alloc(0);
  }

  private handle(line: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      this.reply(null, ErrorCode.ParseError, 'parse error: the message is not valid JSON');
      return;
    }
    const obj = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Json) : undefined;
    const id = obj && (typeof obj.id === 'string' || typeof obj.id === 'number') ? obj.id : null;
    // a request of a method served here whose params do not fit: -32602, naming the field
    const method = obj && typeof obj.method === 'string' ? obj.method : undefined;
    const schema = obj?.jsonrpc === '2.0' && method && id !== null ? PARAMS[method] : undefined;
    if (schema) {
      const ok = schema.safeParse(raw);
      if (!ok.success) {
        this.reply(id, ErrorCode.InvalidParams, `invalid params: ${describeIssue(method!, obj!, ok.error)}`);
        return;
      }
    }
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success || !obj) {
      // a notification (no id) is never answered, not even when malformed
      if (obj && 'method' in obj && !('id' in obj)) return;
      this.reply(
        id,
        ErrorCode.InvalidRequest,
        Array.isArray(raw)
          ? 'invalid request: batches are not supported; send one JSON-RPC message per line'
          : 'invalid request: not a JSON-RPC 2.0 message (needs "jsonrpc": "2.0", a string "method" and an id that is a string or a number)',
      );
      return;
    }
    this.onmessage?.(parsed.data as JSONRPCMessage);
  }

  private reply(id: RequestId | null, code: number, message: string): void {
    this.write({ jsonrpc: '2.0', id, error: { code, message } }).catch(() => {});
  }

  private write(message: unknown): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.reset();
    this.onclose?.();
  }
}
