import { useEffect, useRef, useState } from 'preact/hooks';

/** A point in the video's own pixels, on one frame (the API's active_speaker_detection). */
export interface FaceChoice {
  x: number;
  y: number;
  seconds: number;
}

interface Props {
  src: string;
  value: FaceChoice | null;
  onChange: (c: FaceChoice | null) => void;
  /** The frame number of the chosen moment, when the frame rate is known. */
  frameOf: (seconds: number) => number | null;
  /** The frame rate seen while the video plays (where the browser tells frame times). */
  onFps?: (fps: number) => void;
  /** The moment (seconds) the video was paused or moved to while paused. */
  onMoment?: (seconds: number) => void;
}

/**
 * The frame rate from the times of the frames shown while the video plays: the shortest step between
 * two shown frames is one frame (a skipped frame only makes a longer step). Told after 12 steps.
 */
function measureFps(v: HTMLVideoElement, tell: (fps: number) => void): () => void {
  if (typeof v.requestVideoFrameCallback !== 'function') return () => undefined;
  let last: number | null = null;
  let shortest = Infinity;
  let steps = 0;
  let handle = 0;
  const onFrame = (_now: number, meta: VideoFrameCallbackMetadata) => {
    if (last !== null && meta.mediaTime > last) {
      shortest = Math.min(shortest, meta.mediaTime - last);
      if (++steps === 12) tell(Math.round(100 / shortest) / 100);
    }
    last = meta.mediaTime;
    if (steps < 12) handle = v.requestVideoFrameCallback(onFrame);
  };
  const restart = () => (last = null);
  v.addEventListener('seeking', restart);
  handle = v.requestVideoFrameCallback(onFrame);
  return () => {
    v.cancelVideoFrameCallback(handle);
    v.removeEventListener('seeking', restart);
  };
}

/** Where the picture sits inside the element (the video is letterboxed, never stretched). */
function pictureBox(v: HTMLVideoElement) {
  const scale = Math.min(v.clientWidth / v.videoWidth, v.clientHeight / v.videoHeight);
  return {
    scale,
    left: (v.clientWidth - v.videoWidth * scale) / 2,
    top: (v.clientHeight - v.videoHeight * scale) / 2,
  };
}

/**
 * The chosen video, to pick the face to animate: pause on a frame, press "Choose the face", then
 * click the face (or move the marker with the arrow keys and press Enter).
 */
export function FacePicker({ src, value, onChange, frameOf, onFps, onMoment }: Props) {
  const video = useRef<HTMLVideoElement>(null);
  const [choosing, setChoosing] = useState(false);
  // The keyboard marker, as fractions of the picture.
  const [marker, setMarker] = useState({ fx: 0.5, fy: 0.4 });
  const [, redraw] = useState(0);

  useEffect(() => {
    setChoosing(false);
    // The marker of a choice sits on the picture: redrawn when the element changes size.
    const v = video.current;
    if (!v) return;
    const ro = new ResizeObserver(() => redraw((n) => n + 1));
    ro.observe(v);
    const stopMeasuring = measureFps(v, (fps) => onFps?.(fps));
    return () => {
      ro.disconnect();
      stopMeasuring();
    };
  }, [src]);

  const start = () => {
    const v = video.current;
    if (!v || !v.videoWidth) return;
    v.pause();
    setChoosing(true);
  };
  const choose = (fx: number, fy: number) => {
    const v = video.current;
    if (!v) return;
    const clamp = (n: number, max: number) => Math.min(Math.max(Math.round(n), 0), max - 1);
    onChange({
      x: clamp(fx * v.videoWidth, v.videoWidth),
      y: clamp(fy * v.videoHeight, v.videoHeight),
      seconds: v.currentTime,
    });
    setChoosing(false);
  };
  const onClick = (e: MouseEvent) => {
    const v = video.current!;
    const b = pictureBox(v);
    const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
    const fx = (e.clientX - r.left - b.left) / (v.videoWidth * b.scale);
    const fy = (e.clientY - r.top - b.top) / (v.videoHeight * b.scale);
    if (fx < 0 || fx > 1 || fy < 0 || fy > 1) return;
    choose(fx, fy);
  };
  const onKey = (e: KeyboardEvent) => {
    const step = e.shiftKey ? 0.1 : 0.02;
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [-step, 0],
      ArrowRight: [step, 0],
      ArrowUp: [0, -step],
      ArrowDown: [0, step],
    };
    const m = moves[e.key];
    if (m) {
      e.preventDefault();
      setMarker(({ fx, fy }) => ({
        fx: Math.min(Math.max(fx + m[0], 0), 1),
        fy: Math.min(Math.max(fy + m[1], 0), 1),
      }));
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      choose(marker.fx, marker.fy);
    } else if (e.key === 'Escape') {
      setChoosing(false);
    }
  };

  const v = video.current;
  const dot = (fx: number, fy: number) => {
    if (!v || !v.videoWidth) return undefined;
    const b = pictureBox(v);
    return {
      left: `${b.left + fx * v.videoWidth * b.scale}px`,
      top: `${b.top + fy * v.videoHeight * b.scale}px`,
    };
  };
  const frame = value ? frameOf(value.seconds) : null;

  return (
    <div class="face-picker">
      <div class="face-stage">
        <video
          ref={video}
          src={src}
          controls
          preload="auto"
          class="player"
          aria-label="The chosen video"
          onPause={(e) => onMoment?.(e.currentTarget.currentTime)}
          onSeeked={(e) => {
            if (e.currentTarget.paused) onMoment?.(e.currentTarget.currentTime);
          }}
        />
        {value && !choosing && v?.videoWidth ? (
          <span
            class="face-dot"
            aria-hidden="true"
            style={dot(value.x / v.videoWidth, value.y / v.videoHeight)}
          />
        ) : null}
        {choosing ? (
          <div
            class="face-layer"
            role="application"
            tabIndex={0}
            aria-label="Click the face to animate, or move the marker with the arrow keys and press Enter. Escape cancels."
            ref={(el) => el?.focus()}
            onClick={onClick}
            onKeyDown={onKey}
          >
            <span class="face-dot marker" aria-hidden="true" style={dot(marker.fx, marker.fy)} />
          </div>
        ) : null}
      </div>
      <p class="muted">
        With several people in the picture, pause on a frame where the speaker's face shows and choose it.
        Without a choice, the largest face is animated.
      </p>
      <p>
        {choosing ? (
          <button type="button" class="secondary" onClick={() => setChoosing(false)}>
            Stop choosing
          </button>
        ) : (
          <button type="button" class="secondary" onClick={start}>
            Choose the face on this frame
          </button>
        )}{' '}
        {value ? (
          <button type="button" class="link" onClick={() => onChange(null)}>
            Forget the chosen face
          </button>
        ) : null}
      </p>
      <p role="status">
        {choosing
          ? 'Click the face to animate.'
          : value
            ? `Face chosen at ${value.x}, ${value.y} (pixels) on ${
                frame === null ? `the frame at ${value.seconds.toFixed(2)} s` : `frame ${frame}`
              }.`
            : ''}
      </p>
    </div>
  );
}
