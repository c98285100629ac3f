"""The model's input features, exactly as src/speech/viseme-model.ts computes them.

16 kHz mono in -1..1; 400-sample frames every 160 (no centring); periodic Hann; |DFT|^2 of 201 bins;
13 triangular HTK-mel filters over 0..8000 Hz (peak 1, no area normalisation); 10 log10(max(p, 1e-10));
then per band the slope 0.5 (x[t] + x[t+1] - x[t-1] - x[t-2]) with zeros outside the clip.
check_features.py compares this with the TypeScript on a real recording.
"""
import numpy as np

SR = 16000
WINDOW = 400
HOP = 160
BINS = WINDOW // 2 + 1
MELS = 13
FEATURES = 2 * MELS


def _hz_to_mel(hz):
    return 2595.0 * np.log10(1.0 + hz / 700.0)


def _mel_to_hz(mel):
    return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)


def mel_filterbank():
    top = _hz_to_mel(SR / 2)
    pts = _mel_to_hz(top * np.arange(MELS + 2) / (MELS + 1))
    f = (SR / 2) * np.arange(BINS) / (BINS - 1)
    fb = np.zeros((BINS, MELS))
    for m in range(MELS):
        down = (f - pts[m]) / (pts[m + 1] - pts[m])
        up = (pts[m + 2] - f) / (pts[m + 2] - pts[m + 1])
        fb[:, m] = np.maximum(0.0, np.minimum(down, up))
    return fb


_FB = mel_filterbank()
_HANN = np.sin(np.pi * np.arange(WINDOW) / WINDOW) ** 2


def frame_count(n):
    return 1 if n < WINDOW else (n - WINDOW) // HOP + 1


def features(samples):
    """frames x 26 float32 for 16 kHz mono float samples."""
    x = np.asarray(samples, dtype=np.float64)
    frames = frame_count(len(x))
    need = (frames - 1) * HOP + WINDOW
    if len(x) < need:
        x = np.concatenate([x, np.zeros(need - len(x))])
    idx = np.arange(WINDOW)[None, :] + HOP * np.arange(frames)[:, None]
    spec = np.fft.rfft(x[idx] * _HANN, axis=1)
    power = spec.real ** 2 + spec.imag ** 2
    mel = 10.0 * np.log10(np.maximum(power @ _FB, 1e-10))
    pad = np.zeros((2, MELS))
    p = np.concatenate([pad, mel, pad])  # p[t + 2] = mel[t]
    slope = 0.5 * (p[2:-2] + p[3:-1] - p[1:-3] - p[0:-4])
    return np.concatenate([mel, slope], axis=1).astype(np.float32)
