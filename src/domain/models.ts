// The model ids the API accepts. Every id maps to an engine in engines/registry (the CPU engine by
// default); image input is accepted only by sync-3.

export interface ModelDescriptor {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  readonly family: 'lipsync-2' | 'lipsync-1' | 'sync-3';
  readonly acceptsImage: boolean;
  readonly description: string;
  readonly deprecatedAt?: string;
}

export const MODELS: readonly ModelDescriptor[] = [
  {
    id: 'lipsync-2',
    name: 'Lipsync 2',
    version: '2',
    family: 'lipsync-2',
    acceptsImage: false,
    description: 'General-purpose lip-sync.',
  },
  {
    id: 'lipsync-2-pro',
    name: 'Lipsync 2 Pro',
    version: '2-pro',
    family: 'lipsync-2',
    acceptsImage: false,
    description: 'Higher-detail lip-sync.',
  },
  {
    id: 'lipsync-1.9.0-beta',
    name: 'Lipsync 1.9 beta',
    version: '1.9.0-beta',
    family: 'lipsync-1',
    acceptsImage: false,
    description: 'Earlier lip-sync model.',
  },
  {
    id: 'lipsync-1.8.0',
    name: 'Lipsync 1.8',
    version: '1.8.0',
    family: 'lipsync-1',
    acceptsImage: false,
    description: 'Earlier lip-sync model.',
  },
  {
    id: 'lipsync-1.7.1',
    name: 'Lipsync 1.7.1',
    version: '1.7.1',
    family: 'lipsync-1',
    acceptsImage: false,
    description: 'Earlier lip-sync model.',
  },
  {
    id: 'lipsync-1.6.0',
    name: 'Lipsync 1.6',
    version: '1.6.0',
    family: 'lipsync-1',
    acceptsImage: false,
    description: 'Earlier lip-sync model.',
  },
  {
    id: 'sync-3',
    name: 'Sync 3',
    version: '3',
    family: 'sync-3',
    acceptsImage: true,
    description: 'Animates a still portrait image or a video.',
  },
];

const BY_ID = new Map(MODELS.map((m) => [m.id, m]));

export function findModel(id: string): ModelDescriptor | undefined {
  return BY_ID.get(id);
}
