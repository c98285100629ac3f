// One input of a generation as the submit step left it: a stored blob with its probe. Declared with
// the pipeline that consumes it so that services/ (which resolves inputs) imports downward only.
import type { MediaProbe } from '../media/probe.js';
import type { SpeechTimeline } from '../speech/types.js';

export interface ResolvedMedia {
  blobKey: string;
  /** url: fetched for this generation (deleted with it); generation: another generation's stored copy. */
  source: 'asset' | 'url' | 'generation';
  assetId?: string;
  url?: string;
  probe: MediaProbe;
  /** Word and phoneme times of synthesized speech (a TTS asset), for the engine's mouth shapes. */
  timeline?: SpeechTimeline;
}
