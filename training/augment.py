"""Augmentations for 16 kHz mono float32 speech: generated noises (babble, music, street, room tone,
pink), reverberation, band limits (phone, laptop microphone), lossy codecs through ffmpeg (AAC, Opus,
MP3 at low bitrates) and level changes. Every one keeps the speech where it was in time (codec delay
is measured and removed), so the phone labels stay valid."""
import os
import subprocess
import tempfile

import numpy as np

SR = 16000


def _shape(x, gain_of_hz):
    """Filters x by a real frequency response given as a function of Hz (zero phase)."""
    n = len(x)
    size = 1 << int(np.ceil(np.log2(max(n, 2))))
    spec = np.fft.rfft(x, size)
    f = np.fft.rfftfreq(size, 1 / SR)
    return np.fft.irfft(spec * gain_of_hz(f), size)[:n].astype(np.float32)


def band(lo, hi, order=4):
    def g(f):
        f = np.maximum(f, 1e-3)
        h = 1 / np.sqrt(1 + (f / hi) ** (2 * order)) if hi else 1.0
        l = 1 / np.sqrt(1 + (lo / f) ** (2 * order)) if lo else 1.0
        return h * l
    return g


def rms(x):
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)) + 1e-12))


def pink(n, rng):
    return _shape(rng.standard_normal(n).astype(np.float32), lambda f: 1 / np.sqrt(np.maximum(f, 20)))


def brown(n, rng):
    return _shape(rng.standard_normal(n).astype(np.float32), lambda f: 1 / np.maximum(f, 20))


def music(n, rng):
    """Chords of harmonic notes that change every few hundred ms, a bass line and a beat."""
    out = np.zeros(n, np.float32)
    t = np.arange(n) / SR
    pos = 0
    while pos < n:
        dur = int(SR * rng.uniform(0.15, 0.6))
        seg = slice(pos, min(n, pos + dur))
        tt = t[seg] - t[pos]
        env = np.exp(-tt * rng.uniform(1, 6))
        for _ in range(rng.integers(1, 4)):
            f0 = 110 * 2 ** (rng.integers(0, 36) / 12)
            for h in range(1, 6):
                out[seg] += (env * np.sin(2 * np.pi * f0 * h * tt + rng.uniform(0, 6)) / h ** 1.3).astype(np.float32)
        pos += dur
    beat = int(SR * rng.uniform(0.35, 0.7))
    for b in range(0, n, beat):
        k = np.arange(min(n - b, 3000))
        out[b:b + len(k)] += (np.exp(-k / 400) * np.sin(2 * np.pi * 60 * k / SR) * 2).astype(np.float32)
        if rng.random() < 0.7:
            hat = rng.standard_normal(min(n - b, 600)).astype(np.float32) * np.exp(-np.arange(min(n - b, 600)) / 80)
            out[b:b + len(hat)] += _shape(hat, band(6000, None))
    return out


def street(n, rng):
    """Traffic rumble with passing swells, a distant horn now and then, and wind."""
    x = brown(n, rng) / (rms(brown(4000, rng)) + 1e-9)
    t = np.arange(n) / SR
    swell = 0.6 + 0.4 * np.sin(2 * np.pi * t / rng.uniform(2, 6) + rng.uniform(0, 6)) ** 2
    x = x / (rms(x) + 1e-9) * swell
    if rng.random() < 0.5:
        start = rng.integers(0, max(1, n - SR))
        k = np.arange(min(n - start, int(SR * rng.uniform(0.2, 0.6))))
        f = rng.uniform(350, 500)
        x[start:start + len(k)] += 0.5 * (np.sin(2 * np.pi * f * k / SR) + 0.5 * np.sin(2 * np.pi * 1.25 * f * k / SR))
    w = pink(n, rng)
    return (x + 0.3 * w / (rms(w) + 1e-9)).astype(np.float32)


def room(n, rng):
    """Room tone: air conditioning (band-limited noise), mains hum and its harmonics, faint hiss."""
    t = np.arange(n) / SR
    mains = rng.choice([50, 60])
    hum = sum(np.sin(2 * np.pi * mains * k * t + rng.uniform(0, 6)) / k for k in (1, 2, 3, 5))
    fan = _shape(rng.standard_normal(n).astype(np.float32), band(80, 1200, 2))
    hiss = rng.standard_normal(n).astype(np.float32) * 0.1
    return (0.3 * hum / (rms(hum) + 1e-9) + fan / (rms(fan) + 1e-9) + hiss).astype(np.float32)


def babble(n, rng, pool):
    """3-6 other voices talking at once (clips from the training pool)."""
    out = np.zeros(n, np.float32)
    for _ in range(rng.integers(3, 7)):
        c = pool[rng.integers(0, len(pool))]
        c = np.tile(c, int(np.ceil(n / len(c))) + 1)
        off = rng.integers(0, len(c) - n)
        piece = c[off:off + n]
        out += piece / (rms(piece) + 1e-9)
    return out


