// The tfjs → ONNX converter on small graphs with random weights, run by onnxruntime and compared
// with a plain NHWC reference written here: strided SAME convolutions (TensorFlow pads the extra
// pixel at the end), depthwise convolutions with a channel multiplier, fused bias and PReLU, channel
// padding, max pooling, and the reshape back to tfjs's element order. Operations outside the set
// are refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import ort from 'onnxruntime-node';
import {
  convertTfjsGraph,
  TfjsConversionError,
  type TfjsGraphModel,
  type TfjsNode,
  type TfjsWeightSpec,
} from '../../src/engines/cpu/tfjs-to-onnx.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const list = (...i: number[]) => ({ list: { i: i.map(String) } });

/** A deterministic pseudo-random sequence in -1..1. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return (s / 2147483648) * 2 - 1;
  };
}

type Tensor = { shape: number[]; values: Float32Array };

/** tfjs conv (NHWC, weights HWIO, or HWCM when depthwise) with TensorFlow's SAME/VALID padding. */
function convRef(x: Tensor, w: Tensor, stride: number, same: boolean, depthwise: boolean): Tensor {
  const [, h, wd, c] = x.shape;
  const [kh, kw, , m] = w.shape;
  const oh = same ? Math.ceil(h / stride) : Math.floor((h - kh) / stride) + 1;
  const ow = same ? Math.ceil(wd / stride) : Math.floor((wd - kw) / stride) + 1;
  const padT = same ? Math.floor(Math.max((oh - 1) * stride + kh - h, 0) / 2) : 0;
  const padL = same ? Math.floor(Math.max((ow - 1) * stride + kw - wd, 0) / 2) : 0;
  const oc = depthwise ? c * m : m;
  const out = new Float32Array(oh * ow * oc);
  for (let y = 0; y < oh; y++)
    for (let xo = 0; xo < ow; xo++)
      for (let o = 0; o < oc; o++) {
        let sum = 0;
        for (let i = 0; i < kh; i++)
          for (let j = 0; j < kw; j++) {
            const iy = y * stride + i - padT;
            const ix = xo * stride + j - padL;
            if (iy < 0 || ix < 0 || iy >= h || ix >= wd) continue;
            if (depthwise) {
              const ci = Math.floor(o / m);
              sum += x.values[(iy * wd + ix) * c + ci] * w.values[((i * kw + j) * c + ci) * m + (o % m)];
            } else {
              for (let ci = 0; ci < c; ci++)
                sum += x.values[(iy * wd + ix) * c + ci] * w.values[((i * kw + j) * c + ci) * m + o];
            }
          }
        out[(y * ow + xo) * oc + o] = sum;
      }
  return { shape: [1, oh, ow, oc], values: out };
}

function perChannel(x: Tensor, f: (v: number, c: number) => number): Tensor {
  const c = x.shape[3];
  return { shape: x.shape, values: x.values.map((v, i) => f(v, i % c)) };
}

class GraphBuilder {
  nodes: TfjsNode[] = [{ name: 'input_1', op: 'Placeholder' }];
  specs: TfjsWeightSpec[] = [];
  data: number[] = [];
  private rnd = random(7);

  weight(name: string, shape: number[]): Tensor {
    const n = shape.reduce((a, b) => a * b, 1);
    const values = Float32Array.from({ length: n }, () => this.rnd());
    this.nodes.push({ name, op: 'Const' });
    this.specs.push({ name, shape, dtype: 'float32' });
    this.data.push(...values);
    return { shape, values };
  }

  int32(name: string, values: number[], shape: number[]): void {
    this.nodes.push({ name, op: 'Const' });
    this.specs.push({ name, shape, dtype: 'int32' });
    // Stored as float32 slots and reinterpreted below: both are 4 bytes.
    const view = new DataView(new ArrayBuffer(4));
    for (const v of values) {
      view.setInt32(0, v, true);
      this.data.push(view.getFloat32(0, true));
    }
  }

  model(): { model: TfjsGraphModel; weights: Uint8Array } {
    const f = Float32Array.from(this.data);
    return {
      model: {
        modelTopology: { node: this.nodes },
        weightsManifest: [{ paths: ['w.bin'], weights: this.specs }],
      },
      weights: new Uint8Array(f.buffer),
    };
  }
}

async function runOnnx(bytes: Uint8Array, input: Tensor, outputs: string[]): Promise<Float32Array[]> {
  const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1 });
  const res = await session.run({ input: new ort.Tensor('float32', input.values, input.shape) });
  return outputs.map((o) => res[o].data as Float32Array);
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

