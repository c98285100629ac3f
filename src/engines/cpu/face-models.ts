// The face models of the CPU engine: BlazeFace (detector) and FaceMesh (468 landmarks), both shipped
// inside the `@vladmandic/human` npm package. Nothing is downloaded: the model files and the WASM
// binaries are read from node_modules. Both run on onnxruntime's native kernels from ONNX graphs
// converted from the same weights at load (tfjs-to-onnx.ts): FaceMesh gives the same landmarks to
// 1e-4 px in about half the CPU time, BlazeFace (blazeface.ts) the same faces in about a fifth of it.
// Each runs on Human's tfjs WASM backend where onnxruntime cannot load, or where asked for. One set
// per thread, loaded on first use.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { convertTfjsGraph, type TfjsGraphModel } from './tfjs-to-onnx.js';
import { OnnxFaceDetector, type DetectedFace } from './blazeface.js';

export type { DetectedFace } from './blazeface.js';

const require = createRequire(import.meta.url);

/** FaceMesh output for one 192x192 crop. */
export interface MeshOutput {
  /** 468 * 3 values (x, y, z) in crop pixels. */
  coords: Float32Array;
  /** Face presence confidence, 0..1. */
  score: number;
}

export const MESH_INPUT = 192;
export const MESH_POINTS = 468;

/** What runs the face networks (BlazeFace and FaceMesh): onnxruntime (the default) or the tfjs WASM backend. */
export type MeshRuntime = 'onnx' | 'tfjs';

// FaceMesh's graph outputs: the 468 landmarks and the face flag (its contours are not needed).
const MESH_COORDS_OUTPUT = 'Identity_2';
const MESH_SCORE_OUTPUT = 'Identity_1';

type Ort = typeof import('onnxruntime-node');

/** FaceMesh on onnxruntime, from the package's tfjs weights converted in memory. */
class OnnxMesh {
  private constructor(
    private readonly ort: Ort,
    private readonly session: InferenceSession,
  ) {}

  static async load(modelsDir: string): Promise<OnnxMesh> {
    const ort: Ort = await import('onnxruntime-node');
    const json = JSON.parse(await readFile(join(modelsDir, 'facemesh.json'), 'utf8')) as TfjsGraphModel;
    const weights = await readFile(join(modelsDir, 'facemesh.bin'));
    const bytes = convertTfjsGraph(json, weights, {
      inputShape: [MESH_INPUT, MESH_INPUT, 3],
      outputs: [MESH_COORDS_OUTPUT, MESH_SCORE_OUTPUT],
    });
    // One thread: the engine's other thread and ffmpeg use the second core.
    const session = await ort.InferenceSession.create(bytes, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
    return new OnnxMesh(ort, session);
  }

  async run(crop: Float32Array): Promise<MeshOutput> {
    const input = new this.ort.Tensor('float32', crop, [1, MESH_INPUT, MESH_INPUT, 3]);
    const out: Record<string, OrtTensor> = await this.session.run({ input });
    const coords = out[MESH_COORDS_OUTPUT].data as Float32Array;
    const score = (out[MESH_SCORE_OUTPUT].data as Float32Array)[0];
    return { coords: Float32Array.from(coords), score };
  }
}

// Minimal shapes of the parts of tfjs and Human that we use (the bundle is plain JavaScript).
interface Tensor {
  shape: number[];
  data(): Promise<Float32Array | Int32Array | Uint8Array>;
  dispose(): void;
}
interface GraphModel {
  execute(input: Tensor): Tensor | Tensor[];
}
interface Tf {
  tensor4d(values: Float32Array, shape: [number, number, number, number], dtype?: string): Tensor;
  dispose(t: Tensor | Tensor[]): void;
  io: { registerLoadRouter(router: (url: string | string[]) => unknown): void };
  getBackend(): string;
  memory(): { numTensors: number };
}
interface HumanFace {
  box: [number, number, number, number];
  score: number;
  boxScore: number;
  mesh: number[][];
}
interface HumanInstance {
  tf: Tf;
  load(): Promise<void>;
  init(): Promise<void>;
  detect(
    input: Tensor,
    config?: Record<string, unknown>,
  ): Promise<{ face: HumanFace[]; error?: string | null }>;
  models: { models: Record<string, GraphModel | null> };
  faceTriangulation: number[];
  faceUVMap: [number, number][];
}
type HumanCtor = new (config: Record<string, unknown>) => HumanInstance;

const SCHEME = 'lipsync-disk://';

/** Where the package keeps its files; resolved through the package's own entry (its `exports` map lists no package.json). */
function humanDistDir(): string {
  return dirname(require.resolve('@vladmandic/human'));
}

function wasmDir(): string {
  return dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
}

/** A tfjs model loader that reads model.json and its weight shards from disk (Node's fetch has no file://). */
function diskLoader(url: string | string[]): unknown {
  if (typeof url !== 'string' || !url.startsWith(SCHEME)) return null;
  const path = url.slice(SCHEME.length);
  return {
    load: async () => {
      const json = JSON.parse(await readFile(path, 'utf8')) as {
        modelTopology: unknown;
        weightsManifest: { paths: string[]; weights: unknown[] }[];
        format?: string;
        generatedBy?: string;
        convertedBy?: string;
        signature?: unknown;
        userDefinedMetadata?: unknown;
      };
      const parts: Buffer[] = [];
      for (const group of json.weightsManifest) {
        for (const p of group.paths) parts.push(await readFile(join(dirname(path), p)));
      }
      const all = Buffer.concat(parts);
      const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
      return {
        modelTopology: json.modelTopology,
        weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
        weightData,
        format: json.format,
        generatedBy: json.generatedBy,
        convertedBy: json.convertedBy,
        signature: json.signature,
        userDefinedMetadata: json.userDefinedMetadata,
      };
    },
  };
}

const DETECT_CONFIG = {
  face: {
    enabled: true,
    detector: {
      rotation: false,
      maxDetected: 8,
      skipFrames: 0,
      skipTime: 0,
      minConfidence: 0.5,
      iouThreshold: 0.2,
      return: false,
    },
    mesh: { enabled: false },
  },
};

export class FaceModels {
  private constructor(
    private readonly human: HumanInstance,
    private readonly mesh: GraphModel,
    private readonly onnxMesh: OnnxMesh | null,
    private readonly onnxDetector: OnnxFaceDetector | null,
    /** Why the networks cannot run on onnxruntime here (null when they can). */
    readonly onnxError: string | null,
    /** FaceMesh triangles (flat vertex indices, 3 per triangle). */
    readonly triangulation: readonly number[],
    /** Canonical (frontal) 2D layout of the 468 vertices, 0..1. */
    readonly uv: readonly (readonly [number, number])[],
  ) {}

