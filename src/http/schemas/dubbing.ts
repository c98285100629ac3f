// Dubbing shapes (docs/dubbing.md); the rules behind them are in src/domain/dubbing-languages.ts.
import { Type } from '@sinclair/typebox';

const Language = Type.Object({ code: Type.String(), name: Type.String() });

const Route = Type.Object({
  from: Type.String(),
  to: Type.String(),
  quality: Type.Union([Type.Literal('direct'), Type.Literal('pivot')]),
  via: Type.Optional(Type.String({ description: 'the pivot language of a two-step route' })),
  note: Type.Optional(Type.String()),
});

export const DubbingLanguagesSchema = Type.Object({
  providers: Type.Array(
    Type.Object({
      provider: Type.Union([Type.Literal('local'), Type.Literal('openai'), Type.Literal('deepl')]),
      available: Type.Boolean({ description: 'configured and installed on this server' }),
      note: Type.String(),
      sources: Type.Array(Language),
      targets: Type.Array(Language),
      pairs: Type.Optional(
        Type.Array(Route, { description: 'the only routes, where not every source reaches every target' }),
      ),
    }),
  ),
});
