import type { View } from "../context.js";
import { h } from "../dom.js";
import { getTransport, setTransport, type Transport } from "../settings.js";

/** Settings: developer options (the task page's live transport) inside a closed "Developer" section. */
export const settingsView: View = (ctx, root) => {
  const current = getTransport();
  const radio = (value: Transport, label: string) =>
    h(
      "label",
      { class: "check", for: `transport-${value}` },
      h("input", {
        type: "radio",
        name: "transport",
        value,
        id: `transport-${value}`,
        checked: value === current,
        onchange: () => {
          setTransport(value);
          ctx.showNotice(`Task pages now follow changes over ${label}.`);
        },
      }),
      label,
    );
  root.append(
    h("h1", {}, "Settings"),
    h(
      "details",
      { id: "developer-settings", class: "card" },
      h("summary", {}, "Developer"),
      h(
        "fieldset",
        {},
        h("legend", {}, "How task pages receive live changes"),
        radio("sse", "Server-Sent Events"),
        radio("ws", "WebSocket"),
      ),
      h("p", { class: "muted" }, `Service: ${ctx.client.baseUrl}`),
    ),
  );
  return undefined;
};
