// The identity engine: frames leave unchanged. Until a real engine is configured for a model, the
// output is the conformed video with the new audio and the mouth is NOT re-animated (see README).
import type { EngineJob, EngineRun, LipsyncEngine } from './engine.js';
import type { PixelFormat } from '../media/frames.js';

export class PassthroughEngine implements LipsyncEngine {
  readonly id = 'passthrough';
  readonly passthrough = true;

  /** Frames pass unchanged, so the codecs' own format costs least. */
  pixelFormatFor(): PixelFormat {
    return 'yuv420p';
  }

  start(job: EngineJob): EngineRun {
    let n = 0;
    async function* frames() {
      for await (const f of job.frames) {
        n++;
        yield f;
      }
    }
    return {
      frames: frames(),
      report: () => ({ engine: this.id, framesTotal: n, framesWithFace: 0, lipMotionGenerated: false }),
    };
  }
}
