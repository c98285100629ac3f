// Rollout flags: features an operator turns on per organization (`lipsync org update ID --add-flags`).
// They exist for multi-tenant operators who roll a feature out; a self-hosted server's own first
// organization gets all of them. Pure.
import { AppError } from './errors.js';

/** POST /v2/tts/jobs, the asynchronous text-to-speech rollout. */
export const TTS_ASYNC_FLAG = 'tts_async';
/** Both are needed by an API key's dialogue edit. */
export const SEGMENT_LIPSYNC_FLAG = 'segment_lipsync';
export const SECTION_EXPANSION_FLAG = 'section_expansion';

/** Every flag a feature of this server checks. */
export const ROLLOUT_FLAGS: readonly string[] = [
  TTS_ASYNC_FLAG,
  SEGMENT_LIPSYNC_FLAG,
  SECTION_EXPANSION_FLAG,
];

const FLAG_NAME = /^[a-z0-9_.-]{1,64}$/i;

/** How an update changes an organization's flags: a whole new set, or flags added and removed. */
export interface FlagChange {
  readonly set?: readonly string[];
  readonly add?: readonly string[];
  readonly remove?: readonly string[];
}

function checkNames(field: string, flags: readonly string[] | undefined): void {
  for (const f of flags ?? [])
    if (!FLAG_NAME.test(f))
      throw new AppError('invalid_request', { field, message: `invalid flag ${JSON.stringify(f)}` });
}

/**
 * The flags after a change, in a stable order (the current ones first). Replacing the set and adding
 * or removing in one change is refused: the result would depend on which is applied first.
 */
export function changedFlags(current: readonly string[], change: FlagChange): string[] {
  checkNames('flags', change.set);
  checkNames('addFlags', change.add);
  checkNames('removeFlags', change.remove);
  if (change.set && (change.add?.length || change.remove?.length))
    throw new AppError('invalid_request', {
      field: 'flags',
      message: 'give either the whole set of flags, or flags to add and remove, not both',
    });
  const both = (change.add ?? []).filter((f) => change.remove?.includes(f));
  if (both.length)
    throw new AppError('invalid_request', {
      field: 'flags',
      message: `flag ${JSON.stringify(both[0])} is both added and removed`,
    });
  const base = change.set ?? current;
  const removed = new Set(change.remove ?? []);
  return [...new Set([...base, ...(change.add ?? [])])].filter((f) => !removed.has(f));
}
