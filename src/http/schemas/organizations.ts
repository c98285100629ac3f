// Organization settings: the webhook secret, members and invitations (our extension), usage.
import { Type } from '@sinclair/typebox';

const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);

export const WebhookSecretQuery = Type.Object({
  masked: Type.Optional(
    Type.Boolean({ default: false, description: 'true: a display-only value (prefix and last characters)' }),
  ),
});
export const WebhookSecretSchema = Type.Object({ secret: Type.String() }, { $id: 'WebhookSecret' });

export const MemberSchema = Type.Object(
  {
    userId: Type.String(),
    email: Type.String(),
    name: Type.String(),
    role: RoleSchema,
    joinedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Member' },
);
export const MemberParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 200 }) });
export const ChangeRoleBody = Type.Object({ role: RoleSchema });

export const InvitationBody = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320 }),
  role: Type.Optional(RoleSchema),
});
export const InvitationSchema = Type.Object(
  {
    email: Type.String(),
    role: RoleSchema,
    expiresAt: Type.String({ format: 'date-time', description: 'when the mailed link stops working' }),
    delivery: Type.Union([Type.Literal('email'), Type.Literal('log')], {
      description: 'email: sent over SMTP; log: no SMTP configured, the link is in the server log',
    }),
  },
  { $id: 'Invitation' },
);

export const UsageSchema = Type.Object(
  {
    periodStart: Type.String({ format: 'date-time', description: 'the first instant of this UTC month' }),
    generations: Type.Object({
      total: Type.Integer(),
      byStatus: Type.Record(Type.String(), Type.Integer()),
    }),
    outputSeconds: Type.Number({ description: 'seconds of output of the generations completed this month' }),
    plan: Type.String(),
    limits: Type.Object({
      concurrency: Type.Integer(),
      maxFileBytes: Type.Integer(),
      maxDurationSeconds: Type.Number(),
      watermark: Type.Boolean(),
      batch: Type.Boolean(),
      maxOutputPixels: Type.Integer(),
      maxPixelFrames: Type.Integer(),
      voiceCloneSlots: Type.Integer(),
    }),
  },
  { $id: 'OrganizationUsage' },
);
