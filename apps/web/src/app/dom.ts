/** A child of {@link h}: nodes and text; null, undefined and false are skipped. */
export type Child = Node | string | number | null | undefined | false;

/** Attributes and `on<event>` listeners of {@link h}. */
export type Props = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

/**
 * Creates an element. Text is always set as text (never parsed as HTML), so user data such as
 * task titles cannot inject markup.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(key.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(key, "");
    else element.setAttribute(key, String(value));
  }
  append(element, ...children);
  return element;
}

/** Appends children (text as text nodes). */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

/** A form's named text field. */
export function field(form: HTMLFormElement, name: string): string {
  const value = new FormData(form).get(name);
  return typeof value === "string" ? value : "";
}

/** A form's named file inputs (non-empty files only). */
export function files(form: HTMLFormElement, name: string): File[] {
  return new FormData(form).getAll(name).filter((v): v is File => typeof v !== "string" && v.size > 0);
}

/** Human-readable size. */
export function formatBytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1024 / 1024).toFixed(1)} MiB`;
}
