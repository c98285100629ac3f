// The one error catalogue: every error a client can see is defined here (code, status, message,
// suggestion) and leaves through the HTTP error handler in the spec's error body.

export interface CatalogEntry {
  readonly code: string;
  readonly status: number;
  readonly message: string;
  readonly suggestion: string;
}

function entry(code: string, status: number, message: string, suggestion: string): CatalogEntry {
  return { code, status, message, suggestion };
}

export const ERRORS = {
  // From the spec.
  provider_quota_exceeded: entry(
    'provider_quota_exceeded',
    402,
    'The quota of your own voice-provider account is exhausted.',
    'Top up or upgrade the voice-provider account connected to this organization, then retry.',
  ),
  generation_not_found: entry(
    'generation_not_found',
    404,
    'Generation not found.',
    'Check the generation id; deleted generations and generations of other organizations are not visible.',
  ),
  generation_output_unavailable: entry(
    'generation_output_unavailable',
    404,
    'The generation has no eligible output file.',
    'The output may have been removed; create a new generation.',
  ),
  generation_not_ready: entry(
    'generation_not_ready',
    409,
    'The generation is still pending or processing.',
    'Wait until the generation is COMPLETED (poll or long-poll Get Generation), then request the download again.',
  ),
  generation_not_deletable_while_processing: entry(
    'generation_not_deletable_while_processing',
    409,
    'Only generations in a terminal state can be deleted.',
    'Wait until the generation is COMPLETED, FAILED or REJECTED, or cancel it first.',
  ),
  generation_conflict: entry(
    'generation_conflict',
    409,
    'A duplicate submission of this generation was detected.',
    'Poll the existing generation instead of submitting it again.',
  ),
  IDEMPOTENCY_KEY_CONFLICT: entry(
    'IDEMPOTENCY_KEY_CONFLICT',
    409,
    'This Idempotency-Key was already used with a different request payload.',
    'Use a new Idempotency-Key for a different request, or resend the original payload.',
  ),
  IDEMPOTENCY_IN_PROGRESS: entry(
    'IDEMPOTENCY_IN_PROGRESS',
    409,
    'The original request with this Idempotency-Key is still being processed.',
    'Retry with the same key and payload after the Retry-After interval.',
  ),
  IDEMPOTENCY_ORIGINAL_DELETED: entry(
    'IDEMPOTENCY_ORIGINAL_DELETED',
    410,
    'The generation created with this Idempotency-Key was deleted.',
    'The key stays bound until it expires; use a new key to create a new generation.',
  ),
  generation_input_validation_failed: entry(
    'generation_input_validation_failed',
    413,
    'The multipart request exceeds a parser limit.',
    'Files may be at most 5 GiB, with at most 3 files, 32 fields, 35 parts and 1 MiB per field. Upload large files via POST /v2/assets/upload first.',
  ),
  generation_not_downloadable: entry(
    'generation_not_downloadable',
    422,
    'The generation failed or was rejected and has no output to download.',
    'Check the generation error and errorCode, fix the input and create a new generation.',
  ),
  file_size_exceeds_plan_limit: entry(
    'file_size_exceeds_plan_limit',
    422,
    'The file is larger than your plan allows.',
    'Use a smaller file or upgrade the plan.',
  ),
  cost_estimate_unavailable: entry(
    'cost_estimate_unavailable',
    422,
    'No cost estimate is available for this duration or frame rate.',
    'Send a positive duration and frame rate within the plan limits.',
  ),
  voice_not_found: entry(
    'voice_not_found',
    422,
    'The voiceId does not resolve to a voice.',
    'List voices with GET /v2/voices and use one of their ids.',
  ),
  voice_verification_required: entry(
    'voice_verification_required',
    422,
    'The voice needs verification before it can be used.',
    'Complete the voice verification, then retry.',
  ),
  voice_blocked: entry('voice_blocked', 422, 'The voice is blocked.', 'Choose another voice.'),
  voice_access_denied: entry(
    'voice_access_denied',
    400,
    'Access to this voice is denied.',
    'Use a voice owned by or shared with your organization.',
  ),
  // Voices and text-to-speech (api-details sections 3 and 4; docs/speech.md).
  voice_name_conflict: entry(
    'voice_name_conflict',
    409,
    'The organization already has a voice with this name.',
    'Choose another name, or delete the existing voice first.',
  ),
  voice_clone_limit_reached: entry(
    'voice_clone_limit_reached',
    403,
    'All voice-clone slots of your plan are in use.',
    'Delete a cloned voice with DELETE /v2/voices/{id}, or upgrade the plan.',
  ),
  voice_sample_too_short: entry(
    'voice_sample_too_short',
    400,
    'The voice sample holds too little speech.',
    'Send a recording of one person speaking clearly: the message says how much voiced speech it held and how much is needed.',
  ),
  voice_sample_not_accessible: entry(
    'voice_sample_not_accessible',
    422,
    'The voice sample could not be read.',
    'Pass the assetId of an uploaded audio or video file, or the url POST /v2/assets/upload returned.',
  ),
  voice_sample_type_unsupported: entry(
    'voice_sample_type_unsupported',
    422,
    'The voice sample is not audio or a video with sound.',
    'Send an audio file, or a video with a soundtrack.',
  ),
  voice_sample_upload_required: entry(
    'voice_sample_upload_required',
    422,
    'The voice sample must be stored on this service.',
    'Upload the sample with POST /v2/assets/upload and pass its assetId or url.',
  ),
  voice_sample_source_too_large: entry(
    'voice_sample_source_too_large',
    413,
    'The voice sample is larger than 1 GiB.',
    'Send a shorter sample; only the first two minutes are used.',
  ),
  voice_clone_unsupported: entry(
    'voice_clone_unsupported',
    422,
    'This voice provider cannot clone voices.',
    'Clone with provider local or elevenlabs.',
  ),
  voice_not_deletable: entry(
    'voice_not_deletable',
    422,
    'Only cloned voices can be deleted.',
    'Built-in voices of a provider cannot be removed; an operator can block them.',
  ),
  tts_job_not_found: entry(
    'tts_job_not_found',
    404,
    'Text-to-speech job not found.',
    'Check the job id; jobs of other organizations are not visible.',
  ),
  tts_async_unavailable: entry(
    'tts_async_unavailable',
    503,
    'Asynchronous text-to-speech is not enabled for this organization.',
    'Use POST /v2/tts, or ask the operator to enable the tts_async flag for the organization.',
  ),
  // Transcriptions (api-details section 1; docs/transcription.md).
  transcription_not_found: entry(
    'transcription_not_found',
    404,
    'Transcription not found.',
    'Check the id; transcriptions of other organizations are not visible.',
  ),
  transcription_source_upload_required: entry(
    'transcription_source_upload_required',
    422,
    'The source must be stored on this service.',
    'Upload the video with POST /v2/assets/upload and pass the url it returned.',
  ),
  transcription_source_not_accessible: entry(
    'transcription_source_not_accessible',
    422,
    'The source could not be found in your storage.',
    'Pass the url of an uploaded asset of this organization (a fresh one if it expired).',
  ),
  transcription_source_type_unsupported: entry(
    'transcription_source_type_unsupported',
    422,
    'The source is not a video or audio file.',
    'Transcribe a video with sound, or an audio file.',
  ),
  transcription_revision_conflict: entry(
    'transcription_revision_conflict',
    409,
    'The transcript has changed since that revision.',
    'Read the transcription again (GET /v2/transcriptions/{id}) and correct its current revision.',
  ),
  transcription_not_completed: entry(
    'transcription_not_completed',
    409,
    'Only a completed transcription can be corrected, one correction at a time.',
    'Wait until the transcription is COMPLETED, then send the correction.',
  ),
  dialogue_edit_not_found: entry(
    'dialogue_edit_not_found',
    404,
    'Dialogue edit not found.',
    'Check the id; dialogue edits of other organizations are not visible.',
  ),
  dialogue_edit_source_not_accessible: entry(
    'dialogue_edit_source_not_accessible',
    422,
    'The source video must be an upload of this organization on this service.',
    'Pass the sourceVideoUrl your transcription used (the url POST /v2/assets/upload returned).',
  ),
  dialogue_edit_retime_required: entry(
    'dialogue_edit_retime_required',
    422,
    'The organization is not enabled for segment lipsync and section expansion.',
    'Ask the operator to enable both rollout flags for the organization.',
  ),
  dialogue_edit_unsupported: entry(
    'dialogue_edit_unsupported',
    422,
    'Dialogue edits through the API work only on the whole video.',
    'Leave startMs and endMs unset.',
  ),
  dialogue_edit_not_ready: entry(
    'dialogue_edit_not_ready',
    422,
    'The dialogue edit has no finished preview to render.',
    'Wait until the dialogue edit is COMPLETED or COMPLETED_PARTIAL (GET /v2/dialogue-edits/{id}), then render it.',
  ),
  dialogue_edit_source_mismatch: entry(
    'dialogue_edit_source_mismatch',
    422,
    'The video input is not the source the dialogue edit was made from.',
    "Send the dialogue edit's sourceVideoUrl (or the assetId of that upload) as the video input.",
  ),
  dialogue_edit_removal_too_large: entry(
    'dialogue_edit_removal_too_large',
    422,
    'The edit removes more speech than the footage can absorb.',
    'Create a new dialogue-edit preview that removes less speech; retrying the same preview fails again.',
  ),
  generation_input_video_inaccessible: entry(
    'generation_input_video_inaccessible',
    422,
    'An input media file could not be fetched or read.',
    'Make sure the URL is public and points at a readable video or audio file, or upload it as an asset.',
  ),
  generation_plan_duration_exceeded: entry(
    'generation_plan_duration_exceeded',
    422,
    'The output duration exceeds what your plan allows.',
    'Use shorter inputs or segments, or upgrade the plan.',
  ),
  generation_plan_work_exceeded: entry(
    'generation_plan_work_exceeded',
    422,
    'The output asks for more processing than your plan allows (frame size, or pixels x frame rate x duration).',
    'Ask for a smaller output_resolution, a lower fps or a shorter output, or upgrade the plan.',
  ),
  concurrency_limit_reached: entry(
    'concurrency_limit_reached',
    429,
    'The concurrency limit of your plan is reached.',
    'Wait for a pending or processing generation to finish, then retry after retryAfter seconds.',
  ),
  rate_limit_exceeded: entry(
    'rate_limit_exceeded',
    429,
    'Too many requests.',
    'Honor retryAfter and resetTime; back off exponentially (1s, 2s, 4s, 8s, 16s).',
  ),
  internal_error: entry(
    'internal_error',
    500,
    'An unexpected error occurred.',
    'Retry later; if it persists, report the requestId to the operator.',
  ),
  dubbing_language_unsupported: entry(
    'dubbing_language_unsupported',
    422,
    'The translation provider cannot dub from this source language into this target language.',
    'Pick a pair listed by GET /v2/dubbing/languages (the error names what the provider supports).',
  ),
  dubbing_translation_failed: entry(
    'dubbing_translation_failed',
    422,
    'A sentence could not be translated.',
    'Check that sourceLang is the language spoken in the video, or choose another translation provider.',
  ),
  dubbing_no_speech: entry(
    'dubbing_no_speech',
    422,
    'No speech was found in the video: there is nothing to dub.',
    'Check that the video has audible speech in its soundtrack, or give dubParams.transcript.',
  ),
  dubbing_voice_unavailable: entry(
    'dubbing_voice_unavailable',
    422,
    'No voice for the target language is installed on this server.',
    'Ask the operator to run scripts/install-system-packages.sh (it installs the voices), or pick another targetLang.',
  ),
  provider_service_unavailable: entry(
    'provider_service_unavailable',
    503,
    'The voice provider is unavailable.',
    'Retry after the Retry-After interval.',
  ),
  provider_api_key_invalid: entry(
    'provider_api_key_invalid',
    422,
    'The API key of your connected voice-provider account was rejected.',
    'Reconnect the provider key in the organization settings.',
  ),
  IDEMPOTENCY_OUTCOME_UNKNOWN: entry(
    'IDEMPOTENCY_OUTCOME_UNKNOWN',
    503,
    'The outcome of the original keyed request could not be confirmed.',
    'Poll the generation named by generationId if present; do not create another one. Otherwise retry with the same key and payload.',
  ),
  IDEMPOTENCY_UNAVAILABLE: entry(
    'IDEMPOTENCY_UNAVAILABLE',
    503,
    'Keyed admission is temporarily disabled.',
    'Retry later with the same Idempotency-Key and payload.',
  ),
  generation_admission_paused: entry(
    'generation_admission_paused',
    503,
    'New generations are paused for maintenance.',
    'Retry after the Retry-After interval.',
  ),
  generation_admission_unavailable: entry(
    'generation_admission_unavailable',
    503,
    'Acceptance of the generation could not be confirmed.',
    'Retry after the Retry-After interval; use an Idempotency-Key so that retries are safe.',
  ),
  controller_dependency_error: entry(
    'controller_dependency_error',
    503,
    'A dependency of the service is unavailable.',
    'Retry after the Retry-After interval.',
  ),
  generation_infra_service_unavailable: entry(
    'generation_infra_service_unavailable',
    503,
    'Rollout flags could not be evaluated.',
    'Retry with backoff.',
  ),
  generation_download_unavailable: entry(
    'generation_download_unavailable',
    503,
    'The storage lookup or URL signing failed.',
    'Retry with backoff.',
  ),
  controller_timeout: entry(
    'controller_timeout',
    504,
    'A dependency of the service timed out.',
    'Retry later.',
  ),
  project_not_found: entry(
    'project_not_found',
    404,
    'Project not found in this organization.',
    'Check the projectId; list projects with GET /v2/projects.',
  ),
  asset_forbidden: entry(
    'asset_forbidden',
    403,
    'The asset belongs to another organization or is not accessible.',
    'Use an asset uploaded by your organization.',
  ),

  // Added by this project (documented in docs/errors.md).
  generation_segments_invalid: entry(
    'generation_segments_invalid',
    422,
    'The segments are invalid.',
    'Segments need startTime < endTime within the video, must not overlap, and must reference the audio input by refId with a window inside the audio.',
  ),
  generation_preview_out_of_range: entry(
    'generation_preview_out_of_range',
    400,
    'The preview moment is outside the output.',
    'Give options.preview.atMs in milliseconds from 0 to just before the end of the output the full run would make.',
  ),
  generation_feature_unavailable: entry(
    'generation_feature_unavailable',
    422,
    'This kind of input is not available on this server yet.',
    'Send a recorded audio input (url, assetId or file) instead of a text input or dialogueEdit.',
  ),
  generation_processing_failed: entry(
    'generation_processing_failed',
    500,
    'The generation failed while processing the media.',
    'Check that the inputs play in a normal media player; retry, and report the generation id if it persists.',
  ),
  generation_worker_lost: entry(
    'generation_worker_lost',
    500,
    'The worker processing this generation stopped repeatedly.',
    'Retry the generation; report the generation id to the operator if it persists.',
  ),
  generation_timed_out: entry(
    'generation_timed_out',
    504,
    'The generation ran longer than the server allows.',
    'Use shorter inputs or segments, or ask the operator to raise LIPSYNC_JOB_TIMEOUT_SECONDS.',
  ),
  // 404, not 409: the transcript does not exist and never will (409 means waiting may help).
  generation_not_dubbed: entry(
    'generation_not_dubbed',
    404,
    'The generation is not a dub: it has no transcript or subtitles.',
    'Transcripts and subtitles exist for generations created with dubParams (docs/dubbing.md).',
  ),
  generation_canceled: entry(
    'generation_canceled',
    409,
    'The generation was canceled.',
    'Create a new generation if you still need the output.',
  ),
  generation_no_face_detected: entry(
    'generation_no_face_detected',
    422,
    'No face was found in the video.',
    'Use a video where the speaking face is visible, frontal and at least about 64 pixels wide.',
  ),
  invalid_request: entry(
    'invalid_request',
    400,
    'The request is invalid.',
    'Fix the field named in `field` and retry.',
  ),
  unsupported_model: entry(
    'unsupported_model',
    400,
    'The model is not supported.',
    'Use one of the models listed by GET /v2/models.',
  ),
  unauthorized: entry(
    'unauthorized',
    401,
    'Missing, invalid, expired or revoked API key (or web session).',
    'Send a valid key in the x-api-key header (the Authorization header is not used), or sign in again.',
  ),
  plan_upgrade_required: entry(
    'plan_upgrade_required',
    402,
    'This feature needs a higher plan.',
    'Upgrade the organization plan.',
  ),
  forbidden: entry(
    'forbidden',
    403,
    'Your API key role does not allow this action.',
    'Use a key with the admin or owner role.',
  ),
  url_signature_invalid: entry(
    'url_signature_invalid',
    403,
    'The file URL signature is invalid.',
    'Request a fresh URL from the API.',
  ),
  route_not_found: entry(
    'route_not_found',
    404,
    'No such endpoint.',
    'Check the method and path; see GET /v2/openapi.json.',
  ),
  batch_input_invalid: entry(
    'batch_input_invalid',
    400,
    'The batch input file is invalid.',
    'Fix the line named in the message: one JSON object per line (UTF-8, no BOM, LF line endings) with request_id, endpoint "/v2/generate" and payload.',
  ),
  batch_canceled: entry(
    'batch_canceled',
    409,
    'The batch was canceled before this record started.',
    'Submit the record again in a new batch or with POST /v2/generate.',
  ),
  batch_processing_failed: entry(
    'batch_processing_failed',
    500,
    'Creating the generations of the batch failed.',
    'The records that did not start are listed as failed in the results file; submit them again.',
  ),
  batch_not_found: entry(
    'batch_not_found',
    404,
    'Batch not found.',
    'Check the batch id; batches of other organizations are not visible.',
  ),
  asset_not_found: entry(
    'asset_not_found',
    404,
    'Asset not found.',
    'Check the asset id; assets of other organizations are not visible.',
  ),
  api_key_not_found: entry(
    'api_key_not_found',
    404,
    'API key not found.',
    'Check the key id; members only see keys they created.',
  ),
  file_not_found: entry('file_not_found', 404, 'File not found.', 'Request a fresh URL from the API.'),
  url_expired: entry('url_expired', 410, 'The file URL has expired.', 'Request a fresh URL from the API.'),
  upload_url_used: entry(
    'upload_url_used',
    409,
    'This upload URL has been used: its upload was registered, refused or removed.',
    'Announce the file again with POST /v2/assets/upload and PUT it to the new uploadUrl.',
  ),
  upload_limit_reached: entry(
    'upload_limit_reached',
    429,
    'The direct uploads your organization announced in the last hours add up to more than its plan allows at once.',
    'Register or abandon the pending uploads and retry after retryAfter seconds, or upload with the multipart form.',
  ),
  payload_too_large: entry(
    'payload_too_large',
    413,
    'The request body is too large.',
    'Send a smaller body; upload media via POST /v2/assets/upload.',
  ),
  unsupported_media_type: entry(
    'unsupported_media_type',
    415,
    'The request content type is not supported by this endpoint.',
    'Send application/json or multipart/form-data as the endpoint documents.',
  ),
  asset_type_unsupported: entry(
    'asset_type_unsupported',
    422,
    'The uploaded file is not a readable audio, video or image file.',
    'Upload an audio, video or image file (for example mp4, mov, webm, wav, mp3, png or jpeg).',
  ),
  sign_in_failed: entry(
    'sign_in_failed',
    401,
    'The email address, password or code is not right.',
    'Check them and try again; ask for a new code when a code has expired or was tried three times.',
  ),
  email_not_verified: entry(
    'email_not_verified',
    403,
    'The email address of this account is not confirmed yet.',
    'Enter the code emailed at sign-up (POST /api/auth/otp/verify-email), or ask for a new one (POST /api/auth/otp/send).',
  ),
  sign_up_disabled: entry(
    'sign_up_disabled',
    403,
    'This server does not take new accounts.',
    'Ask the operator for an account (LIPSYNC_SIGN_UP).',
  ),
  cross_site_request: entry(
    'cross_site_request',
    403,
    'The request came from a page of another site, or did not say which page sent it (Origin).',
    "Send it from the studio on this server, or add your page's origin to LIPSYNC_TRUSTED_ORIGINS; API clients send x-api-key instead of cookies.",
  ),
  account_link_invalid: entry(
    'account_link_invalid',
    410,
    'This account link is used, expired or unknown.',
    'Sign in with the account made with it, or ask the operator for a new link (lipsync org account-link ID).',
  ),
  organization_draft: entry(
    'organization_draft',
    422,
    'The organization is a draft and cannot use the API yet.',
    'Ask the operator to finish the organization set-up (lipsync org update ID --no-draft).',
  ),
  note_not_found: entry(
    'note_not_found',
    404,
    'Note not found on this generation.',
    'List the notes (GET /v2/generations/{id}/notes) and use one of their ids.',
  ),
  note_limit_reached: entry(
    'note_limit_reached',
    409,
    'The generation holds as many notes as it may.',
    'Delete notes that are done with (or resolve and remove them), then add the new one.',
  ),
  asset_in_use: entry(
    'asset_in_use',
    409,
    'The asset is used by a generation that is still pending or processing.',
    'Wait until the generations that use the asset have finished (or cancel them), then delete it again.',
  ),
  member_not_found: entry(
    'member_not_found',
    404,
    'No member of your organization has this user id.',
    'List the members (GET /v2/organizations/members) and use one of their ids.',
  ),
  last_owner: entry(
    'last_owner',
    409,
    'The organization would have no owner left.',
    'Make another member an owner first, then change or remove this one.',
  ),
  member_exists: entry(
    'member_exists',
    409,
    'This email address belongs to a member of your organization already.',
    "Change that member's role instead of inviting them again.",
  ),
  invitation_not_sent: entry(
    'invitation_not_sent',
    502,
    'The invitation could not be mailed.',
    'Try again later, or ask the operator to check the SMTP settings (LIPSYNC_SMTP_URL).',
  ),
  request_timeout: entry(
    'request_timeout',
    408,
    'The request was not received in time.',
    'Send the whole request (headers and body) without long pauses; upload large files from a faster connection or raise LIPSYNC_REQUEST_TIMEOUT_SECONDS.',
  ),
  request_headers_too_large: entry(
    'request_headers_too_large',
    431,
    'The request headers are too large.',
    'Send fewer or shorter headers.',
  ),
  uri_too_long: entry(
    'uri_too_long',
    414,
    'A path segment of the request URL is too long.',
    'Check the URL: ids and names in a path are at most 100 characters.',
  ),
  range_not_satisfiable: entry(
    'range_not_satisfiable',
    416,
    'The requested byte range is not satisfiable.',
    'Request a range within the file size.',
  ),
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERRORS;

export interface AppErrorExtras {
  field?: string;
  status?: number;
  message?: string;
  suggestion?: string;
  generationId?: string;
  retryAfter?: number;
  headers?: Record<string, string>;
  details?: Record<string, unknown>;
  /** The preview slot a dialogue-edit render refused (spec rule 6: dialogue_edit_removal_too_large). */
  dialogueEditSection?: { slotIndex: number; sourceStartMs: number; sourceDurationMs: number };
  /** For batch creation, on dialogue-edit refusals: the 1-based line of the refused record (spec). */
  lineNumber?: number;
  /** What went wrong underneath, for the log only (never sent to the client). */
  cause?: unknown;
}

/** A client-visible error; `code` selects its catalogue entry, extras may refine status or message. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly suggestion: string;
  readonly extras: AppErrorExtras;

  constructor(code: ErrorCode, extras: AppErrorExtras = {}) {
    const base: CatalogEntry = ERRORS[code];
    super(extras.message ?? base.message, extras.cause === undefined ? undefined : { cause: extras.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = extras.status ?? base.status;
    this.suggestion = extras.suggestion ?? base.suggestion;
    this.extras = extras;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

export function catalogue(): { code: string; message: string; suggestion: string; status: number }[] {
  return Object.values(ERRORS).map((e: CatalogEntry) => ({
    code: e.code,
    message: e.message,
    suggestion: e.suggestion,
    status: e.status,
  }));
}
