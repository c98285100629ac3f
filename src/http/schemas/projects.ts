import { Type } from '@sinclair/typebox';

export const ProjectSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    organizationId: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Project' },
);

export const ProjectBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });

export const ProjectListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
});
