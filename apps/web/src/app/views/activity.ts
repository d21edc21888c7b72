import type { View } from "../context.js";
import { h } from "../dom.js";

/** Account → Security activity: the user's own security events, newest first. */
export const activityView: View = (_ctx, root) => {
  root.append(h("p", {}, "Coming soon."));
  return undefined;
};
