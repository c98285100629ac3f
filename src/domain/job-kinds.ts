// The names of the job kinds, as stored in jobs.kind. Services enqueue by these names and handlers
// register under them; neither needs the other to know them.
export const GENERATION_KIND = 'generation';
export const TTS_KIND = 'tts';
export const TRANSCRIPTION_KIND = 'transcription';
export const DIALOGUE_EDIT_KIND = 'dialogue_edit';
export const BATCH_KIND = 'batch';
