import { enqueueWebhook } from "../webhooks/outbox.js";
import type { Tx } from "./store.js";

/** The organization as its webhooks name it. */
export interface OrganizationFacts {
  id: string;
  name: string;
  slug: string;
}

/** A membership as its webhooks name it: ids and the role, never an address or an invitation. */
export interface MemberFacts {
  id: string;
  userId: string;
  role: string;
}

const organization = (org: OrganizationFacts) => ({ id: org.id, name: org.name, slug: org.slug });
const member = (m: MemberFacts) => ({ id: m.id, userId: m.userId, role: m.role });

/**
 * The organization webhooks (docs/operations.md "Webhooks"), written to the outbox in the
 * transaction of the change they report (webhooks/outbox.ts). Their `data` holds ids, the
 * organization's name and slug and roles: never an invitation, its id (the link's secret) or the
 * address of someone who is not a member.
 */
export const organizationWebhooks = {
  created: (tx: Tx, org: OrganizationFacts) => enqueueWebhook(tx, "organization.created", { organization: organization(org) }),
  updated: (tx: Tx, org: OrganizationFacts) => enqueueWebhook(tx, "organization.updated", { organization: organization(org) }),
  deleted: (tx: Tx, org: OrganizationFacts) => enqueueWebhook(tx, "organization.deleted", { organization: organization(org) }),
  memberAdded: (tx: Tx, org: OrganizationFacts, m: MemberFacts) =>
    enqueueWebhook(tx, "organization.member_added", { organization: organization(org), member: member(m) }),
  memberUpdated: (tx: Tx, org: OrganizationFacts, m: MemberFacts, previousRole: string) =>
    enqueueWebhook(tx, "organization.member_updated", { organization: organization(org), member: member(m), previousRole }),
  memberRemoved: (tx: Tx, org: OrganizationFacts, m: MemberFacts, reason: "removed" | "left" | "account_deleted") =>
    enqueueWebhook(tx, "organization.member_removed", { organization: organization(org), member: member(m), reason }),
};
