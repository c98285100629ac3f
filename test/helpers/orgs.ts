// Organizations and keys created through the services, the way the CLI and the API do it.
import type { Services } from '../../src/services/index.js';
import type { Organization } from '../../src/store/organizations.js';
import type { ApiKeyRecord } from '../../src/store/api-keys.js';
import type { Role } from '../../src/domain/api-keys.js';

export interface TestKey {
  /** The full secret, for the x-api-key header. */
  readonly key: string;
  readonly record: ApiKeyRecord;
  /** `{ 'x-api-key': key }`, ready for inject or fetch. */
  readonly headers: Record<string, string>;
}

export interface TestOrg {
  readonly organization: Organization;
  /** The organization's first key (owner unless `role` says otherwise). */
  readonly owner: TestKey;
}

export async function createKey(
  services: Services,
  organizationId: string,
  opts: { name?: string | null; role?: Role; expiresAt?: string | null; createdBy?: TestKey } = {},
): Promise<TestKey> {
  const created = await services.apiKeys.create({
    organizationId,
    name: opts.name,
    role: opts.role ?? 'owner',
    expiresAt: opts.expiresAt,
    actor: opts.createdBy ? { keyId: opts.createdBy.record.id, role: opts.createdBy.record.role } : null,
  });
  return { key: created.key, record: created.record, headers: { 'x-api-key': created.key } };
}

export async function createOrgWithKey(
  services: Services,
  opts: {
    name?: string;
    plan?: string;
    billing?: string;
    draft?: boolean;
    flags?: string[];
    concurrency?: number | null;
    role?: Role;
  } = {},
): Promise<TestOrg> {
  const organization = await services.organizations.create({
    name: opts.name ?? `Test org ${Math.random().toString(36).slice(2, 8)}`,
    plan: opts.plan ?? 'enterprise',
    billing: opts.billing,
    draft: opts.draft,
    flags: opts.flags,
    concurrency: opts.concurrency,
  });
  const owner = await createKey(services, organization.id, { name: 'Owner key', role: opts.role ?? 'owner' });
  return { organization, owner };
}
