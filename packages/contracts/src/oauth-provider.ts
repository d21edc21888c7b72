import { z } from "zod";

// The wire of identity's own routes of the authorization server
// (apps/identity/src/oauth-provider/routes.ts), as better-auth 1.7's oauth-provider plugin shapes
// them; the protocol routes' wire is oidc-provider's.

/** An oidc-provider id in a path (an interaction's uid, a client id): URL-safe, bounded. */
const providerId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "not an id this server issues");

export const oauthInteractionParams = z.object({ uid: providerId });
export const oauthClientParams = z.object({ clientId: providerId });

/** POST oauth2/consent: the user's decision on the consent page. */
export const oauthConsentBody = z.object({
  accept: z.boolean().meta({ description: "true grants the requested scopes, false refuses" }),
  scope: z.string().max(1024).optional().meta({ description: "the subset of the requested scopes granted (default: all)" }),
  oauth_query: z.string().min(1).max(4096).meta({ description: "the consent page's signed query string" }),
});

/** Where the browser goes next (better-auth's `redirect`/`url`, and `redirect_uri`). */
export const oauthConsentResponse = z.object({
  redirect: z.literal(true),
  url: z.string(),
  redirect_uri: z.string(),
});

/** An application the user authorized. */
export const oauthConsentSchema = z.object({
  id: z.string(),
  clientId: z.string(),
  userId: z.string(),
  scopes: z.array(z.string()),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  clientName: z.string().optional(),
  clientUri: z.string().optional(),
  logoUri: z.string().optional(),
});

export const oauthConsentsResponse = z.array(oauthConsentSchema);
export const oauthConsentIdQuery = z.object({ id: z.string().min(1).max(128) });
export const oauthConsentIdBody = z.object({ id: z.string().min(1).max(128) });
export const oauthDeleteConsentResponse = z.object({ success: z.literal(true) });

/** GET oauth2/public-client: what the consent page shows of the client asking. */
export const oauthPublicClientQuery = z.object({ client_id: z.string().min(1).max(128) });
export const oauthPublicClientResponse = z.object({
  client_id: z.string(),
  client_name: z.string().optional(),
  client_uri: z.string().optional(),
  logo_uri: z.string().optional(),
  policy_uri: z.string().optional(),
  tos_uri: z.string().optional(),
});

export type OAuthConsent = z.infer<typeof oauthConsentSchema>;
export type OAuthPublicClient = z.infer<typeof oauthPublicClientResponse>;
export type OAuthConsentBody = z.infer<typeof oauthConsentBody>;
