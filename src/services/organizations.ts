// Use cases for organizations: create (with the optional first key), update, rotate webhook secret.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Store } from '../store/index.js';
import type { Organization } from '../store/organizations.js';
import { isPlan, type BillingMode, type Plan, BILLING_MODES } from '../domain/plans.js';
import { AppError } from '../domain/errors.js';
import { changedFlags } from '../domain/feature-flags.js';
import { PLAN_LIMITS, concurrencyLimit, type PlanLimits } from '../domain/plans.js';
import { maskSecret } from '../domain/webhooks.js';
import { monthStart } from '../domain/usage.js';
import { checkCanManageOrganization } from '../domain/members.js';
import type { Role } from '../domain/api-keys.js';

/** GET /v2/organizations/usage: this calendar month's generations and output, and the plan's limits. */
export interface UsageSummary {
  readonly periodStart: string;
  readonly generations: { readonly total: number; readonly byStatus: Record<string, number> };
  readonly outputSeconds: number;
  readonly plan: Plan;
  readonly limits: PlanLimits;
}

export interface OrganizationInput {
  name?: string;
  plan?: string;
  billing?: string;
  concurrency?: number | null;
  /** Replaces the whole set. */
  flags?: string[];
  /** Added to the current set (update only). */
  addFlags?: string[];
  /** Removed from the current set (update only). */
  removeFlags?: string[];
  draft?: boolean;
}

function validate(input: OrganizationInput): void {
  if (input.name !== undefined && input.name.trim() === '') {
    throw new AppError('invalid_request', { field: 'name', message: 'name must not be empty' });
  }
  if (input.plan !== undefined && !isPlan(input.plan)) {
    throw new AppError('invalid_request', {
      field: 'plan',
      message: 'plan must be free, hobbyist, creator, growth, scale or enterprise',
    });
  }
  if (input.billing !== undefined && !(BILLING_MODES as readonly string[]).includes(input.billing)) {
    throw new AppError('invalid_request', { field: 'billing', message: 'billing must be usd or credits' });
  }
  if (
    input.concurrency !== undefined &&
    input.concurrency !== null &&
    (!Number.isInteger(input.concurrency) || input.concurrency < 1 || input.concurrency > 10_000)
  ) {
    throw new AppError('invalid_request', {
      field: 'concurrency',
      message: 'concurrency must be an integer from 1 to 10000',
    });
  }
  changedFlags([], { set: input.flags, add: input.addFlags, remove: input.removeFlags });
}

export function newWebhookSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64url');
}

const notFound = (id: string) =>
  new AppError('invalid_request', { status: 404, field: 'id', message: `organization ${id} not found` });

export class OrganizationService {
  constructor(private readonly store: Store) {}

  async create(input: OrganizationInput & { name: string; plan: string }): Promise<Organization> {
    validate(input);
    const now = new Date().toISOString();
    const org: Organization = {
      id: randomUUID(),
      name: input.name.trim(),
      plan: input.plan as Plan,
      billing: (input.billing ?? 'usd') as BillingMode,
      concurrencyLimit: input.concurrency ?? null,
      flags: changedFlags([], { set: input.flags, add: input.addFlags }),
      flagsReadable: true,
      draft: input.draft ?? false,
      webhookSecret: newWebhookSecret(),
      createdAt: now,
      updatedAt: now,
    };
    await this.store.organizations.insert(org);
    return org;
  }

  /** Read and write in one transaction under the organization's lock: concurrent flag changes all stay. */
  async update(id: string, input: OrganizationInput): Promise<Organization> {
    validate(input);
    return this.store.organizations.exclusive(id, async (trx) => {
      const org = await this.store.organizations.findById(id, trx);
      if (!org) throw notFound(id);
      const next: Organization = {
        ...org,
        name: input.name?.trim() ?? org.name,
        plan: (input.plan as Plan | undefined) ?? org.plan,
        billing: (input.billing as BillingMode | undefined) ?? org.billing,
        concurrencyLimit: input.concurrency === undefined ? org.concurrencyLimit : input.concurrency,
        flags: changedFlags(org.flags, { set: input.flags, add: input.addFlags, remove: input.removeFlags }),
        flagsReadable: true,
        draft: input.draft ?? org.draft,
        updatedAt: new Date().toISOString(),
      };
      await this.store.organizations.update(next, trx);
      return next;
    });
  }

  async rotateWebhookSecret(id: string): Promise<Organization> {
    return this.store.organizations.exclusive(id, async (trx) => {
      const org = await this.store.organizations.findById(id, trx);
      if (!org) throw notFound(id);
      const next = { ...org, webhookSecret: newWebhookSecret(), updatedAt: new Date().toISOString() };
      await this.store.organizations.update(next, trx);
      return next;
    });
  }

  /** The webhook signing secret, or a display-only form of it (admins and owners). */
  async webhookSecret(auth: { organization: Organization; role: Role }, masked: boolean): Promise<string> {
    checkCanManageOrganization(auth.role, 'read the webhook secret');
    const org = await this.get(auth.organization.id);
    return masked ? maskSecret(org.webhookSecret) : org.webhookSecret;
  }

  /** A new webhook signing secret; the old one stops signing at once (admins and owners). */
  async rotateWebhookSecretAs(auth: { organization: Organization; role: Role }): Promise<string> {
    checkCanManageOrganization(auth.role, 'rotate the webhook secret');
    return (await this.rotateWebhookSecret(auth.organization.id)).webhookSecret;
  }

  async usage(id: string, now: Date = new Date()): Promise<UsageSummary> {
    const org = await this.get(id);
    const periodStart = monthStart(now).toISOString();
    const { byStatus, outputSeconds } = await this.store.usage.summarySince(id, periodStart);
    return {
      periodStart,
      generations: { total: Object.values(byStatus).reduce((a, b) => a + b, 0), byStatus },
      outputSeconds,
      plan: org.plan,
      limits: { ...PLAN_LIMITS[org.plan], concurrency: concurrencyLimit(org.plan, org.concurrencyLimit) },
    };
  }

  async get(id: string): Promise<Organization> {
    const org = await this.store.organizations.findById(id);
    if (!org) throw notFound(id);
    return org;
  }

  list(): Promise<Organization[]> {
    return this.store.organizations.list();
  }
}

/** The public view of an organization (no secret). */
export function organizationView(o: Organization): Record<string, unknown> {
  return {
    id: o.id,
    name: o.name,
    plan: o.plan,
    billing: o.billing,
    concurrency: o.concurrencyLimit,
    flags: o.flags,
    draft: o.draft,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
  };
}
