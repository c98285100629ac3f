"""Stage 2: clips -> model inputs and targets.

Training voices: each clip padded with 0.1-0.8 s of silence on each side (pauses to keep shut, in noise
too), then a clean copy and `--copies` randomly augmented copies (augment.random_chain). Held-out voices:
fixed conditions (clean; babble and music noise at 10 dB SNR; Opus 16 kb/s),
each scored on its own by train.py/evaluate.py.
Targets: the class of the phone sounding at 10 k + 5 ms for frame k (train.py applies the lookahead).
Writes <data>/train.npz and <data>/heldout.npz.
"""
import argparse
import glob
import json
import multiprocessing
import os
import wave

import numpy as np

import augment
from features import HOP, SR, features, frame_count
from labels import REST


def read_wav(path):
    with wave.open(path) as w:
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768


def write_wav(path, x):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())


def targets(phones, frames, offset_s):
    t = (np.arange(frames) * HOP + HOP / 2) / SR - offset_s
    y = np.full(frames, REST, np.int64)
    for start, end, c in phones:
        y[(t >= start) & (t < end)] = c
    return y


def load_clips(root, per_voice=None):
    clips = {"train": [], "heldout": []}
    for d in sorted(glob.glob(os.path.join(root, "clips", "*"))):
        if not os.path.exists(os.path.join(d, "done")):
            continue
        split = open(os.path.join(d, "split")).read().strip()
        found = sorted(glob.glob(os.path.join(d, "*.json")), key=lambda p: int(os.path.basename(p)[:-5]))
        for j in found[:per_voice] if split == "train" else found:
            meta = json.load(open(j))
            clips[split].append((os.path.basename(d), read_wav(j[:-5] + ".wav"), meta["phones"], meta["text"]))
    return clips


HELDOUT_CONDITIONS = ["clean", "babble10", "music10", "opus16"]


def heldout_version(x, cond, rng, pool):
    if cond == "clean":
        return x
    if cond.endswith("10"):
        return augment.mix(x, augment.noise(cond[:-2], len(x), rng, pool), 10)
    if cond == "opus16":
        return augment.codec(x, "opus", 16)
    return augment.band_limit(augment.reverb(x, rng, 0.5), "phone")


_POOL = []


def train_versions(job):
    """One training clip: silence around it, a clean copy and `copies` augmented ones (own seed each,
    so the result does not depend on the number of workers)."""
    k, seed, copies, x, phones = job
    rng = np.random.default_rng([seed, k])
    lead, tail = rng.uniform(0.1, 0.8, 2)
    padded = np.concatenate([np.zeros(int(lead * SR), np.float32), x, np.zeros(int(tail * SR), np.float32)])
    y = targets(phones, frame_count(len(padded)), int(lead * SR) / SR)
    versions = [(augment.level(padded, float(rng.uniform(-20, 0))), "clean")]
    for _ in range(copies):
        v, done = augment.random_chain(padded, rng, _POOL)
        versions.append((v, "+".join(done)))
    return [(features(v), y, what) for v, what in versions]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--copies", type=int, default=2)
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--per-voice", type=int, default=None, help="use only the first N clips of each training voice")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    clips = load_clips(a.data, a.per_voice)
    pool = [c[1] for c in clips["train"]]  # babble comes from training voices only
    out = {"train": {"x": [], "y": [], "voice": [], "aug": []}, "heldout": {"x": [], "y": [], "voice": [], "aug": []}}
    global _POOL
    _POOL = pool
    jobs = [(k, a.seed, a.copies, c[1], c[2]) for k, c in enumerate(clips["train"])]
    with multiprocessing.Pool(a.workers) as workers:
        for k, ((voice, *_), versions) in enumerate(zip(clips["train"], workers.imap(train_versions, jobs, chunksize=4))):
            if k % 50 == 0:
                print(f"train clip {k} of {len(jobs)}", flush=True)
            for f, y, what in versions:
                out["train"]["x"].append(f)
                out["train"]["y"].append(y)
                out["train"]["voice"].append(voice)
                out["train"]["aug"].append(what)
    # Held-out audio also goes out as WAV files with its truth, for evaluate.ts to run the models
    # through the service's own code (and the aligner on the known text).
    hdir = os.path.join(a.data, "heldout")
    os.makedirs(hdir, exist_ok=True)
    index = []
    for k, (voice, x, phones, text) in enumerate(clips["heldout"]):
        padded = np.concatenate([np.zeros(int(0.5 * SR), np.float32), x, np.zeros(int(0.5 * SR), np.float32)])
        y = targets(phones, frame_count(len(padded)), int(0.5 * SR) / SR)
        for cond in HELDOUT_CONDITIONS:
            v = heldout_version(padded, cond, rng, pool)
            name = f"{voice}-{k}-{cond}.wav"
            write_wav(os.path.join(hdir, name), v)
            index.append({"wav": name, "voice": voice, "condition": cond, "text": text,
                          "phones": [[s + 0.5, e + 0.5, c] for s, e, c in phones]})
            out["heldout"]["x"].append(features(v))
            out["heldout"]["y"].append(y)
            out["heldout"]["voice"].append(voice)
            out["heldout"]["aug"].append(cond)
    with open(os.path.join(hdir, "index.json"), "w") as f:
        json.dump(index, f)
    for split, d in out.items():
        lengths = np.array([len(x) for x in d["x"]])
        np.savez_compressed(
            os.path.join(a.data, f"{split}.npz"),
            x=np.concatenate(d["x"]) if d["x"] else np.zeros((0, 26), np.float32),
            y=np.concatenate(d["y"]) if d["y"] else np.zeros(0, np.int64),
            lengths=lengths, voice=np.array(d["voice"]), aug=np.array(d["aug"]))
        print(split, len(lengths), "sequences,", int(lengths.sum()), "frames", flush=True)


if __name__ == "__main__":
    main()
