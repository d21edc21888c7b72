import type { View } from "../context.js";
import { h } from "../dom.js";

/** Admin → Webhooks: endpoints, their delivery logs and retries. */
export const adminWebhooksView: View = (_ctx, root) => {
  root.append(h("p", {}, "Coming soon."));
  return undefined;
};
