// First start with an empty database: a default organization, an owner key and a single-use link that
// makes the owner's account for signing in from a browser, printed once. The
// server is the owner's own, so its organization has every feature: rollout flags are for operators
// who serve many organizations.
import type { Services } from './index.js';
import type { Organization } from '../store/organizations.js';
import { ROLLOUT_FLAGS } from '../domain/feature-flags.js';
import { ACCOUNT_LINK_HOURS } from './web-sessions.js';

export async function bootstrapFirstOrganization(
  services: Services,
): Promise<{ organization: Organization; key: string; ownerLink: string } | null> {
  if ((await services.store.organizations.count()) > 0) return null;
  const organization = await services.organizations.create({
    name: 'Default organization',
    plan: 'enterprise',
    billing: 'usd',
    flags: [...ROLLOUT_FLAGS],
  });
  const created = await services.apiKeys.create({
    organizationId: organization.id,
    name: 'Owner key',
    role: 'owner',
  });
  const ownerLink = await services.webSessions.createAccountLink(organization.id, 'owner');
  return { organization, key: created.key, ownerLink };
}

/** What the first start prints: the key (shown once), a request that uses it, local webhooks. */
export function firstStartBanner(
  first: { organization: Organization; key: string; ownerLink: string },
  opts: { publicUrl: string; allowPrivateUrls: boolean },
): string[] {
  return [
    '',
    `First start: created organization "${first.organization.name}" (${first.organization.id}) and an owner API key.`,
    'This key is shown only once; keep it somewhere safe:',
    '',
    '  ' + first.key,
    '',
    'Try it:',
    `  curl -H "x-api-key: ${first.key}" ${opts.publicUrl}/v2/projects`,
    'Or save it for the lipsync command (any folder):',
    `  lipsync login --server ${opts.publicUrl} --key ${first.key}`,
    '',
    `To sign in from a browser, open this link once (within ${ACCOUNT_LINK_HOURS} hours) to make the owner account:`,
    '',
    '  ' + first.ownerLink,
    '',
    ...(opts.allowPrivateUrls
      ? ['Webhook and media URLs may reach this machine and private networks (LIPSYNC_ALLOW_PRIVATE_URLS).']
      : [
          'Local development: webhook and media URLs on this machine or a private network (localhost,',
          '10.x, 192.168.x) are refused; start the server with LIPSYNC_ALLOW_PRIVATE_URLS=true to allow them.',
        ]),
    '',
  ];
}
