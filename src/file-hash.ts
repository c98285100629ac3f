// The sha256 of a file's contents, read as a stream (uploads are hashed for idempotency, model files
// are checked against their published checksum).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}