NOISES = ["babble", "music", "street", "room", "pink"]


def noise(kind, n, rng, pool):
    if kind == "babble":
        return babble(n, rng, pool)
    return {"music": music, "street": street, "room": room, "pink": pink}[kind](n, rng)


def mix(speech, noise_, snr_db, speech_rms=None):
    s = speech_rms or rms(speech[np.abs(speech) > 1e-4]) if np.any(np.abs(speech) > 1e-4) else rms(speech)
    g = s / (rms(noise_) + 1e-12) / 10 ** (snr_db / 20)
    return (speech + g * noise_).astype(np.float32)


def reverb(x, rng, rt60=None):
    """A room: the direct sound at its own time, then an exponentially decaying diffuse tail."""
    rt60 = rt60 or rng.uniform(0.15, 0.9)
    n = int(SR * rt60 * 1.2)
    k = np.arange(n)
    tail = rng.standard_normal(n) * np.exp(-6.9 * k / (SR * rt60))
    tail[: int(SR * 0.004)] = 0
    ir = np.zeros(n)
    ir[0] = 1.0
    ir += tail * rng.uniform(0.08, 0.3)
    size = 1 << int(np.ceil(np.log2(len(x) + n)))
    y = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(ir, size), size)[: len(x)]
    return (y * rms(x) / (rms(y) + 1e-12)).astype(np.float32)


def band_limit(x, kind):
    if kind == "phone":
        return _shape(x, band(300, 3400, 6))
    if kind == "laptop":
        # A small microphone: little bass, a presence bump, a soft top.
        return _shape(x, lambda f: band(180, 7000, 3)(f) * (1 + 0.8 * np.exp(-((f - 3000) / 900) ** 2)))
    return _shape(x, band(120, 5000, 4))  # cheap headset


CODECS = {
    "aac": ("m4a", ["-c:a", "aac"], [24, 32, 48]),
    "opus": ("ogg", ["-c:a", "libopus"], [12, 16, 24]),
    "mp3": ("mp3", ["-c:a", "libmp3lame"], [24, 32, 48]),
}


def codec(x, kind, kbps):
    ext, args, _ = CODECS[kind]
    with tempfile.TemporaryDirectory() as tmp:
        src, enc = os.path.join(tmp, "in.f32"), os.path.join(tmp, f"out.{ext}")
        x.astype(np.float32).tofile(src)
        subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-f", "f32le", "-ar", str(SR), "-ac", "1", "-i", src,
                        *args, "-b:a", f"{kbps}k", enc], check=True)
        out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", enc, "-ac", "1", "-ar", str(SR),
                              "-f", "f32le", "pipe:1"], check=True, capture_output=True).stdout
    y = np.frombuffer(out, np.float32)
    # Remove whatever delay the codec left (within +-60 ms), found by cross-correlation.
    m = min(len(x), len(y))
    size = 1 << int(np.ceil(np.log2(2 * m)))
    cc = np.fft.irfft(np.fft.rfft(y[:m], size) * np.conj(np.fft.rfft(x[:m], size)), size)
    lags = np.concatenate([np.arange(0, 960), np.arange(-960, 0)])
    lag = int(lags[np.argmax(np.concatenate([cc[:960], cc[-960:]]))])
    y = y[lag:] if lag >= 0 else np.concatenate([np.zeros(-lag, np.float32), y])
    y = y[: len(x)]
    return np.concatenate([y, np.zeros(len(x) - len(y), np.float32)]).astype(np.float32)


def level(x, db):
    return np.clip(x * 10 ** (db / 20), -1, 1).astype(np.float32)


def random_chain(x, rng, pool):
    """A random mixture of the above; returns the audio and what was done to it."""
    done = []
    if rng.random() < 0.35:
        x = reverb(x, rng)
        done.append("reverb")
    if rng.random() < 0.7:
        kind = NOISES[rng.integers(0, len(NOISES))]
        snr = float(rng.uniform(0, 20))
        x = mix(x, noise(kind, len(x), rng, pool), snr)
        done.append(f"{kind}@{snr:.0f}dB")
    if rng.random() < 0.3:
        kind = ["phone", "laptop", "headset"][rng.integers(0, 3)]
        x = band_limit(x, kind)
        done.append(kind)
    x = level(x / (np.max(np.abs(x)) + 1e-9) * 0.5, float(rng.uniform(-30, 6)))
    done.append("level")
    if rng.random() < 0.25:
        kind = list(CODECS)[rng.integers(0, 3)]
        kbps = int(rng.choice(CODECS[kind][2]))
        x = codec(x, kind, kbps)
        done.append(f"{kind}{kbps}k")
    return x, done