  static async load(): Promise<FaceModels> {
    // The WASM backend's Emscripten glue adds process-wide handlers that rethrow every uncaught
    // exception and unhandled rejection; the service owns those decisions, so they are taken back out.
    const exceptions = new Set(process.listeners('uncaughtException'));
    const rejections = new Set(process.listeners('unhandledRejection'));
    try {
      return await FaceModels.loadModels();
    } finally {
      for (const l of process.listeners('uncaughtException'))
        if (!exceptions.has(l)) process.removeListener('uncaughtException', l);
      for (const l of process.listeners('unhandledRejection'))
        if (!rejections.has(l)) process.removeListener('unhandledRejection', l);
    }
  }

  private static async loadModels(): Promise<FaceModels> {
    const dist = humanDistDir();
    const Human = (require(join(dist, 'human.node-wasm.js')) as { Human: HumanCtor }).Human;
    const off = { enabled: false };
    const human = new Human({
      backend: 'wasm',
      wasmPath: `${wasmDir()}/`,
      wasmPlatformFetch: false,
      modelBasePath: `${SCHEME}${join(dirname(dist), 'models')}/`,
      debug: false,
      async: false,
      warmup: 'none',
      cacheModels: false,
      cacheSensitivity: 0,
      filter: { enabled: false },
      gesture: off,
      body: off,
      hand: off,
      object: off,
      segmentation: off,
      face: {
        enabled: true,
        detector: { ...DETECT_CONFIG.face.detector, modelPath: 'blazeface.json' },
        mesh: { enabled: true, modelPath: 'facemesh.json' },
        iris: off,
        emotion: off,
        description: off,
        antispoof: off,
        liveness: off,
        attention: off,
      },
    });
    human.tf.io.registerLoadRouter(diskLoader);
    await human.init();
    await human.load();
    const mesh = human.models.models.facemesh;
    if (!mesh || !human.models.models.blazeface)
      throw new Error('the face models did not load from @vladmandic/human');
    let onnxMesh: OnnxMesh | null = null;
    let onnxDetector: OnnxFaceDetector | null = null;
    let onnxError: string | null = null;
    try {
      const dir = join(dirname(dist), 'models');
      [onnxMesh, onnxDetector] = await Promise.all([
        OnnxMesh.load(dir),
        OnnxFaceDetector.load(dir, DETECT_CONFIG.face.detector),
      ]);
    } catch (err) {
      onnxError = err instanceof Error ? err.message : String(err);
      onnxMesh = null;
      onnxDetector = null;
    }
    return new FaceModels(
      human,
      mesh,
      onnxMesh,
      onnxDetector,
      onnxError,
      human.faceTriangulation,
      human.faceUVMap,
    );
  }

