export type { AccountApi } from "./account.js";
export type { AccountEventsApi, AdminEventFilters, EventPageRequest } from "./account-events.js";
export type { AuthApi, LinkSocialOptions, SignInSocialOptions, SignUpResult } from "./auth.js";
export { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF } from "./backoff.js";
export { type AppClient, type ClientOptions, createClient } from "./client.js";
export { ApiError, type ClientErrorCode, type ClientOnlyCode, isUnauthorized } from "./errors.js";
export type { FetchLike } from "./http.js";
export type { ListUsersQuery, UserAdminApi } from "./identity-admin.js";
export {
  type AuthorizedApp,
  type ConsentDecision,
  type OAuth2Api,
  type PublicClient,
  signedConsentQuery,
} from "./oauth2.js";
export type { FullOrganization, InOrganization, InvitationDetails, OrganizationApi, UserInvitation } from "./organizations.js";
export type { PasskeyApi, RegistrationOptionsQuery, WebAuthnResponseJSON } from "./passkeys.js";
export type { MagicLinkOptions, PasswordlessApi } from "./passwordless.js";
export type { AgentsApi, ChatsApi, CrudApi, McpServersApi, ProjectListRequest, ProjectsApi } from "./products.js";
export type { AdminApi, FilePart, Page, PageRequest, TasksApi, UploadsApi } from "./resources.js";
export {
  DEFAULT_SESSION_RECHECK_MS,
  type SessionCheck,
  type SessionEventTarget,
  type WatchSessionOptions,
} from "./session.js";
export type { SignedIn, SignInResult } from "./sign-in.js";
export { readSse, type SseEvent, SseParser } from "./sse.js";
export { defaultStorage, memoryStorage, type TokenStorage } from "./storage.js";
export type { GenerateEvent, TaskStream, TaskStreamOptions } from "./streams.js";
export type { TotpSetup, TwoFactorApi, VerifyCodeBody } from "./two-factor.js";
export type { WebhookAdminApi } from "./webhooks.js";
export type { TaskSocket, TaskSocketOptions, WebSocketFactory, WebSocketLike } from "./ws.js";
