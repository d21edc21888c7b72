/**
 * What a person reads for the refusals of identity's organization, admin and authorization routes. Those answer
 * `bad_request` or `forbidden` (a code too broad to explain them) with better-auth 1.7's own
 * message (apps/identity/src/organizations/errors.ts, and the admin plugin's), which names the
 * reason; each known message has a sentence here. Unknown messages fall back to the code's sentence.
 */
const BY_MESSAGE: Record<string, string> = {
  // Organizations.
  "Organization already exists": "An organization with that name already exists.",
  "Organization slug already taken": "That short name (slug) is taken. Choose another one.",
  "Organization not found": "That organization does not exist any more, or you are not a member.",
  "User is not a member of the organization": "You are not a member of that organization.",
  "You are not a member of this organization": "You are not a member of that organization.",
  "You are not allowed to update this organization": "Only the organization's admins and owners can change it.",
  "You are not allowed to delete this organization": "Only the organization's owners can delete it.",
  "You have reached the maximum number of organizations": "You belong to as many organizations as an account may create. Leave one first.",
  "No active organization": "Pick an organization in the header first.",
  "User is already a member of this organization": "That person is already a member.",
  "Member not found": "That member is not in the organization any more.",
  "You cannot leave the organization as the only owner": "You are the only owner: make another member an owner before you leave.",
  "You cannot leave the organization without an owner": "The organization needs an owner: make another member an owner first.",
  "You are not allowed to delete this member": "Your role does not allow removing that member.",
  "You are not allowed to update this member": "Your role does not allow changing that member's role.",
  "You are not allowed to invite users to this organization": "Only the organization's admins and owners can invite people.",
  "You are not allowed to invite a user with this role": "Your role does not allow inviting someone with that role.",
  "User is already invited to this organization": "That address already has a pending invitation.",
  "Invitation not found":
    "This invitation does not exist any more: it was accepted, declined or withdrawn, or it has expired. Ask for a new one.",
  "You are not the recipient of the invitation":
    "This invitation was sent to another address. Sign out, then sign in or sign up with the address it was sent to.",
  "Email verification required before accepting or rejecting invitation":
    "Confirm your email address first (follow the link we mailed you), then answer the invitation.",
  "Email verification required to view or list invitations for the session email":
    "Confirm your email address first (follow the link we mailed you), then open the invitation again.",
  "You are not allowed to cancel this invitation": "Only the organization's admins and owners can withdraw invitations.",
  "You are not allowed to list invitations for this organization": "Only the organization's admins and owners can see its invitations.",
  "Inviter is no longer a member of the organization": "Whoever invited you has left the organization, so the invitation no longer holds.",
  "Invitation limit reached": "The organization has as many pending invitations as it may. Withdraw one first.",
  "Organization membership limit reached": "The organization has as many members as it may.",
  "Team not found": "That team does not exist any more.",
  "You have reached the maximum number of teams": "The organization has as many teams as it may.",
  "Unable to remove last team": "An organization keeps at least one team.",
  "You are not allowed to create teams in this organization": "Only the organization's admins and owners can create teams.",
  "You are not allowed to delete teams in this organization": "Only the organization's admins and owners can delete teams.",
  "You are not allowed to delete this team": "Only the organization's admins and owners can delete teams.",
  "You are not allowed to update this team": "Only the organization's admins and owners can change teams.",
  "User is not a member of the team": "That person is not on the team.",
  "You are not allowed to create a new member": "Only the organization's admins and owners can add people to teams.",
  "You are not allowed to remove a team member": "Only the organization's admins and owners can take people off teams.",
  "Team id contains a reserved character": "That team cannot be used. Pick another one.",
  "You do not have an active team": "Pick a team first.",
  "You are not allowed to access this organization as an owner": "Only the organization's owners can do that.",
  // Admin (apps/identity/src/admin/).
  "you cannot ban yourself": "You cannot suspend your own account.",
  "you cannot remove yourself": "You cannot delete your own account here.",
  "admins cannot be impersonated": "Admins cannot be impersonated.",
  "you are not impersonating anyone": "You are not acting as anyone.",
  "no such user": "That user does not exist any more.",
  "this needs an admin": "Only admins can do that.",
  "this change would leave no admin": "Someone must stay an admin: make another user an admin first.",
  // The authorization server's own steps (apps/identity/src/oauth-provider/): the consent page and authorized apps.
  "this authorization request expired or was started in another browser: start again from the application":
    "This request to connect an app has expired, or it began in another browser. Go back to the app and connect again.",
  "this authorization request is another account's":
    "This request to connect an app began while another account was signed in here. Go back to the app and connect again.",
  "an impersonation session cannot authorize applications":
    "An admin acting as this user cannot connect apps to their account. Stop impersonating first.",
  "no such client": "This app is not registered with the service, or not any more. Go back to the app and connect again.",
  "no such authorized application": "That app is not authorized any more.",
  // apps/identity/src/middleware/guards.ts notImpersonated: a user's credentials are theirs alone.
  "not while acting as another user: stop impersonating first":
    "An admin acting as this user cannot change how they sign in (password, email, passkeys, two-factor, providers) or delete the account. Stop impersonating first.",
};

/** The sentence for a refusal's message from identity, or undefined when it has none. */
export function sentenceForMessage(message: string): string | undefined {
  return Object.hasOwn(BY_MESSAGE, message) ? BY_MESSAGE[message] : undefined;
}
