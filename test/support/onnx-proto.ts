/**
 * A minimal ONNX (protobuf) encoder: just enough of onnx.proto to write a
 * small inference graph (ModelProto, GraphProto, NodeProto, TensorProto,
 * ValueInfoProto, AttributeProto, OperatorSetIdProto). Used by the tiny test
 * model generator; there is no Python `onnx` package on these machines.
 * Field numbers follow onnx/onnx.proto (IR version 7).
 */

/** ONNX TensorProto.DataType values used here. */
export const DataType = { FLOAT: 1, INT64: 7 } as const;
/** ONNX AttributeProto.AttributeType values used here. */
export const AttrType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, INTS: 7 } as const;

class Writer {
  private chunks: Uint8Array[] = [];
  private len = 0;

  private push(b: Uint8Array): void {
    this.chunks.push(b);
    this.len += b.length;
  }

  varint(value: number | bigint): void {
    // int64 fields: negative numbers are encoded as 10-byte two's complement
    let v = BigInt.asUintN(64, BigInt(value));
    const out: number[] = [];
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) byte |= 0x80;
      out.push(byte);
    } while (v !== 0n);
    this.push(Uint8Array.from(out));
  }

  tag(field: number, wire: 0 | 1 | 2 | 5): void {
    this.varint((field << 3) | wire);
  }

  int(field: number, value: number | bigint): this {
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  bytes(field: number, b: Uint8Array): this {
    this.tag(field, 2);
    this.varint(b.length);
    this.push(b);
    return this;
  }

  string(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }

  float(field: number, f: number): this {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, f, true);
    this.push(b);
    return this;
  }

  message(field: number, m: Writer): this {
    return this.bytes(field, m.finish());
  }

  /** packed repeated int64 */
  packedInts(field: number, xs: Array<number | bigint>): this {
    const w = new Writer();
    for (const x of xs) w.varint(x);
    return this.bytes(field, w.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.len);
    let o = 0;
    for (const c of this.chunks) {
      out.set(c, o);
      o += c.length;
    }
    return out;
  }
}

export interface Tensor {
  name: string;
  dataType: number;
  dims: number[];
  /** little-endian raw data */
  raw: Uint8Array;
}

export function floatTensor(name: string, dims: number[], data: Float32Array): Tensor {
  return {
    name,
    dataType: DataType.FLOAT,
    dims,
    raw: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}

export function int64Tensor(name: string, dims: number[], data: number[]): Tensor {
  const b = new BigInt64Array(data.map((x) => BigInt(x)));
  return { name, dataType: DataType.INT64, dims, raw: new Uint8Array(b.buffer) };
}

export interface Attribute {
  name: string;
  type: number;
  i?: number;
  f?: number;
  s?: string;
  ints?: number[];
  t?: Tensor;
}

export interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  attributes?: Attribute[];
}

/** A tensor's declared type: element type and shape (numbers or symbolic names). */
export interface ValueInfo {
  name: string;
  elemType: number;
  shape: Array<number | string>;
}

export interface Graph {
  name: string;
  nodes: Node[];
  initializers: Tensor[];
  inputs: ValueInfo[];
  outputs: ValueInfo[];
}

export interface Model {
  irVersion: number;
  opset: number;
  producer: string;
  graph: Graph;
}

function tensorMsg(t: Tensor): Writer {
  const w = new Writer();
  for (const d of t.dims) w.int(1, d); // dims (unpacked is valid for repeated int64)
  w.int(2, t.dataType);
  w.string(8, t.name);
  w.bytes(9, t.raw);
  return w;
}

function attrMsg(a: Attribute): Writer {
  const w = new Writer().string(1, a.name);
  if (a.f !== undefined) w.float(2, a.f);
  if (a.i !== undefined) w.int(3, a.i);
  if (a.s !== undefined) w.string(4, a.s);
  if (a.t) w.message(5, tensorMsg(a.t));
  if (a.ints) for (const x of a.ints) w.int(8, x);
  w.int(20, a.type);
  return w;
}

function nodeMsg(n: Node): Writer {
  const w = new Writer();
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  if (n.name) w.string(3, n.name);
  w.string(4, n.op);
  for (const a of n.attributes ?? []) w.message(5, attrMsg(a));
  return w;
}

function valueInfoMsg(v: ValueInfo): Writer {
  const shape = new Writer();
  for (const d of v.shape) {
    const dim = new Writer();
    if (typeof d === 'number') dim.int(1, d);
    else dim.string(2, d);
    shape.message(1, dim);
  }
  const tensorType = new Writer().int(1, v.elemType).message(2, shape);
  const type = new Writer().message(1, tensorType);
  return new Writer().string(1, v.name).message(2, type);
}

/** Serialises a model to the bytes of an `.onnx` file. */
export function encodeModel(m: Model): Uint8Array {
  const g = new Writer();
  for (const n of m.graph.nodes) g.message(1, nodeMsg(n));
  g.string(2, m.graph.name);
  for (const t of m.graph.initializers) g.message(5, tensorMsg(t));
  for (const i of m.graph.inputs) g.message(11, valueInfoMsg(i));
  for (const o of m.graph.outputs) g.message(12, valueInfoMsg(o));
  const opset = new Writer().string(1, '').int(2, m.opset);
  return new Writer()
    .int(1, m.irVersion)
    .string(2, m.producer)
    .string(3, '1')
    .message(7, g)
    .message(8, opset)
    .finish();
}
