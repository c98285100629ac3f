"""Stage 1: clean sentences from every English voice of festival, MBROLA (through festival and through
espeak-ng), espeak-ng and RHVoice, at varied rates and pitches, each with its phone times.

Writes <out>/clips/<voice>/<n>.wav (16 kHz mono) and <n>.json ({text, phones: [[start s, end s, class]]}).
festival, espeak-ng and MBROLA give their own phone times; RHVoice gives none, so its clips get a
`todo-align` file for align.ts (the project's forced aligner) to fill in.
"""
import argparse
import json
import os
import random
import subprocess
import tempfile
import wave

import numpy as np

from espeak_events import Espeak
from labels import festival_class, sampa_class
from sentences import sentences

SR = 16000

# name: (engine, voice, split). Held-out voices never reach training; they score the model.
VOICES = {
    "fest-slt-hts": ("festival", "cmu_us_slt_arctic_hts", "train"),
    "fest-kal": ("festival", "kal_diphone", "train"),
    "fest-us1": ("festival", "us1_mbrola", "train"),
    "fest-us2": ("festival", "us2_mbrola", "train"),
    "fest-en1": ("festival", "en1_mbrola", "train"),
    "fest-us3": ("festival", "us3_mbrola", "heldout"),
    "mb-us1": ("espeak-mbrola", "us1", "train"),
    "mb-us2": ("espeak-mbrola", "us2", "train"),
    "mb-en1": ("espeak-mbrola", "en1", "train"),
    "mb-us3": ("espeak-mbrola", "us3", "heldout"),
    "es-en-us": ("espeak", "en-us", "train"),
    "es-en-gb": ("espeak", "en-gb", "train"),
    "es-rp": ("espeak", "en-gb-x-rp", "train"),
    "es-029": ("espeak", "en-029", "train"),
    "es-gbclan": ("espeak", "en-gb-x-gbclan", "train"),
    "es-scotland": ("espeak", "en-gb-scotland", "heldout"),
    "es-gbcwmd": ("espeak", "en-gb-x-gbcwmd", "heldout"),
    "rh-bdl": ("rhvoice", "bdl", "train"),
    "rh-slt": ("rhvoice", "slt", "train"),
    "rh-alan": ("rhvoice", "alan", "train"),
    "rh-clb": ("rhvoice", "clb", "heldout"),
}
ESPEAK_VARIANTS = ["", "+m1", "+m3", "+f1", "+f2", "+f4", "+klatt", "+m7", "+f5"]


def to16k(path_or_bytes, rate=None, pitch=1.0):
    """Any audio -> 16 kHz mono float32 through ffmpeg, optionally pitch-shifted (duration kept)."""
    filters = []
    if abs(pitch - 1.0) > 1e-3:
        filters.append(f"asetrate={int((rate or SR) * pitch)},aresample={rate or SR},atempo={1 / pitch:.5f}")
    args = ["ffmpeg", "-v", "error", "-nostdin"]
    if isinstance(path_or_bytes, str):
        args += ["-i", path_or_bytes]
    else:
        args += ["-f", "f32le", "-ar", str(rate), "-ac", "1", "-i", "pipe:0"]
    if filters:
        args += ["-af", ",".join(filters)]
    args += ["-ac", "1", "-ar", str(SR), "-f", "f32le", "pipe:1"]
    inp = None if isinstance(path_or_bytes, str) else path_or_bytes.astype(np.float32).tobytes()
    out = subprocess.run(args, input=inp, capture_output=True, check=True).stdout
    return np.frombuffer(out, dtype=np.float32).copy()


