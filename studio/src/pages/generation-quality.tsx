// The engine's quality report (the generation's `quality`, docs/generations.md) in plain sentences;
// the raw fields stay one click away for those who want them.

type Q = Record<string, unknown>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The report as sentences, most useful first; fields it does not know are left to the details. */
export function qualitySentences(q: Q): string[] {
  const out: string[] = [];
  const total = num(q.framesTotal);
  const withFace = num(q.framesWithFace);
  const redrawn = num(q.framesRedrawn);
  if (q.engine === 'passthrough') {
    out.push('The passthrough engine ran: the video was copied without moving the lips.');
  } else if (typeof q.engine === 'string') {
    out.push(`The ${q.engine === 'cpu' ? 'built-in CPU' : q.engine} lip-sync engine made this result.`);
  }
  if (total !== null && withFace !== null) {
    const share = total > 0 ? Math.round((withFace / total) * 100) : 0;
    out.push(
      `A face was found in ${withFace} of ${plural(total, 'frame')} (${share} %)` +
        (withFace < total ? '; frames without one were left as they were.' : '.'),
    );
  }
  if (redrawn !== null) out.push(`The mouth was redrawn in ${plural(redrawn, 'frame')}.`);
  if (q.lipMotionGenerated === false) {
    out.push('No lip motion was generated: the audio was silent, no face was found, or nothing was redrawn.');
  }
  const sync = num(q.mouthAudioCorrelation);
  if (sync !== null) {
    const word = sync >= 0.5 ? 'good' : sync >= 0.2 ? 'fair' : 'weak';
    out.push(
      `Sync score ${sync.toFixed(2)} (${word}): how closely the mouth opening follows the loudness of the ` +
        'audio, from −1 to 1, higher is better.',
    );
  } else if ('mouthAudioCorrelation' in q) {
    out.push('No sync score: too few frames were redrawn to measure one.');
  }
  if (q.mouthDriver === 'phonemes') {
    const share = num(q.phonemeShare);
    out.push(
      'The mouth shapes follow the recognised speech sounds' +
        (share !== null ? ` (${Math.round(share * 100)} % of the speech)` : '') +
        ', the rest follows the loudness.',
    );
  } else if (q.mouthDriver === 'audio') {
    out.push('The mouth shapes follow the loudness of the audio.');
  }
  const level = num(q.speechLevelDb);
  if (level !== null) out.push(`The speech level was ${level.toFixed(1)} dBFS.`);
  const face = num(q.medianFaceSize);
  if (face !== null) {
    out.push(
      `The face was about ${Math.round(face)} pixels across` +
        (face < 96 ? ': a face this small animates coarsely.' : '.'),
    );
  }
  const detections = num(q.detections);
  if (detections !== null && detections > 0) {
    out.push(
      `The face detector ran ${plural(detections, 'time')}; the tracker followed the face in between.`,
    );
  }
  const interpolated = num(q.landmarksInterpolated);
  if (interpolated !== null && interpolated > 0) {
    out.push(`In ${plural(interpolated, 'frame')} the face was still, so its position was interpolated.`);
  }
  const speaker = q.activeSpeaker as Q | undefined;
  if (speaker && typeof speaker === 'object') {
    const faces = num(speaker.faces);
    const switches = num(speaker.switches);
    const how =
      speaker.method === 'audio-visual'
        ? 'by matching mouths with the video’s own speech'
        : speaker.method === 'mouth-motion'
          ? 'by mouth movement (the video has no soundtrack)'
          : 'as the only face';
    out.push(
      `The speaker was chosen ${how}` +
        (faces !== null ? ` among ${plural(faces, 'face')}` : '') +
        (switches !== null ? `, with ${plural(switches, 'change')} of speaker.` : '.'),
    );
  }
  const w = num(q.width);
  const h = num(q.height);
  const fps = num(q.fps);
  if (w !== null && h !== null) {
    out.push(
      `The video was processed at ${w}×${h}` +
        (fps !== null ? `, ${Math.round(fps * 100) / 100} frames a second` : '') +
        (typeof q.syncMode === 'string' ? `, sync mode ${q.syncMode.replace(/_/g, ' ')}.` : '.'),
    );
  }
  return out;
}

export function QualityReport({ quality }: { quality: Q | null | undefined }) {
  if (!quality || typeof quality !== 'object') {
    return (
      <section aria-labelledby="quality-title">
        <h2 id="quality-title">Quality report</h2>
        <p class="muted">No quality report was kept for this generation.</p>
      </section>
    );
  }
  const warnings = Array.isArray(quality.warnings) ? quality.warnings.map(String) : [];
  return (
    <section aria-labelledby="quality-title" class="quality">
      <h2 id="quality-title">Quality report</h2>
      <ul class="quality-sentences">
        {qualitySentences(quality).map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ul>
      {warnings.length > 0 ? (
        <>
          <h3>Warnings</h3>
          <ul class="quality-warnings">
            {warnings.map((w) => (
              <li key={w}>{w.charAt(0).toUpperCase() + w.slice(1)}.</li>
            ))}
          </ul>
        </>
      ) : (
        <p>No warnings.</p>
      )}
      <details>
        <summary>All measurements</summary>
        <dl class="quality-raw">
          {Object.entries(quality).map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
            </div>
          ))}
        </dl>
      </details>
    </section>
  );
}
