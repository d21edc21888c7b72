import type { AnyRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";
import { homeOf } from "../views/link-pages.js";
import { invitationRoutes } from "./invitation-routes.js";
import { Invitations } from "./invitations.js";
import { memberRoutes } from "./member-routes.js";
import { Members } from "./members.js";
import { organizationCrudRoutes } from "./org-routes.js";
import { Organizations } from "./organizations.js";
import { orgGuards } from "./route-kit.js";
import { teamRoutes } from "./team-routes.js";
import { Teams } from "./teams.js";

/**
 * The routes of organizations, members, invitations and teams, on better-auth 1.7's
 * `organization` plugin's paths, bodies and answers with `teams: { enabled: true }`, so its
 * `organizationClient` works unchanged (docs/organizations.md). Every route is signed in; the
 * active organization and team live on the session row, never in the JWT, and every request
 * reads the membership afresh. Their housekeeping (deletions the API finished, old invitations)
 * is deletion.ts's OrganizationHousekeeping, which app.ts builds for the server's rounds.
 */
export function organizationRoutes(deps: FeatureDeps): AnyRoute[] {
  const { prisma, now } = deps;
  const webApp = homeOf(deps.config.corsOrigins) ?? deps.config.baseUrl;
  const g = orgGuards(deps.guards);
  return [
    ...organizationCrudRoutes(new Organizations({ prisma }), g),
    ...memberRoutes(new Members({ prisma }), g),
    // The accept page is the web app's (its origin, the first trusted one; else the base URL).
    ...invitationRoutes(new Invitations({ prisma, now, outbox: deps.service.mailOutbox, baseUrl: webApp }), g),
    ...teamRoutes(new Teams({ prisma }), g),
  ];
}
