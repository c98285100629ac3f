import { randomUUID } from 'node:crypto';
import type { Store } from '../store/index.js';
import type { Project } from '../store/projects.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';

export function projectView(p: Project) {
  return {
    id: p.id,
    name: p.name,
    organizationId: p.organizationId,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw new AppError('invalid_request', { field: 'name', message: 'name must not be empty' });
  return n;
}

export class ProjectService {
  constructor(private readonly store: Store) {}

  async create(organizationId: string, name: string): Promise<Project> {
    const now = new Date().toISOString();
    const p: Project = {
      id: randomUUID(),
      organizationId,
      name: cleanName(name),
      createdAt: now,
      updatedAt: now,
    };
    await this.store.projects.insert(p);
    return p;
  }

  /** A missing, malformed or foreign id is project_not_found, never a hint that it exists elsewhere. */
  async get(organizationId: string, id: string): Promise<Project> {
    const p = isUuid(id) ? await this.store.projects.find(organizationId, id) : null;
    if (!p) throw new AppError('project_not_found', { field: 'projectId' });
    return p;
  }

  async list(organizationId: string, limit: number, cursor?: string): Promise<Project[]> {
    const c = cursor
      ? await this.get(organizationId, cursor).catch(() => {
          throw new AppError('invalid_request', {
            field: 'cursor',
            message: 'cursor is not a project of this organization',
          });
        })
      : null;
    return this.store.projects.list(organizationId, { limit, cursor: c });
  }

  async rename(organizationId: string, id: string, name: string): Promise<Project> {
    const p = await this.get(organizationId, id);
    const now = new Date().toISOString();
    const n = cleanName(name);
    await this.store.projects.rename(organizationId, id, n, now);
    return { ...p, name: n, updatedAt: now };
  }

  async delete(organizationId: string, id: string): Promise<Project> {
    const p = await this.get(organizationId, id);
    await this.store.projects.delete(organizationId, id);
    return p;
  }
}
