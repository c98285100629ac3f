"""features.py against the service's TypeScript (dump-features.ts) on one recording: the same samples
in, the largest difference out (it must be float32 rounding, well under 0.01 dB)."""
import subprocess
import sys
import tempfile

import numpy as np

from features import FEATURES, features

wav = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    out = f"{tmp}/f.f32"
    subprocess.run(["node", "--import", "tsx", "training/dump-features.ts", wav, out], check=True)
    ts = np.fromfile(out, dtype=np.float32).reshape(-1, FEATURES)
    samples = np.fromfile(out + ".samples", dtype=np.float32)
py = features(samples)
assert py.shape == ts.shape, (py.shape, ts.shape)
diff = np.abs(py - ts)
print(f"{wav}: {ts.shape[0]} frames, max |python - typescript| = {diff.max():.2e} "
      f"(log-mel {diff[:, :13].max():.2e}, slopes {diff[:, 13:].max():.2e})")
sys.exit(0 if diff.max() < 1e-2 else 1)
