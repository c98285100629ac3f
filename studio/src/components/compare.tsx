// The result's player and its A/B comparison with the source video: the result alone, side by side, or
// a wipe (the result laid over the source, a slider choosing where one ends). One set of controls drives
// the result video; the source follows it (play, pause, seek, speed), so both always show the same moment.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** What a part below the player (the notes' timeline) reads and drives. */
export interface PlayerControl {
  /** The result's current time and length (null until known), in seconds. */
  time: number;
  duration: number | null;
  seek(seconds: number): void;
}

type Mode = 'result' | 'side' | 'wipe';
const RATES = [0.25, 0.5, 1];
/** Drift above which the source is put back onto the result's time while playing (seconds). */
const MAX_DRIFT = 0.08;

export function Compare({
  resultUrl,
  sourceUrl,
  fps,
  fpsKnown,
  resultName = 'Result',
  below,
}: {
  resultUrl: string;
  sourceUrl: string | null;
  fps: number;
  fpsKnown: boolean;
  /** What the result is called in the captions: Result, Dub, Edit. */
  resultName?: string;
  below?: (player: PlayerControl) => ComponentChildren;
}) {
  const [mode, setMode] = useState<Mode>('result');
  const [wipe, setWipe] = useState(50);
  const [rate, setRate] = useState(1);
  const [playing, setPlaying] = useState(false);
  const [time, setTime] = useState(0);
  const [duration, setDuration] = useState<number | null>(null);
  const result = useRef<HTMLVideoElement>(null);
  // A change of view makes a new result element: it starts where the last one was, at the same speed.
  const kept = useRef({ time: 0, rate: 1 });
  kept.current = { time, rate };
  const source = useRef<HTMLVideoElement>(null);
  const withSource = mode !== 'result' && sourceUrl !== null;

  // The source follows the result.
  useEffect(() => {
    const r = result.current;
    if (!r) return;
    const follow = (seek: boolean) => {
      const s = source.current;
      if (!s) return;
      s.playbackRate = r.playbackRate;
      if (seek || Math.abs(s.currentTime - r.currentTime) > MAX_DRIFT) s.currentTime = r.currentTime;
      if (r.paused && !s.paused) s.pause();
      if (!r.paused && s.paused) void s.play().catch(() => undefined);
    };
    const onTime = () => {
      setTime(r.currentTime);
      follow(false);
    };
    const onSeek = () => {
      setTime(r.currentTime);
      follow(true);
    };
    const onPlay = () => {
      setPlaying(true);
      follow(true);
    };
    const onPause = () => {
      setPlaying(false);
      follow(true);
    };
    const onRate = () => {
      setRate(r.playbackRate);
      follow(false);
    };
    const onDuration = () => setDuration(Number.isFinite(r.duration) ? r.duration : null);
    if (r.playbackRate !== kept.current.rate) r.playbackRate = kept.current.rate;
    if (kept.current.time > 0 && r.currentTime === 0) r.currentTime = kept.current.time;
    r.addEventListener('timeupdate', onTime);
    r.addEventListener('seeked', onSeek);
    r.addEventListener('play', onPlay);
    r.addEventListener('pause', onPause);
    r.addEventListener('ratechange', onRate);
    r.addEventListener('durationchange', onDuration);
    onDuration();
    follow(true);
    return () => {
      r.removeEventListener('timeupdate', onTime);
      r.removeEventListener('seeked', onSeek);
      r.removeEventListener('play', onPlay);
      r.removeEventListener('pause', onPause);
      r.removeEventListener('ratechange', onRate);
      r.removeEventListener('durationchange', onDuration);
    };
  }, [mode, resultUrl, sourceUrl]);

  const step = (frames: number) => {
    const r = result.current;
    if (!r) return;
    r.pause();
    const end = Number.isFinite(r.duration) ? r.duration : Infinity;
    r.currentTime = Math.min(end, Math.max(0, r.currentTime + frames / fps));
    setTime(r.currentTime);
  };
  const seek = (seconds: number) => {
    const r = result.current;
    if (!r) return;
    r.pause();
    r.currentTime = Math.max(0, seconds);
    setTime(r.currentTime);
  };
  const speed = (value: number) => {
    setRate(value);
    if (result.current) result.current.playbackRate = value;
    if (source.current) source.current.playbackRate = value;
  };
  const toggle = () => {
    const r = result.current;
    if (!r) return;
    if (r.paused) void r.play().catch(() => undefined);
    else r.pause();
  };

  // , and . step one frame back and forward (as in common video editors), except while typing.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      const typing =
        t instanceof HTMLTextAreaElement ||
        t instanceof HTMLSelectElement ||
        (t instanceof HTMLInputElement && !['range', 'radio', 'checkbox', 'button'].includes(t.type));
      if (typing) return;
      if (e.key === ',' || e.key === '.') {
        e.preventDefault();
        step(e.key === ',' ? -1 : 1);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [fps]);

  const frame = Math.round(time * fps);
  const resultVideo = (extra: Record<string, unknown> = {}) => (
    <video
      ref={result}
      src={resultUrl}
      class="player"
      preload="auto"
      playsInline
      controls={mode === 'result'}
      aria-label="Result video"
      {...extra}
    />
  );
  const sourceVideo = () => (
    <video
      ref={source}
      src={sourceUrl ?? undefined}
      class="player"
      preload="auto"
      playsInline
      muted
      aria-label="Source video"
    />
  );

  return (
    <section aria-labelledby="compare-title" class="compare">
      <h2 id="compare-title">Result</h2>
      <fieldset class="modes">
        <legend>View</legend>
        {(
          [
            ['result', 'Result only'],
            ['side', 'Side by side'],
            ['wipe', 'Wipe'],
          ] as const
        ).map(([value, label]) => (
          <label key={value} class="choice">
            <input
              type="radio"
              name="compare-mode"
              value={value}
              checked={mode === value}
              disabled={value !== 'result' && sourceUrl === null}
              onChange={() => setMode(value)}
            />
            {label}
          </label>
        ))}
      </fieldset>
      {sourceUrl === null ? (
        <p class="muted">The source video cannot be shown, so there is nothing to compare with.</p>
      ) : null}

      {!withSource ? (
        resultVideo()
      ) : mode === 'side' ? (
        <div class="side-by-side" data-compare="side">
          <figure>
            {sourceVideo()}
            <figcaption>Source</figcaption>
          </figure>
          <figure>
            {resultVideo()}
            <figcaption>{resultName}</figcaption>
          </figure>
        </div>
      ) : (
        <>
          <div class="wipe" data-compare="wipe">
            {sourceVideo()}
            {resultVideo({ class: 'player wipe-top', style: { clipPath: `inset(0 0 0 ${wipe}%)` } })}
            <div class="wipe-line" aria-hidden="true" style={{ left: `${wipe}%` }} />
            <span class="wipe-tag wipe-tag-left" aria-hidden="true">
              Source
            </span>
            <span class="wipe-tag wipe-tag-right" aria-hidden="true">
              {resultName}
            </span>
          </div>
          <label class="wipe-slider">
            Wipe position (source on the left, result on the right)
            <input
              type="range"
              min={0}
              max={100}
              step={1}
              value={wipe}
              aria-valuetext={`${wipe} % source, ${100 - wipe} % result`}
              onInput={(e) => setWipe(Number(e.currentTarget.value))}
            />
          </label>
        </>
      )}

      <div class="transport" role="group" aria-label="Playback">
        {mode !== 'result' ? (
          <button type="button" class="secondary" onClick={toggle}>
            {playing ? 'Pause' : 'Play'}
          </button>
        ) : null}
        <button type="button" class="secondary" onClick={() => step(-1)} aria-keyshortcuts=",">
          Previous frame
        </button>
        <button type="button" class="secondary" onClick={() => step(1)} aria-keyshortcuts=".">
          Next frame
        </button>
        <fieldset class="rates">
          <legend>Speed</legend>
          {RATES.map((r) => (
            <label key={r} class="choice">
              <input
                type="radio"
                name="compare-rate"
                value={r}
                checked={rate === r}
                onChange={() => speed(r)}
              />
              {r}×
            </label>
          ))}
        </fieldset>
        <span class="muted" aria-live="off">
          {time.toFixed(2)} s · frame {frame}
        </span>
      </div>
      <p class="muted">
        Keys: comma and full stop step one frame back and forward (1/{fps} s
        {fpsKnown ? '' : ', assuming 25 frames a second'}).
      </p>
      {below?.({ time, duration, seek })}
    </section>
  );
}
