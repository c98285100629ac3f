// The service's own features of one recording, for training/check_features.py to compare with
// training/features.py:  node --import tsx training/dump-features.ts in.wav out.f32
import { writeFile } from 'node:fs/promises';
import { readMono } from '../src/media/mono.js';
import { VISEME_SAMPLE_RATE, visemeFeatures } from '../src/speech/viseme-model.js';

const [input, output] = process.argv.slice(2);
const samples = await readMono(input, VISEME_SAMPLE_RATE);
const f = visemeFeatures(samples);
await writeFile(output, Buffer.from(f.buffer, f.byteOffset, f.byteLength));
await writeFile(`${output}.samples`, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