describe('tfjs graph → ONNX', () => {
  it('matches an NHWC reference through strided, depthwise, fused, padded, pooled and reshaped layers', async () => {
    const g = new GraphBuilder();
    const H = 12; // SAME with stride 2 and a 3x3 kernel pads one pixel, at the end only
    const x: Tensor = { shape: [1, H, H, 3], values: Float32Array.from({ length: H * H * 3 }, random(3)) };
    const w1 = g.weight('c1/w', [3, 3, 3, 4]);
    const b1 = g.weight('c1/b', [4]);
    const a1 = g.weight('c1/alpha', [1, 1, 4]);
    g.nodes.push({
      name: 'c1',
      op: '_FusedConv2D',
      input: ['input_1', 'c1/w', 'c1/b', 'c1/alpha'],
      attr: {
        strides: list(1, 2, 2, 1),
        dilations: list(1, 1, 1, 1),
        padding: { s: b64('SAME') },
        data_format: { s: b64('NHWC') },
        fused_ops: { list: { s: [b64('BiasAdd'), b64('Prelu')] } },
      },
    });
    const wd = g.weight('d1/w', [3, 3, 4, 2]);
    g.nodes.push({
      name: 'd1',
      op: 'DepthwiseConv2dNative',
      input: ['c1', 'd1/w'],
      attr: { strides: list(1, 1, 1, 1), dilations: list(1, 1, 1, 1), padding: { s: b64('SAME') } },
    });
    const w2 = g.weight('c2/w', [1, 1, 8, 4]);
    const b2 = g.weight('c2/b', [4]);
    g.nodes.push({
      name: 'c2',
      op: '_FusedConv2D',
      input: ['d1', 'c2/w', 'c2/b'],
      attr: {
        strides: list(1, 1, 1, 1),
        dilations: list(1, 1, 1, 1),
        padding: { s: b64('VALID') },
        fused_ops: { list: { s: [b64('BiasAdd')] } },
      },
    });
    g.nodes.push({ name: 'sum', op: 'AddV2', input: ['c1', 'c2:0'] });
    const a2 = g.weight('p/alpha', [1, 1, 4]);
    g.nodes.push({ name: 'p', op: 'Prelu', input: ['sum', 'p/alpha'] });
    g.nodes.push({
      name: 'pool',
      op: 'MaxPool',
      input: ['p'],
      attr: { ksize: list(1, 2, 2, 1), strides: list(1, 2, 2, 1), padding: { s: b64('VALID') } },
    });
    g.int32('pad/p', [0, 0, 0, 0, 0, 0, 0, 2], [4, 2]);
    g.nodes.push({ name: 'pad', op: 'Pad', input: ['pool', 'pad/p'] });
    g.int32('shape', [-1, 3 * 3 * 6], [2]);
    g.nodes.push({ name: 'flat', op: 'Reshape', input: ['pad', 'shape'] });
    g.nodes.push({ name: 'flag', op: 'Sigmoid', input: ['flat'] });
    g.nodes.push({ name: 'unused', op: 'Conv3D', input: ['pad'] });
    const { model, weights } = g.model();

    // The reference, op by op in NHWC.
    const prelu = (t: Tensor, a: Tensor) => perChannel(t, (v, c) => (v >= 0 ? v : v * a.values[c]));
    const c1 = prelu(
      perChannel(convRef(x, w1, 2, true, false), (v, c) => v + b1.values[c]),
      a1,
    );
    assert.deepEqual(c1.shape, [1, 6, 6, 4]);
    const d1 = convRef(c1, wd, 1, true, true);
    const c2 = perChannel(convRef(d1, w2, 1, false, false), (v, c) => v + b2.values[c]);
    const p = prelu({ shape: c1.shape, values: c1.values.map((v, i) => v + c2.values[i]) }, a2);
    const pooled = new Float32Array(3 * 3 * 6); // 2x2 pool to 3x3, channels padded 4 → 6
    for (let y = 0; y < 3; y++)
      for (let xx = 0; xx < 3; xx++)
        for (let c = 0; c < 4; c++) {
          let m = -Infinity;
          for (let i = 0; i < 2; i++)
            for (let j = 0; j < 2; j++) m = Math.max(m, p.values[((y * 2 + i) * 6 + xx * 2 + j) * 4 + c]);
          pooled[(y * 3 + xx) * 6 + c] = m;
        }
    const flag = pooled.map((v) => 1 / (1 + Math.exp(-v)));

    // 'unused' is not needed for these outputs, so its unsupported op does not matter.
    const bytes = convertTfjsGraph(model, weights, { inputShape: [H, H, 3], outputs: ['flat', 'flag'] });
    const [flatOut, flagOut] = await runOnnx(bytes, x, ['flat', 'flag']);
    assert.ok(maxDiff(flatOut, pooled) < 1e-4, `flat differs by ${maxDiff(flatOut, pooled)}`);
    assert.ok(maxDiff(flagOut, flag) < 1e-5);

    assert.throws(
      () => convertTfjsGraph(model, weights, { inputShape: [H, H, 3], outputs: ['unused'] }),
      (err: unknown) => err instanceof TfjsConversionError && /Conv3D/.test(err.message),
    );
  });

  it('refuses weights that do not match their manifest', () => {
    const g = new GraphBuilder();
    g.weight('w', [2, 2]);
    const { model, weights } = g.model();
    assert.throws(
      () => convertTfjsGraph(model, weights.subarray(0, 12), { inputShape: [2, 2, 1], outputs: ['input_1'] }),
      TfjsConversionError,
    );
  });
});
