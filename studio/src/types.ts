// The API's answers as the studio reads them (the server's OpenAPI document at /docs/json is the full shape).

export interface Generation {
  id: string;
  createdAt: string;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'REJECTED' | 'CANCELED' | string;
  model: string;
  input: { type: string; url?: string; assetId?: string }[];
  options: Record<string, unknown> | null;
  outputUrl: string | null;
  outputDuration: number | null;
  error: string | null;
  errorCode?: string;
  progress_percent?: number;
  quality?: Record<string, unknown>;
  projectId?: string | null;
  outputFileName?: string | null;
}

export interface Asset {
  id: string;
  name?: string;
  type: string;
  url?: string;
  durationSeconds?: number;
  createdAt: string;
  [extra: string]: unknown;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  role: string;
  createdByUserId: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

export const TERMINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED']);

/** GET /v2/voices: pass `id` as voiceId. */
export interface Voice {
  id: string;
  name: string;
  provider: string;
  type: 'builtin' | 'cloned';
  labels?: Record<string, string>;
  restriction?: { code: string; message: string };
}

export interface Project {
  id: string;
  name: string;
}

/** POST /v2/analyze/cost (one per request) and POST /v2/generations/estimate. */
export interface Estimate {
  model: string;
  duration: number;
  fps: number;
  estimatedFrameCount: number;
  estimatedGenerationCost: number;
  estimatedCredits: number | null;
}

/** POST /v2/assets/upload with JSON: where to PUT the file, and the url to register afterwards. */
export interface UploadTarget {
  uploadUrl: string;
  url: string;
  expiresIn: number;
}

export type AssetKind = 'VIDEO' | 'AUDIO' | 'IMAGE';