  /** The runtime that `detect` and `landmarks` use when asked for `requested`: tfjs when asked for, or where onnxruntime failed. */
  meshRuntime(requested: MeshRuntime = 'onnx'): MeshRuntime {
    return requested === 'onnx' && this.onnxMesh ? 'onnx' : 'tfjs';
  }

  /** Faces in an rgb24 image (pass a downscaled frame: the detector works at 256x256 anyway). */
  async detect(
    rgb: Uint8Array,
    width: number,
    height: number,
    runtime: MeshRuntime = 'onnx',
  ): Promise<DetectedFace[]> {
    if (this.onnxDetector && runtime === 'onnx') return this.onnxDetector.detect(rgb, width, height);
    const tf = this.human.tf;
    const values = new Float32Array(width * height * 3);
    for (let i = 0; i < values.length; i++) values[i] = rgb[i];
    const input = tf.tensor4d(values, [1, height, width, 3], 'float32');
    try {
      const res = await this.human.detect(input, DETECT_CONFIG);
      if (res.error) throw new Error(`face detection failed: ${res.error}`);
      return res.face.map((f) => ({
        box: [f.box[0], f.box[1], f.box[2], f.box[3]],
        score: f.boxScore ?? f.score,
        keypoints: f.mesh.map((p) => [p[0], p[1]] as [number, number]),
      }));
    } finally {
      tf.dispose(input);
    }
  }

  /** FaceMesh on a 192x192 crop given as float RGB in 0..1 (HWC). */
  async landmarks(crop: Float32Array, runtime: MeshRuntime = 'onnx'): Promise<MeshOutput> {
    if (this.onnxMesh && runtime === 'onnx') return this.onnxMesh.run(crop);
    const tf = this.human.tf;
    const input = tf.tensor4d(crop, [1, MESH_INPUT, MESH_INPUT, 3], 'float32');
    let outputs: Tensor[] = [];
    try {
      const out = this.mesh.execute(input);
      outputs = Array.isArray(out) ? out : [out];
      const coordsT = outputs.find((t) => t.shape[t.shape.length - 1] === MESH_POINTS * 3);
      const scoreT = outputs.find((t) => t.shape[t.shape.length - 1] === 1);
      if (!coordsT || !scoreT) throw new Error('unexpected FaceMesh outputs');
      const coords = Float32Array.from(await coordsT.data());
      const score = (await scoreT.data())[0];
      return { coords, score };
    } finally {
      tf.dispose(input);
      tf.dispose(outputs);
    }
  }

  /** Live tensors (a leak check for tests). */
  tensorCount(): number {
    return this.human.tf.memory().numTensors;
  }
}

export interface MeshLayout {
  /** FaceMesh triangles (flat vertex indices, 3 per triangle). */
  triangulation: readonly number[];
  /** Canonical (frontal) 2D layout of the 468 vertices, 0..1. */
  uv: readonly (readonly [number, number])[];
}

let layout: MeshLayout | null = null;

/** The mesh's triangles and canonical layout, without loading any model (cheap; for the rig and tests). */
export function meshLayout(): MeshLayout {
  if (!layout) {
    const Human = (require(join(humanDistDir(), 'human.node-wasm.js')) as { Human: HumanCtor }).Human;
    const h = new Human({ backend: 'wasm', debug: false });
    layout = { triangulation: h.faceTriangulation, uv: h.faceUVMap };
  }
  return layout;
}

let shared: Promise<FaceModels> | null = null;

/** The process-wide models, loaded once (a failed load is retried on the next call). */
export function faceModels(): Promise<FaceModels> {
  if (!shared) {
    shared = FaceModels.load().catch((err: unknown) => {
      shared = null;
      throw err;
    });
  }
  return shared;
}
