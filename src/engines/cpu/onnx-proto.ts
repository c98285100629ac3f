// The few ONNX protobuf messages needed to describe a feed-forward graph (model, graph, node,
// attribute, tensor, value info), encoded by hand: a protobuf library would bring a schema compiler
// for six messages. Field numbers are those of onnx/onnx.proto.

/** Protobuf wire encoding into a growing byte list. */
class Writer {
  private chunks: Uint8Array[] = [];
  private size = 0;

  private push(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.size += bytes.length;
  }

  private varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value));
    const out: number[] = [];
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    this.push(Uint8Array.from(out));
  }

  private tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  int(field: number, value: number): void {
    this.tag(field, 0);
    this.varint(value);
  }

  float(field: number, value: number): void {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.push(b);
  }

  bytes(field: number, value: Uint8Array): void {
    this.tag(field, 2);
    this.varint(value.length);
    this.push(value);
  }

  string(field: number, value: string): void {
    this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (w: Writer) => void): void {
    const inner = new Writer();
    build(inner);
    this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

export const OnnxType = { FLOAT: 1, INT64: 7 } as const;

export interface OnnxTensor {
  name: string;
  dims: readonly number[];
  data: Float32Array | BigInt64Array;
}

export type OnnxAttribute =
  | { name: string; int: number }
  | { name: string; ints: readonly number[] }
  | { name: string; float: number }
  | { name: string; string: string };

export interface OnnxNode {
  op: string;
  inputs: readonly string[];
  outputs: readonly string[];
  attributes?: readonly OnnxAttribute[];
}

export interface OnnxValue {
  name: string;
  /** Dimension sizes; a string names a free dimension (the batch). */
  shape: readonly (number | string)[];
}

export interface OnnxModel {
  opset: number;
  nodes: readonly OnnxNode[];
  initializers: readonly OnnxTensor[];
  inputs: readonly OnnxValue[];
  outputs: readonly OnnxValue[];
}

function writeTensor(w: Writer, t: OnnxTensor): void {
  for (const d of t.dims) w.int(1, d);
  w.int(2, t.data instanceof Float32Array ? OnnxType.FLOAT : OnnxType.INT64);
  w.string(8, t.name);
  // raw_data is little-endian, as typed arrays are on every platform Node runs on here.
  w.bytes(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

function writeAttribute(w: Writer, a: OnnxAttribute): void {
  w.string(1, a.name);
  if ('int' in a) {
    w.int(3, a.int);
    w.int(20, 2);
  } else if ('ints' in a) {
    for (const v of a.ints) w.int(8, v);
    w.int(20, 7);
  } else if ('float' in a) {
    w.float(2, a.float);
    w.int(20, 1);
  } else {
    w.string(4, a.string);
    w.int(20, 3);
  }
}

function writeValue(w: Writer, v: OnnxValue): void {
  w.string(1, v.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.int(1, OnnxType.FLOAT);
      tensor.message(2, (shape) => {
        for (const d of v.shape)
          shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
      });
    }),
  );
}

/** The serialized ModelProto, ready for `InferenceSession.create(bytes)`. */
export function encodeOnnxModel(model: OnnxModel): Uint8Array {
  const w = new Writer();
  w.int(1, 7); // ir_version 7 (ONNX 1.8), enough for opset 13
  w.string(2, 'lipsync');
  w.message(7, (g) => {
    model.nodes.forEach((n, i) =>
      g.message(1, (node) => {
        for (const input of n.inputs) node.string(1, input);
        for (const output of n.outputs) node.string(2, output);
        node.string(3, `n${i}`);
        node.string(4, n.op);
        for (const a of n.attributes ?? []) node.message(5, (attr) => writeAttribute(attr, a));
      }),
    );
    g.string(2, 'graph');
    for (const t of model.initializers) g.message(5, (tensor) => writeTensor(tensor, t));
    for (const v of model.inputs) g.message(11, (value) => writeValue(value, v));
    for (const v of model.outputs) g.message(12, (value) => writeValue(value, v));
  });
  w.message(8, (op) => {
    op.string(1, '');
    op.int(2, model.opset);
  });
  return w.finish();
}
