"""Stage 3: trains the causal classifier and exports models/articulation-v1.onnx.

The network has the same interface as the downloadable cherry-lip-sync model, so the service's
src/speech/viseme-model.ts runs it unchanged: `input` 1 x T x 26 -> `output` 1 x T x 12 logits, a
BatchNorm on the features, two unidirectional GRUs, a linear layer; output t + 3 describes frame t.
"""
import argparse
import os
import random
import time

import numpy as np
import torch
from torch import nn

from labels import CLASSES, M, REST

LOOKAHEAD = 3


class Net(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.BatchNorm1d(26)
        self.gru = nn.GRU(26, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, len(CLASSES))

    def forward(self, x):
        x = self.norm(x.transpose(1, 2)).transpose(1, 2)
        h, _ = self.gru(x)
        return self.out(h)


def sequences(npz):
    d = np.load(npz)
    x, y, lengths = d["x"], d["y"], d["lengths"]  # each access of an npz member reads it again
    ends = np.cumsum(lengths)
    starts = ends - lengths
    return [(x[s:e], y[s:e]) for s, e in zip(starts, ends)], d["aug"], d["voice"]


def batch(seqs, crop, rng):
    xs = np.zeros((len(seqs), crop, 26), np.float32)
    ys = np.full((len(seqs), crop), -100, np.int64)
    for i, (x, y) in enumerate(seqs):
        start = rng.randint(0, max(0, len(x) - crop))
        n = min(crop, len(x) - start)
        xs[i, :n] = x[start:start + n]
        ys[i, :n] = y[start:start + n]
    return torch.from_numpy(xs), torch.from_numpy(ys)


def shifted_loss(logits, y, weights):
    # Output t + LOOKAHEAD is scored against the target of frame t.
    lg = logits[:, LOOKAHEAD:].reshape(-1, len(CLASSES))
    tg = y[:, :-LOOKAHEAD].reshape(-1)
    return nn.functional.cross_entropy(lg, tg, weight=weights, ignore_index=-100, label_smoothing=0.05)


@torch.no_grad()
def scores(model, seqs):
    model.eval()
    hit = tot = mb_hit = mb_tot = rest_hit = rest_tot = fp = pred_m = 0
    for x, y in seqs:
        p = model(torch.from_numpy(x)[None])[0, LOOKAHEAD:].argmax(-1).numpy()
        t = y[:-LOOKAHEAD]
        hit += int((p == t).sum())
        tot += len(t)
        mb_hit += int(((p == M) & (t == M)).sum())
        mb_tot += int((t == M).sum())
        rest_hit += int(((p == REST) & (t == REST)).sum())
        rest_tot += int((t == REST).sum())
        pred_m += int((p == M).sum())
        fp += int(((p == M) & (t != M)).sum())
    model.train()
    return {"acc": hit / max(1, tot), "pbm_recall": mb_hit / max(1, mb_tot),
            "pbm_precision": (pred_m - fp) / max(1, pred_m), "rest_recall": rest_hit / max(1, rest_tot)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default="models/articulation-v1.onnx")
    ap.add_argument("--hidden", type=int, default=80)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--steps-per-epoch", type=int, default=100)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--crop", type=int, default=400)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--export-only", action="store_true", help="export <data>/model.pt again")
    ap.add_argument("--prior-correction", type=float, default=1.0)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    torch.set_num_threads(a.threads)
    train, _, _ = sequences(os.path.join(a.data, "train.npz"))
    held, held_aug, _ = sequences(os.path.join(a.data, "heldout.npz"))
    counts = np.bincount(np.concatenate([y for _, y in train]), minlength=len(CLASSES)).astype(np.float64)
    # Balance the classes partly (square root of inverse frequency); lips shut count double again,
    # since a missed closure is what viewers notice.
    w = (counts.sum() / np.maximum(counts, 1)) ** 0.5
    w[M] *= 2
    weights = torch.tensor(w / w.mean(), dtype=torch.float32)
    print("class frames", dict(zip(CLASSES, counts.astype(int))), flush=True)
    model = Net(a.hidden)
    if a.export_only:
        model.load_state_dict(torch.load(os.path.join(a.data, "model.pt")))
        export(model, weights, a.out, a.prior_correction)
        return
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    per_epoch = min(a.steps_per_epoch, len(train) // a.batch)
    steps = a.epochs * per_epoch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    step = 0
    for epoch in range(a.epochs):
        t0 = time.time()
        rng.shuffle(train)
        total = 0.0
        for b in range(per_epoch):
            x, y = batch(train[b * a.batch:(b + 1) * a.batch], a.crop, rng)
            loss = shifted_loss(model(x), y, weights)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            total += float(loss)
        clean = [s for s, c in zip(held, held_aug) if c == "clean"]
        print(f"epoch {epoch + 1}: loss {total / per_epoch:.3f}, "
              f"held-out clean {scores(model, clean)} ({time.time() - t0:.0f} s)",
              flush=True)
    torch.save(model.state_dict(), os.path.join(a.data, "model.pt"))
    export(model, weights, a.out, a.prior_correction)


def export(model, weights, out, correction):
    """ONNX with (a share of) the class weights taken back out of the output bias: trained with
    weights w, the logits favour class c by about log w_c, and the up-weighted lips-shut class then
    fires on sounds that are not p, b, m (the face measures' sync outside lip sounds drops). 1 removes
    the weighting entirely, 0 keeps it."""
    model.eval()
    with torch.no_grad():
        model.out.bias -= correction * torch.log(weights)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    torch.onnx.export(model, torch.zeros(1, 50, 26), out, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {1: "frames"}, "output": {1: "frames"}}, opset_version=14)
    print("wrote", out, os.path.getsize(out), "bytes")


if __name__ == "__main__":
    main()
