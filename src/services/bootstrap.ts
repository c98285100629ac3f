// First start with an empty database: a default organization and an owner key, printed once.
import type { Services } from './index.js';
import type { Organization } from '../store/organizations.js';

export async function bootstrapFirstOrganization(
  services: Services,
): Promise<{ organization: Organization; key: string } | null> {
  if ((await services.store.organizations.count()) > 0) return null;
  const organization = await services.organizations.create({
    name: 'Default organization',
    plan: 'enterprise',
    billing: 'usd',
  });
  const created = await services.apiKeys.create({
    organizationId: organization.id,
    name: 'Owner key',
    role: 'owner',
  });
  return { organization, key: created.key };
}
