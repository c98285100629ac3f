// ffmpeg filter graphs for a conform plan: the picture chain (timing, frame rate, size) and the
// soundtrack graph (cut, pad, or original audio with the new audio inside segments). Pure string
// building; conform.ts runs them.
import type { ConformPlan } from './conform-plan.js';
import { AUDIO_CHANNEL_LAYOUT, AUDIO_SAMPLE_RATE } from './encoding.js';

/** Filters that fit the picture to the output size. */
export function sizeFilters(plan: ConformPlan): string[] {
  const { width: w, height: h } = plan;
  if (plan.fit === 'letterbox') {
    return [
      `scale=${w}:${h}:force_original_aspect_ratio=decrease:force_divisible_by=2:flags=bicubic`,
      `pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2:color=black`,
      'setsar=1',
    ];
  }
  return [`scale=${w}:${h}:flags=bicubic`, 'setsar=1'];
}

/**
 * The picture chain from one decoded input to conformed frames: timestamps from zero (stretched for
 * remap, generated for a still image), constant frame rate, output size, then exactly
 * plan.frameCount frames (the last frame is held if the source runs short by rounding).
 */
export function videoChain(plan: ConformPlan): string {
  const timing: string[] = [];
  if (plan.video.strategy === 'still') {
    timing.push('loop=loop=-1:size=1:start=0', `setpts=N/(${plan.fpsText})/TB`);
  } else if (plan.video.strategy === 'stretch') {
    timing.push(`setpts=${plan.video.stretchFactor.toFixed(9)}*(PTS-STARTPTS)`);
  } else {
    timing.push('setpts=PTS-STARTPTS');
  }
  timing.push(`fps=${plan.fpsText}`);
  // The frame count is cut in the graph, not with -frames:v: that option would end the whole
  // output file (the audio too) as soon as the video has its frames.
  const hold = ['tpad=stop=-1:stop_mode=clone', `trim=end_frame=${plan.frameCount}`];
  return [...timing, ...sizeFilters(plan), ...hold].join(',');
}

const AUDIO_NORMALISE = [
  'asetpts=PTS-STARTPTS',
  `aresample=${AUDIO_SAMPLE_RATE}`,
  `aformat=sample_fmts=fltp:channel_layouts=${AUDIO_CHANNEL_LAYOUT}`,
].join(',');

function samples(seconds: number): number {
  return Math.round(seconds * AUDIO_SAMPLE_RATE);
}

export interface AudioGraph {
  /** Input options and inputs. */
  inputArgs: string[];
  graph: string;
  /** Output label (without brackets). */
  output: string;
  /** Exact length of the soundtrack in samples at AUDIO_SAMPLE_RATE. */
  totalSamples: number;
}

/**
 * The soundtrack of the output, exactly plan.durationSeconds long. Without segments: the new audio
 * cut or padded with silence. With segments: the original audio (or silence) with each segment's
 * window of the new audio spliced in, sample-exact.
 */
export function audioGraph(
  plan: ConformPlan,
  newAudioPath: string,
  originalAudioPath: string | null,
): AudioGraph {
  const total = samples(plan.durationSeconds);
  if (plan.segments.length === 0) {
    return {
      inputArgs: ['-i', newAudioPath],
      graph: `[0:a:0]${AUDIO_NORMALISE},apad,atrim=end_sample=${total}[aout]`,
      output: 'aout',
      totalSamples: total,
    };
  }

  const inputArgs: string[] = [];
  const chains: string[] = [];
  const base =
    plan.outsideSegments === 'original_audio' && originalAudioPath !== null
      ? (inputArgs.push('-i', originalAudioPath), `[0:a:0]${AUDIO_NORMALISE},apad,atrim=end_sample=${total}`)
      : `anullsrc=r=${AUDIO_SAMPLE_RATE}:cl=${AUDIO_CHANNEL_LAYOUT},atrim=end_sample=${total}`;

  // Pieces in time order: original [cursor, start), new audio [start, end), ..., original [end, total).
  const pieces: string[] = [];
  const baseRanges: [number, number][] = [];
  let cursor = 0;
  plan.segments.forEach((s, i) => {
    const start = samples(s.startTime);
    const end = Math.min(total, samples(s.endTime));
    if (start > cursor) baseRanges.push([cursor, start]);
    if (start > cursor) pieces.push(`[b${baseRanges.length - 1}]`);
    const input = inputArgs.length / 2;
    inputArgs.push('-i', newAudioPath);
    const a0 = samples(s.audioStart);
    const a1 = samples(s.audioEnd);
    chains.push(
      `[${input}:a:0]${AUDIO_NORMALISE},atrim=start_sample=${a0}:end_sample=${a1},` +
        `asetpts=PTS-STARTPTS,apad,atrim=end_sample=${end - start}[n${i}]`,
    );
    pieces.push(`[n${i}]`);
    cursor = end;
  });
  if (cursor < total) {
    baseRanges.push([cursor, total]);
    pieces.push(`[b${baseRanges.length - 1}]`);
  }
  if (baseRanges.length > 0) {
    const split = baseRanges.map((_, i) => `[s${i}]`).join('');
    chains.push(`${base},asplit=${baseRanges.length}${split}`);
    baseRanges.forEach(([from, to], i) => {
      chains.push(`[s${i}]atrim=start_sample=${from}:end_sample=${to},asetpts=PTS-STARTPTS[b${i}]`);
    });
  } else if (plan.outsideSegments === 'original_audio' && originalAudioPath !== null) {
    // Segments cover everything: the original audio input is unused; discard it explicitly.
    chains.push(`${base},anullsink`);
  }
  chains.push(`${pieces.join('')}concat=n=${pieces.length}:v=0:a=1[aout]`);
  return { inputArgs, graph: chains.join(';'), output: 'aout', totalSamples: total };
}

/** Quotes a path for an ffconcat list file. */
export function concatListEntry(path: string): string {
  return `file '${path.replace(/'/g, `'\\''`)}'`;
}
