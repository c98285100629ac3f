// Converts a TensorFlow.js graph model built from the few operations of MediaPipe's convolutional
// face models (FaceMesh: convolutions with fused bias and PReLU, depthwise convolutions, adds, max
// pooling, channel padding, sigmoid, reshape) into an ONNX graph, so onnxruntime's native kernels
// can run the weights that ship in the `@vladmandic/human` npm package instead of tfjs on WASM.
// tfjs computes in NHWC; ONNX convolutions are NCHW, so the input is transposed once and every
// weight is laid out for NCHW here. An operation outside that set is refused, not approximated.
import { encodeOnnxModel, type OnnxNode, type OnnxTensor } from './onnx-proto.js';

export interface TfjsWeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; scale?: number; min?: number };
}

interface TfjsAttr {
  s?: string;
  i?: string;
  f?: number;
  list?: { i?: string[]; s?: string[] };
}

export interface TfjsNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, TfjsAttr>;
}

export interface TfjsGraphModel {
  modelTopology: { node: TfjsNode[] };
  weightsManifest: { paths: string[]; weights: TfjsWeightSpec[] }[];
}

export class TfjsConversionError extends Error {}

interface Constant {
  shape: number[];
  values: Float32Array | Int32Array;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

/** The weights of a graph model, dequantized, by name (the shards concatenated in manifest order). */
export function decodeTfjsWeights(model: TfjsGraphModel, data: Uint8Array): Map<string, Constant> {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out = new Map<string, Constant>();
  let at = 0;
  for (const spec of model.weightsManifest.flatMap((g) => g.weights)) {
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const q = spec.quantization;
    const width = q?.dtype === 'float16' ? 2 : q?.dtype === 'uint8' ? 1 : 4;
    if (at + n * width > data.byteLength)
      throw new TfjsConversionError(`weights: ${data.byteLength} bytes, ${spec.name} ends beyond them`);
    let values: Float32Array | Int32Array;
    if (q?.dtype === 'float16') {
      values = new Float32Array(n);
      for (let i = 0; i < n; i++) values[i] = halfToFloat(view.getUint16(at + i * 2, true));
      at += n * 2;
    } else if (q?.dtype === 'uint8' && q.scale !== undefined && q.min !== undefined) {
      values = new Float32Array(n);
      for (let i = 0; i < n; i++) values[i] = q.min + q.scale * view.getUint8(at + i);
      at += n;
    } else if (!q && (spec.dtype === 'float32' || spec.dtype === 'int32')) {
      values = spec.dtype === 'float32' ? new Float32Array(n) : new Int32Array(n);
      for (let i = 0; i < n; i++)
        values[i] =
          spec.dtype === 'float32' ? view.getFloat32(at + i * 4, true) : view.getInt32(at + i * 4, true);
      at += n * 4;
    } else {
      throw new TfjsConversionError(
        `weight ${spec.name}: unsupported encoding ${JSON.stringify(q ?? spec.dtype)}`,
      );
    }
    out.set(spec.name, { shape: spec.shape, values });
  }
  if (at !== data.byteLength)
    throw new TfjsConversionError(`weights: ${data.byteLength} bytes, the manifest describes ${at}`);
  return out;
}

const text = (a: TfjsAttr | undefined): string => (a?.s ? Buffer.from(a.s, 'base64').toString() : '');
const ints = (a: TfjsAttr | undefined): number[] => (a?.list?.i ?? []).map(Number);
const strings = (a: TfjsAttr | undefined): string[] =>
  (a?.list?.s ?? []).map((s) => Buffer.from(s, 'base64').toString());
/** A node's input without the output index (`name:0`) or control marker (`^name`). */
const tensorName = (input: string): string => input.replace(/^\^/, '').replace(/:0$/, '');

/** Spatial layout of an NCHW activation, or a flat shape after a reshape. */
type Shape = { c: number; h: number; w: number } | { flat: number[] };

/** TensorFlow's SAME padding (the extra pixel at the end) or none for VALID, as ONNX pads [t, l, b, r]. */
function padsFor(
  padding: string,
  inH: number,
  inW: number,
  kH: number,
  kW: number,
  sH: number,
  sW: number,
): { pads: number[]; outH: number; outW: number } {
  if (padding === 'VALID')
    return {
      pads: [0, 0, 0, 0],
      outH: Math.floor((inH - kH) / sH) + 1,
      outW: Math.floor((inW - kW) / sW) + 1,
    };
  if (padding !== 'SAME') throw new TfjsConversionError(`padding ${padding} is not supported`);
  const outH = Math.ceil(inH / sH);
  const outW = Math.ceil(inW / sW);
  const padH = Math.max((outH - 1) * sH + kH - inH, 0);
  const padW = Math.max((outW - 1) * sW + kW - inW, 0);
  const t = Math.floor(padH / 2);
  const l = Math.floor(padW / 2);
  return { pads: [t, l, padH - t, padW - l], outH, outW };
}

export interface ConvertOptions {
  /** Input size of the model's image placeholder (height, width, channels). */
  inputShape: [number, number, number];
  /** Graph outputs to keep, by node name (e.g. FaceMesh's `Identity_2`); nothing else is computed. */
  outputs: string[];
}

/**
 * The graph's nodes with any node named `input` (BlazeFace's placeholder) renamed, references
 * included: the ONNX graph's own input takes that name.
 */
function withoutNameClash(nodes: TfjsNode[]): TfjsNode[] {
  if (!nodes.some((n) => n.name === 'input')) return nodes;
  const rename = (name: string): string => (name === 'input' ? 'input/tfjs' : name);
  return nodes.map((n) => ({
    ...n,
    name: rename(n.name),
    input: n.input?.map((i) => i.replace(/^(\^?)input(:0)?$/, '$1input/tfjs$2')),
  }));
}

/** The ONNX model bytes for `model`; its input is named `input` (NHWC float32, any batch). */
export function convertTfjsGraph(
  model: TfjsGraphModel,
  weights: Uint8Array,
  options: ConvertOptions,
): Uint8Array {
  const consts = decodeTfjsWeights(model, weights);
  const byName = new Map(withoutNameClash(model.modelTopology.node).map((n) => [n.name, n]));
  const nodes: OnnxNode[] = [];
  const initializers: OnnxTensor[] = [];
  const shapes = new Map<string, Shape>();
  let nextId = 0;

  const floatInit = (dims: number[], data: Float32Array): string => {
    const name = `w${nextId++}`;
    initializers.push({ name, dims, data });
    return name;
  };
  const int64Init = (values: number[]): string => {
    const name = `w${nextId++}`;
    initializers.push({ name, dims: [values.length], data: BigInt64Array.from(values.map(BigInt)) });
    return name;
  };
  const constant = (name: string): Constant => {
    const c = consts.get(tensorName(name));
    if (!c) throw new TfjsConversionError(`${name} is not a constant`);
    return c;
  };
  const spatial = (name: string): { c: number; h: number; w: number } => {
    const s = shapes.get(tensorName(name));
    if (!s || 'flat' in s) throw new TfjsConversionError(`${name} is not an image tensor`);
    return s;
  };
  /** A per-channel vector ([1, 1, C] or [C] in tfjs) as an NCHW broadcast [C, 1, 1]. */
  const channelVector = (name: string): string => {
    const c = constant(name);
    return floatInit([c.values.length, 1, 1], Float32Array.from(c.values));
  };

  function convolution(n: TfjsNode, depthwise: boolean): void {
    const [x, wName, ...rest] = (n.input ?? []).map(tensorName);
    const inShape = spatial(x);
    const weight = constant(wName);
    const [kH, kW, inC, m] = weight.shape;
    const strides = ints(n.attr?.strides);
    const dilations = ints(n.attr?.dilations);
    if (dilations.some((d) => d !== 1))
      throw new TfjsConversionError(`${n.name}: dilated convolutions are not supported`);
    if (text(n.attr?.data_format) && text(n.attr?.data_format) !== 'NHWC')
      throw new TfjsConversionError(`${n.name}: data format ${text(n.attr?.data_format)}`);
    const { pads, outH, outW } = padsFor(
      text(n.attr?.padding),
      inShape.h,
      inShape.w,
      kH,
      kW,
      strides[1],
      strides[2],
    );
    const outC = depthwise ? inC * m : m;
    const w = new Float32Array(outC * (depthwise ? 1 : inC) * kH * kW);
    for (let y = 0; y < kH; y++)
      for (let xk = 0; xk < kW; xk++)
        for (let i = 0; i < inC; i++)
          for (let o = 0; o < m; o++) {
            const src = ((y * kW + xk) * inC + i) * m + o;
            const dst = depthwise ? ((i * m + o) * kH + y) * kW + xk : ((o * inC + i) * kH + y) * kW + xk;
            w[dst] = weight.values[src];
          }
    const fused = n.op === '_FusedConv2D' ? strings(n.attr?.fused_ops) : [];
    const inputs = [x, floatInit([outC, depthwise ? 1 : inC, kH, kW], w)];
    if (fused[0] === 'BiasAdd') inputs.push(floatInit([outC], Float32Array.from(constant(rest[0]).values)));
    else if (fused.length) throw new TfjsConversionError(`${n.name}: fused ops ${fused.join(',')}`);
    const activation = fused[1];
    const convOut = activation ? `${n.name}/conv` : n.name;
    nodes.push({
      op: 'Conv',
      inputs,
      outputs: [convOut],
      attributes: [
        { name: 'kernel_shape', ints: [kH, kW] },
        { name: 'strides', ints: [strides[1], strides[2]] },
        { name: 'pads', ints: pads },
        { name: 'group', int: depthwise ? inC : 1 },
      ],
    });
    if (activation === 'Prelu')
      nodes.push({ op: 'PRelu', inputs: [convOut, channelVector(rest[1])], outputs: [n.name] });
    else if (activation === 'Relu') nodes.push({ op: 'Relu', inputs: [convOut], outputs: [n.name] });
    else if (activation) throw new TfjsConversionError(`${n.name}: fused activation ${activation}`);
    shapes.set(n.name, { c: outC, h: outH, w: outW });
  }

  function emit(n: TfjsNode): void {
    const inputs = (n.input ?? []).filter((i) => !i.startsWith('^')).map(tensorName);
    switch (n.op) {
      case 'Placeholder': {
        const [h, w, c] = options.inputShape;
        nodes.push({
          op: 'Transpose',
          inputs: ['input'],
          outputs: [n.name],
          attributes: [{ name: 'perm', ints: [0, 3, 1, 2] }],
        });
        shapes.set(n.name, { c, h, w });
        return;
      }
      case 'Conv2D':
      case '_FusedConv2D':
        return convolution(n, false);
      case 'DepthwiseConv2dNative':
        return convolution(n, true);
      case 'AddV2':
      case 'Add': {
        const [a, b] = inputs;
        const sa = spatial(a);
        const sb = spatial(b);
        if (sa.c !== sb.c || sa.h !== sb.h || sa.w !== sb.w)
          throw new TfjsConversionError(`${n.name}: shapes differ`);
        nodes.push({ op: 'Add', inputs: [a, b], outputs: [n.name] });
        shapes.set(n.name, sa);
        return;
      }
      case 'Prelu':
        nodes.push({ op: 'PRelu', inputs: [inputs[0], channelVector(inputs[1])], outputs: [n.name] });
        shapes.set(n.name, spatial(inputs[0]));
        return;
      case 'Relu':
      case 'Sigmoid':
      case 'Identity':
        nodes.push({ op: n.op, inputs: [inputs[0]], outputs: [n.name] });
        shapes.set(n.name, shapes.get(inputs[0]) ?? { flat: [] });
        return;
      case 'MaxPool': {
        const s = spatial(inputs[0]);
        const k = ints(n.attr?.ksize);
        const st = ints(n.attr?.strides);
        const { pads, outH, outW } = padsFor(text(n.attr?.padding), s.h, s.w, k[1], k[2], st[1], st[2]);
        nodes.push({
          op: 'MaxPool',
          inputs: [inputs[0]],
          outputs: [n.name],
          attributes: [
            { name: 'kernel_shape', ints: [k[1], k[2]] },
            { name: 'strides', ints: [st[1], st[2]] },
            { name: 'pads', ints: pads },
          ],
        });
        shapes.set(n.name, { c: s.c, h: outH, w: outW });
        return;
      }
      case 'Pad': {
        const s = spatial(inputs[0]);
        const p = Array.from(constant(inputs[1]).values); // NHWC pairs: n0 n1 h0 h1 w0 w1 c0 c1
        nodes.push({
          op: 'Pad',
          inputs: [inputs[0], int64Init([p[0], p[6], p[2], p[4], p[1], p[7], p[3], p[5]])],
          outputs: [n.name],
        });
        shapes.set(n.name, { c: s.c + p[6] + p[7], h: s.h + p[2] + p[3], w: s.w + p[4] + p[5] });
        return;
      }
      case 'Reshape': {
        // Back to NHWC first, so the flattened order is tfjs's.
        const nhwc = `${n.name}/nhwc`;
        nodes.push({
          op: 'Transpose',
          inputs: [inputs[0]],
          outputs: [nhwc],
          attributes: [{ name: 'perm', ints: [0, 2, 3, 1] }],
        });
        const target = Array.from(constant(inputs[1]).values);
        nodes.push({ op: 'Reshape', inputs: [nhwc, int64Init(target)], outputs: [n.name] });
        shapes.set(n.name, { flat: target });
        return;
      }
      default:
        throw new TfjsConversionError(`${n.name}: operation ${n.op} is not supported`);
    }
  }

  // Only what the requested outputs depend on, in dependency order.
  const done = new Set<string>();
  const visit = (name: string): void => {
    if (done.has(name)) return;
    done.add(name);
    const n = byName.get(name);
    if (!n) throw new TfjsConversionError(`no node ${name}`);
    if (n.op === 'Const') return;
    for (const i of n.input ?? []) visit(tensorName(i));
    emit(n);
  };
  for (const o of options.outputs) visit(o);

  const flatDims = (name: string): (number | string)[] => {
    const s = shapes.get(name);
    if (!s || !('flat' in s)) throw new TfjsConversionError(`output ${name} is not flat`);
    return s.flat.map((d, i) => (d === -1 || i === 0 ? 'batch' : d));
  };
  return encodeOnnxModel({
    opset: 13,
    nodes,
    initializers,
    inputs: [{ name: 'input', shape: ['batch', ...options.inputShape] }],
    outputs: options.outputs.map((o) => ({ name: o, shape: flatDims(o) })),
  });
}
