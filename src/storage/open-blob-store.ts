// The blob store the configuration asks for, ready to use: LIPSYNC_STORAGE=local (the data folder) or
// s3 (a bucket that must already exist).
import type { StorageConfig } from '../config.js';
import type { BlobStore } from './blob-store.js';
import { LocalBlobStore } from './local-blob-store.js';
import type { UrlSigner } from './url-signer.js';

export async function openBlobStore(
  storage: StorageConfig,
  dataDir: string,
  signer: UrlSigner,
): Promise<BlobStore> {
  if (storage.kind === 's3') {
    // Loaded only when configured: the AWS SDK is a large import that local installs never need.
    const { S3BlobStore } = await import('./s3-blob-store.js');
    const store = await S3BlobStore.create(storage);
    await store.checkBucket();
    return store;
  }
  const local = new LocalBlobStore(dataDir, signer);
  await local.init();
  return local;
}
