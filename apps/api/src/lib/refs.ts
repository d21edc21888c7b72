import { AppError } from "@app/http-kit";

/** 404 `not_found` for a row that does not exist or belongs to someone else (never 403: no leak). */
export function notFound(kind: string): AppError {
  return new AppError("not_found", `${kind} not found`);
}

/** Drops keys whose value is `undefined`, so a PATCH only touches the fields it names. */
export function defined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}
