import type { Db } from './database.js';
import { ApiKeyRepository } from './api-keys.js';
import { OrganizationRepository } from './organizations.js';
import { ProjectRepository } from './projects.js';
import { SettingsRepository } from './settings.js';

export interface Store {
  readonly db: Db;
  readonly organizations: OrganizationRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly projects: ProjectRepository;
  readonly settings: SettingsRepository;
}

export function createStore(db: Db): Store {
  const k = db.kysely;
  return {
    db,
    organizations: new OrganizationRepository(k),
    apiKeys: new ApiKeyRepository(k),
    projects: new ProjectRepository(k),
    settings: new SettingsRepository(k),
  };
}
