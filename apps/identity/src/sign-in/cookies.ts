import cookieParser from "cookie-parser";
import type { Request, Response } from "express";

const parser = cookieParser();

/**
 * Parses the Cookie header (cookie-parser) unless a guard already did: sign-in methods whose
 * routes read no cookie of their own still reach the trusted-device and session cookies here.
 * cookie-parser answers nothing and calls next() before it returns.
 */
export function parseCookies(req: Request, res: Response): void {
  if (req.cookies !== undefined) return;
  parser(req, res, (error?: unknown) => {
    if (error) throw error;
  });
}
