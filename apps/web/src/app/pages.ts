import type { View } from "./context.js";
import type { Route } from "./router.js";
import { acceptInvitationView } from "./views/accept-invitation.js";
import { accountView } from "./views/account.js";
import { activityView } from "./views/activity.js";
import { adminView } from "./views/admin.js";
import { adminEventsView } from "./views/admin-events.js";
import { adminUserView } from "./views/admin-user.js";
import { adminUsersView } from "./views/admin-users.js";
import { adminWebhooksView } from "./views/admin-webhooks.js";
import { agentsView } from "./views/agents.js";
import { authView } from "./views/auth.js";
import { authorizedAppsView } from "./views/authorized-apps.js";
import { chatView } from "./views/chat.js";
import { chatsView } from "./views/chats.js";
import { generateView } from "./views/generate.js";
import { mcpView } from "./views/mcp.js";
import { oauthConsentView } from "./views/oauth-consent.js";
import { organizationView } from "./views/organization.js";
import { projectsView } from "./views/projects.js";
import { forgotPasswordView, resetPasswordView } from "./views/recovery.js";
import { securityView } from "./views/security.js";
import { sessionsView } from "./views/sessions.js";
import { settingsView } from "./views/settings.js";
import { taskView } from "./views/task.js";
import { tasksView } from "./views/tasks.js";
import { twoFactorView } from "./views/two-factor.js";
import { uploadView } from "./views/upload.js";

/** The view of each route. */
export const VIEWS: Record<Route["name"], View> = {
  signin: authView,
  tasks: tasksView,
  task: taskView,
  upload: uploadView,
  generate: generateView,
  projects: projectsView,
  agents: agentsView,
  chats: chatsView,
  chat: chatView,
  mcp: mcpView,
  settings: settingsView,
  admin: adminView,
  "forgot-password": forgotPasswordView,
  "reset-password": resetPasswordView,
  account: accountView,
  sessions: sessionsView,
  security: securityView,
  "two-factor": twoFactorView,
  organization: organizationView,
  "accept-invitation": acceptInvitationView,
  "admin-users": adminUsersView,
  "admin-user": adminUserView,
  "oauth-consent": oauthConsentView,
  "authorized-apps": authorizedAppsView,
  activity: activityView,
  "admin-events": adminEventsView,
  "admin-webhooks": adminWebhooksView,
};

/** Page titles, so each route is announced and tabs are told apart. */
export const TITLES: Record<Route["name"], string> = {
  signin: "Sign in",
  tasks: "Tasks",
  task: "Task",
  upload: "Upload",
  generate: "Generate",
  projects: "Projects",
  agents: "Agents",
  chats: "Chats",
  chat: "Chat",
  mcp: "MCP servers",
  settings: "Settings",
  admin: "Admin",
  "forgot-password": "Forgot password",
  "reset-password": "Reset password",
  account: "Account",
  sessions: "Sessions",
  security: "Security",
  "two-factor": "Two-factor authentication",
  organization: "Organization",
  "accept-invitation": "Invitation",
  "admin-users": "Users",
  "admin-user": "User",
  "oauth-consent": "Connect an app",
  "authorized-apps": "Authorized apps",
  activity: "Security activity",
  "admin-events": "Security events",
  "admin-webhooks": "Webhooks",
};

/** The main navigation: href, id, text. */
export const LINKS: [string, string, string][] = [
  ["#/tasks", "nav-tasks", "Tasks"],
  ["#/projects", "nav-projects", "Projects"],
  ["#/organization", "nav-organization", "Organization"],
  ["#/agents", "nav-agents", "Agents"],
  ["#/chats", "nav-chats", "Chats"],
  ["#/mcp", "nav-mcp", "MCP"],
  ["#/upload", "nav-upload", "Upload"],
  ["#/generate", "nav-generate", "Generate"],
  ["#/settings", "nav-settings", "Settings"],
  ["#/account", "nav-account", "Account"],
];
