// Model id -> engine and its settings. Every model runs the default engine (`cpu`, or
// LIPSYNC_DEFAULT_ENGINE); a JSON file (LIPSYNC_ENGINES_FILE) can remap single models:
// { "lipsync-2": { "engine": "passthrough", "settings": { ... } } }
import { readFileSync } from 'node:fs';
import { MODELS } from '../domain/models.js';
import type { LipsyncEngine } from './engine.js';
import { PassthroughEngine } from './passthrough.js';
import { CpuEngine } from './cpu/index.js';

export interface EngineBinding {
  engine: LipsyncEngine;
  settings: Record<string, unknown>;
}

export type EngineFactory = () => LipsyncEngine;

const FACTORIES: Record<string, EngineFactory> = {
  passthrough: () => new PassthroughEngine(),
  cpu: () => new CpuEngine(),
};

export const DEFAULT_ENGINE = 'cpu';

export type EngineMapping = Record<string, { engine: string; settings?: Record<string, unknown> }>;

export class EngineRegistry {
  private readonly bindings = new Map<string, EngineBinding>();

  constructor(mapping: EngineMapping = {}, defaultEngine: string = DEFAULT_ENGINE) {
    const instances = new Map<string, LipsyncEngine>();
    const get = (name: string): LipsyncEngine => {
      const f = FACTORIES[name];
      if (!f)
        throw new Error(
          `unknown engine ${JSON.stringify(name)}; known: ${Object.keys(FACTORIES).join(', ')}`,
        );
      if (!instances.has(name)) instances.set(name, f());
      return instances.get(name) as LipsyncEngine;
    };
    for (const m of MODELS) {
      const b = mapping[m.id] ?? { engine: defaultEngine };
      this.bindings.set(m.id, { engine: get(b.engine), settings: b.settings ?? {} });
    }
  }

  static fromFile(path: string | null, defaultEngine: string = DEFAULT_ENGINE): EngineRegistry {
    if (!path) return new EngineRegistry({}, defaultEngine);
    return new EngineRegistry(JSON.parse(readFileSync(path, 'utf8')) as EngineMapping, defaultEngine);
  }

  /** Warms every engine a model is bound to (LipsyncEngine.warmUp); the ids of those warmed. */
  async warmUp(opts: { readonly jobsAtOnce: number }): Promise<string[]> {
    const engines = [...new Set([...this.bindings.values()].map((b) => b.engine))];
    const warmed = engines.filter((e) => e.warmUp !== undefined);
    await Promise.all(warmed.map((e) => e.warmUp?.(opts)));
    return warmed.map((e) => e.id);
  }

  for(modelId: string): EngineBinding {
    const b = this.bindings.get(modelId);
    if (!b) throw new Error(`no engine for model ${modelId}`);
    return b;
  }
}
