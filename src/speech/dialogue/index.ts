// Dialogue-edit previews (issue 11): validate an edit list, then build the edited audio.
export { buildPreview } from './build.js';
export { validateEdits, type ResolvedEdit, type ValidateOptions } from './validate.js';
export * from './types.js';
