// Table types shared by the SQLite and PostgreSQL dialects. Timestamps are ISO-8601 strings, booleans
// are 0/1 integers and JSON is text, so the same Kysely code runs on both.

export interface OrganizationTable {
  id: string;
  name: string;
  plan: string;
  billing: string;
  concurrency_limit: number | null;
  flags: string;
  draft: number;
  webhook_secret: string;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyTable {
  id: string;
  organization_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  role: string;
  created_by_key_id: string | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface ProjectTable {
  id: string;
  organization_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface AssetTable {
  id: string;
  organization_id: string;
  project_id: string | null;
  name: string;
  type: string;
  size: number;
  format: string | null;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  storage_key: string;
  content_type: string;
  visibility: string;
  created_at: string;
  updated_at: string;
}

export interface SettingTable {
  key: string;
  value: string;
  updated_at: string;
}

export interface Database {
  organizations: OrganizationTable;
  api_keys: ApiKeyTable;
  projects: ProjectTable;
  assets: AssetTable;
  settings: SettingTable;
}