def save(dirpath, n, audio, text, phones, extra=None):
    pcm = (np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes()
    with wave.open(os.path.join(dirpath, f"{n}.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm)
    meta = {"text": text, "phones": phones, **(extra or {})}
    name = f"{n}.json" if phones is not None else f"{n}.todo-align"
    with open(os.path.join(dirpath, name), "w") as f:
        json.dump(meta, f)


DUMP = """
(define (lipsync-dump utt wav seg)
  (utt.save.wave utt wav 'riff)
  (let ((fd (fopen seg "w")))
    (mapcar (lambda (s) (format fd "%s %f\\n" (item.name s) (item.feat s "end"))) (utt.relation.items utt 'Segment))
    (fclose fd)))
"""


def scheme(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def festival_voice(name, voice, texts, rng, tmp, outdir):
    hts = voice.endswith("_hts")
    lines = [f"(voice_{voice})", DUMP, "(define lipsync-hts hts_engine_params)" if hts else ""]
    plan = []
    for i, t in enumerate(texts):
        stretch = rng.uniform(0.8, 1.35)
        if hts:
            lines.append(f'(set! hts_engine_params (append lipsync-hts (list (list "-r" {1 / stretch:.4f}))))')
        else:
            lines.append(f"(Parameter.set 'Duration_Stretch {stretch:.4f})")
        wav, seg = os.path.join(tmp, f"{name}-{i}.wav"), os.path.join(tmp, f"{name}-{i}.seg")
        lines.append(f"(lipsync-dump (SynthText {scheme(t)}) {scheme(wav)} {scheme(seg)})")
        plan.append((t, wav, seg, stretch))
    script = os.path.join(tmp, f"{name}.scm")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["festival", "--batch", script], check=True, capture_output=True)
    phoneset = "mrpa" if voice.startswith("en1") else "radio"
    for i, (t, wav, seg, stretch) in enumerate(plan):
        pitch = 2 ** (rng.uniform(-3, 3) / 12)
        with wave.open(wav) as w:
            rate = w.getframerate()
        audio = to16k(wav, rate=rate, pitch=pitch)
        phones, start = [], 0.0
        for line in open(seg):
            p, end = line.split()
            end = float(end)
            c = festival_class(p, phoneset)
            if c is None:
                raise ValueError(f"{name}: unknown phone {p}")
            phones.append([start, end, c])
            start = end
        save(outdir, i, audio, t, phones, {"stretch": stretch, "pitch": pitch})


def espeak_mbrola_voice(name, voice, texts, rng, tmp, outdir):
    for i, t in enumerate(texts):
        wpm, pitch = rng.randint(120, 210), rng.randint(25, 80)
        txt, pho, wav = (os.path.join(tmp, f"{name}-{i}.{e}") for e in ("txt", "pho", "wav"))
        with open(txt, "w") as f:
            f.write(t + "\n")
        subprocess.run(["espeak-ng", "-v", f"mb-{voice}", "-s", str(wpm), "-p", str(pitch), "--pho",
                        f"--phonout={pho}", "-q", "-f", txt], check=True, capture_output=True)
        subprocess.run(["mbrola", "-e", f"/usr/share/mbrola/{voice}/{voice}", pho, wav], check=True,
                       capture_output=True)
        phones, start = [], 0.0
        for line in open(pho):
            f = line.split()
            if not f or f[0].startswith(";"):
                continue
            end = start + int(f[1]) / 1000
            c = sampa_class(f[0])
            if c is None:
                print(f"{name}/{i}: unknown phone {f[0]!r}, clip left out", flush=True)
                break
            phones.append([start, end, c])
            start = end
        else:
            save(outdir, i, to16k(wav), t, phones, {"wpm": wpm, "pitch": pitch})


def espeak_voice(name, voice, texts, rng, outdir, es):
    for i, t in enumerate(texts):
        wpm, pitch = rng.randint(130, 230), rng.randint(20, 85)
        variant = rng.choice(ESPEAK_VARIANTS)
        audio, events = es.synth(t, voice + variant, wpm, pitch)
        starts = [(s / es.rate, p) for s, p in events]
        phones = []
        for k, (s, p) in enumerate(starts):
            end = starts[k + 1][0] if k + 1 < len(starts) else len(audio) / es.rate
            c = sampa_class(p)
            if c is None:
                print(f"{name}/{i}: unknown phone {p!r}, clip left out", flush=True)
                phones = None
                break
            if end > s:
                phones.append([s, end, c])
        if phones is None:
            continue
        if phones and phones[0][0] > 0:
            phones.insert(0, [0.0, phones[0][0], 6])
        save(outdir, i, to16k(audio, rate=es.rate), t, phones, {"wpm": wpm, "pitch": pitch, "variant": variant})


def rhvoice_voice(name, voice, texts, rng, tmp, outdir):
    for i, t in enumerate(texts):
        rate, pitch = rng.randint(80, 130), rng.randint(80, 125)
        txt, wav = os.path.join(tmp, f"{name}-{i}.txt"), os.path.join(tmp, f"{name}-{i}.wav")
        with open(txt, "w") as f:
            f.write(t + "\n")
        subprocess.run(["RHVoice-test", "-p", voice, "-r", str(rate), "-t", str(pitch), "-i", txt, "-o", wav],
                       check=True, capture_output=True)
        save(outdir, i, to16k(wav), t, None, {"rate": rate, "pitch": pitch})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-voice", type=int, default=60)
    ap.add_argument("--heldout-per-voice", type=int, default=15)
    ap.add_argument("--rhvoice-per-voice", type=int, default=40)
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--voices", default=",".join(VOICES))
    a = ap.parse_args()
    es = None
    for k, name in enumerate(a.voices.split(",")):
        engine, voice, split = VOICES[name]
        outdir = os.path.join(a.out, "clips", name)
        if os.path.exists(os.path.join(outdir, "done")):
            continue
        os.makedirs(outdir, exist_ok=True)
        count = a.per_voice if split == "train" else a.heldout_per_voice
        if engine == "rhvoice" and split == "train":
            count = min(count, a.rhvoice_per_voice)  # each clip needs a forced alignment
        # Held-out voices speak sentences of their own (another seed): nothing they say was trained on.
        texts = sentences(count, a.seed * 1000 + k + (500 if split == "heldout" else 0))
        rng = random.Random(a.seed * 7919 + k)
        with tempfile.TemporaryDirectory() as tmp:
            if engine == "festival":
                festival_voice(name, voice, texts, rng, tmp, outdir)
            elif engine == "espeak-mbrola":
                espeak_mbrola_voice(name, voice, texts, rng, tmp, outdir)
            elif engine == "espeak":
                es = es or Espeak()
                espeak_voice(name, voice, texts, rng, outdir, es)
            else:
                rhvoice_voice(name, voice, texts, rng, tmp, outdir)
        with open(os.path.join(outdir, "split"), "w") as f:
            f.write(split)
        open(os.path.join(outdir, "done"), "w").close()
        print(name, split, count, flush=True)


if __name__ == "__main__":
    main()
