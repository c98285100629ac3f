// The Generation resource as clients see it (spec fields plus the official client's names).
import type { GenerationRecord } from '../store/generations.js';

export interface GenerationViewOptions {
  outputUrl: string | null;
  includeProgress?: boolean;
  includeQuality?: boolean;
}

export function generationView(g: GenerationRecord, o: GenerationViewOptions): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: g.id,
    createdAt: g.createdAt,
    status: g.status,
    model: g.model,
    input: g.input,
    webhookUrl: g.webhookUrl,
    options: g.options,
    segments: g.segments ?? undefined,
    outputUrl: o.outputUrl,
    outputDuration: g.outputDuration,
    error: g.error,
    errorCode: g.errorCode ?? undefined,
    // The official client reads snake_case error_code.
    error_code: g.errorCode ?? undefined,
    projectId: g.projectId,
    outputFileName: g.outputFileName,
    source: g.source,
    updatedAt: g.updatedAt,
  };
  if (o.includeProgress) view.progress_percent = Math.round(g.progress * 10) / 10;
  if (o.includeQuality) view.quality = g.quality;
  return view;
}
