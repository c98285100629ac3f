import { Type } from '@sinclair/typebox';
import { Nullable } from './common.js';

const InputItem = Type.Object(
  {
    type: Type.String({ description: 'video, image (sync-3 only), audio or text' }),
    url: Type.Optional(Type.String({ maxLength: 4096 })),
    assetId: Type.Optional(Type.String({ maxLength: 200 })),
    refId: Type.Optional(Type.String({ maxLength: 200 })),
    segments_secs: Type.Optional(Type.Array(Type.Array(Type.Number()))),
    segments_frames: Type.Optional(Type.Array(Type.Array(Type.Number()))),
    provider: Type.Optional(Type.Unknown()),
    transcript: Type.Optional(
      Type.String({
        maxLength: 20000,
        description:
          'Audio inputs only: the words spoken in the audio. They are aligned to the recording to shape the mouth per sound (docs/engine.md); without it the server recognizes the words itself.',
      }),
    ),
  },
  { additionalProperties: true },
);

// Bodies are not coerced (src/http/validation.ts): an option given as null means its default, as the
// request rules (src/domain/generation-request.ts) read it; pads has no default and must be numbers.
const Options = Type.Object(
  {
    pads: Type.Optional(Type.Array(Type.Number(), { minItems: 4, maxItems: 4 })),
    speedup: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 4 }))),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    output_format: Type.Optional(Nullable(Type.Union([Type.Literal('mp4'), Type.Literal('mov')]))),
    sync_mode: Type.Optional(
      Nullable(Type.Union(['bounce', 'loop', 'cut_off', 'silence', 'remap'].map((m) => Type.Literal(m)))),
    ),
    fps: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 120 }))),
    output_resolution: Type.Optional(
      Nullable(Type.Array(Type.Integer({ minimum: 16, maximum: 7680 }), { minItems: 2, maxItems: 2 })),
    ),
    active_speaker: Type.Optional(Nullable(Type.Boolean())),
    preview: Type.Optional(
      Nullable(
        Type.Object(
          {
            atMs: Type.Integer({
              minimum: 0,
              description: "Where the preview starts, milliseconds on the full output's clock.",
            }),
          },
          {
            additionalProperties: false,
            description:
              'Render only about one second of the output from atMs, with a JPEG still of its first frame (docs/generations.md).',
          },
        ),
      ),
    ),
    active_speaker_detection: Type.Optional(
      Nullable(
        Type.Object(
          {
            auto_detect: Type.Optional(Type.Boolean()),
            frame_number: Type.Optional(Type.Integer({ minimum: 0 })),
            coordinates: Type.Optional(Type.Array(Type.Number(), { minItems: 2, maxItems: 2 })),
            bounding_boxes: Type.Optional(Type.Array(Nullable(Type.Array(Type.Number())))),
          },
          { additionalProperties: true },
        ),
      ),
    ),
  },
  { additionalProperties: true },
);

export const CreateGenerationBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 100 }),
    input: Type.Optional(Type.Array(InputItem, { maxItems: 10 })),
    options: Type.Optional(Nullable(Options)),
    segments: Type.Optional(Nullable(Type.Array(Type.Unknown(), { maxItems: 100 }))),
    dubParams: Type.Optional(Type.Unknown()),
    webhookUrl: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    outputFileName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    projectId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    dialogueEdit: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

/** Text of a form field that holds what a JSON body holds under the same name. */
const jsonFormField = (what: string, note = '') =>
  Type.Optional(
    Type.String({
      contentMediaType: 'application/json',
      description: `${what} as JSON text, the same value as in a JSON body.${note}`,
    }),
  );
const fileFormField = (what: string) =>
  Type.Optional(
    Type.String({
      format: 'binary',
      description: `${what}: stored as an asset and used as the ${what.toLowerCase()} input.`,
    }),
  );

/**
 * POST /v2/generate as multipart/form-data, for the OpenAPI document: the form is read into the JSON
 * body (services/generation-uploads.ts) before CreateGenerationBody validates it.
 */
export const GenerationForm = Type.Object(
  {
    model: CreateGenerationBody.properties.model,
    video: fileFormField('Video'),
    image: fileFormField('Image'),
    audio: fileFormField('Audio'),
    input: jsonFormField(
      'The input items (an array)',
      ' A file replaces the item of its type, keeping its refId and transcript.',
    ),
    options: jsonFormField('The options (an object)'),
    segments: jsonFormField('The segments (an array)'),
    dubParams: jsonFormField('The dubbing parameters'),
    dialogueEdit: jsonFormField('The dialogue edit to render'),
    webhookUrl: Type.Optional(Type.String({ maxLength: 2048 })),
    outputFileName: Type.Optional(Type.String({ maxLength: 255 })),
    projectId: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { description: 'One file per field; send video or image, and audio or a text input.' },
);

export const GenerationSchema = Type.Object(
  {
    id: Type.String(),
    createdAt: Type.String(),
    status: Type.String(),
    model: Type.String(),
    input: Type.Array(Type.Unknown()),
    webhookUrl: Nullable(Type.String()),
    options: Type.Unknown({ description: 'The options given, or null.' }),
    segments: Type.Optional(Type.Unknown()),
    outputUrl: Nullable(Type.String()),
    outputDuration: Nullable(Type.Number()),
    error: Nullable(Type.String()),
    errorCode: Type.Optional(Type.String()),
    error_code: Type.Optional(Type.String()),
    progress_percent: Type.Optional(Type.Number()),
    quality: Type.Optional(Type.Unknown()),
    projectId: Type.Optional(Nullable(Type.String())),
    outputFileName: Type.Optional(Nullable(Type.String())),
    source: Type.Optional(Type.String()),
    updatedAt: Type.Optional(Type.String()),
    preview: Type.Optional(
      Type.Object(
        {
          atMs: Type.Number(),
          stillUrl: Nullable(Type.String({ description: 'A JPEG of the first frame, once COMPLETED.' })),
        },
        { description: 'Only on a preview generation (options.preview): outputUrl is its short clip.' },
      ),
    ),
  },
  { $id: 'Generation', additionalProperties: true },
);

export const GetGenerationQuery = Type.Object({
  wait: Type.Optional(Type.Boolean()),
  timeout: Type.Optional(Type.Number()),
  include: Type.Optional(Type.String({ maxLength: 200 })),
});

export const ListGenerationsQuery = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 500 })),
  ids: Type.Optional(Type.String({ maxLength: 20000 })),
  source: Type.Optional(Type.String({ maxLength: 500 })),
  projectId: Type.Optional(Type.String({ maxLength: 100 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 100 })),
});

export const EstimateBody = Type.Object({
  model: Type.String({ minLength: 1 }),
  duration: Type.Number({ exclusiveMinimum: 0 }),
  fps: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
});

export const EstimateSchema = Type.Object({
  model: Type.String(),
  duration: Type.Number(),
  fps: Type.Number(),
  estimatedFrameCount: Type.Integer(),
  estimatedGenerationCost: Type.Number(),
  estimatedCredits: Nullable(Type.Number()),
});
