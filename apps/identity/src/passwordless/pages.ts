import type { Response } from "express";
import { sendLinkPage } from "../views/link-pages.js";

// The pages of a magic link opened in a browser (magic-link-routes.ts), in identity's one-click
// style (views/link-pages.ts): the GET shows the button, whose POST signs in.

/**
 * The one-click page of a valid magic link: its form posts the token and the callbacks back to
 * this path (`action`, relative). `redirectOrigins` are where that POST may redirect.
 */
export function magicLinkPage(res: Response, options: { action: string; email: string; redirectOrigins: readonly string[] }): void {
  sendLinkPage(res, {
    title: "Sign in",
    lead: [`Press the button to sign in as ${options.email}.`, "The link works once, within 5 minutes of when it was sent."],
    form: { action: options.action, button: "Sign in" },
    redirectOrigins: options.redirectOrigins,
  });
}

/** Where a used link without a callback lands when there is no web app to continue to. */
export function signedInPage(res: Response): void {
  sendLinkPage(res, { title: "You are signed in", lead: ["You can close this page and go back to where you asked for the link."] });
}
