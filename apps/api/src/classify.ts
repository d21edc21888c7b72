import { isDatabaseUnavailable, isInvalidInput, Prisma } from "@app/db";
import { AppError } from "@app/http-kit";
import { isMissingUser } from "./account/user-deletion.js";

/** Maps dependency failures to coded errors (the error handler's, and the MCP server's tool errors). */
export function classify(error: unknown): AppError | undefined {
  if (isDatabaseUnavailable(error)) return new AppError("service_unavailable", "database unavailable", { cause: error });
  if (isInvalidInput(error)) return new AppError("bad_request", "request contains a value that cannot be stored", { cause: error });
  // A write for a user whose account is gone (a JWT issued before the deletion): 401, not 409.
  if (isMissingUser(error)) return new AppError("unauthorized", "the account of this token no longer exists", { cause: error });
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    if (error.code === "P2025") return new AppError("not_found", "not found", { cause: error });
    if (error.code === "P2003") return new AppError("conflict", "a referenced record does not exist", { cause: error });
  }
  return undefined;
}
