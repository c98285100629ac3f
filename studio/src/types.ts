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

/** Every state that ends a generation (TERMINAL plus the run-time limit). */
export const ENDED = new Set([...TERMINAL, 'TIMED_OUT']);

export interface Project {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

/** One entry of GET /v2/errors. */
export interface CatalogueEntry {
  code: string;
  message: string;
  suggestion: string;
  status: number;
}
