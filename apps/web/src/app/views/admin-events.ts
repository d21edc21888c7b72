import type { View } from "../context.js";
import { h } from "../dom.js";

/** Admin → Security events: every user's security events, with filters. */
export const adminEventsView: View = (_ctx, root) => {
  root.append(h("p", {}, "Coming soon."));
  return undefined;
};
