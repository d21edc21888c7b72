import { idParams, type PageQuery, pageQuery } from "@app/contracts";
import { type AnyRoute, defineRoute, type Guard } from "@app/http-kit";
import type { z } from "zod";
import { jsonBody } from "../entry/body.js";
import { requireAuth } from "../entry/stream-auth.js";
import { type Page, pageResponse } from "../lib/pagination.js";

/** A service with the five CRUD operations of one resource. */
export interface CrudService<V, C, U, Q extends PageQuery = PageQuery> {
  list(userId: string, query: Q): Promise<Page<V>>;
  create(userId: string, body: C): Promise<V>;
  get(userId: string, id: string): Promise<V>;
  update(userId: string, id: string, body: U): Promise<V>;
  remove(userId: string, id: string): Promise<void>;
}

/** Schemas and names of one CRUD resource. */
export interface CrudResource<C extends z.ZodType, U extends z.ZodType, Q extends z.ZodType<PageQuery> = typeof pageQuery> {
  /** Collection path, e.g. `/api/projects`. */
  path: string;
  tag: string;
  /** Singular name for summaries. */
  noun: string;
  view: z.ZodType;
  create: C;
  update: U;
  /** Query of the list (default: the page query alone). */
  listQuery?: Q;
  /** Summary of the list when it says more than "newest first". */
  listSummary?: string;
}

/**
 * The five JSON routes of a resource: `GET path` (200, paginated array), `POST path` (201),
 * `GET path/:id` (200), `PATCH path/:id` (200), `DELETE path/:id` (204). Every one is
 * bearer-authenticated; a row the caller may not see answers 404 (the service decides).
 */
export function crudRoutes<V, C extends z.ZodType, U extends z.ZodType, Q extends z.ZodType<PageQuery> = typeof pageQuery>(
  bearer: Guard,
  r: CrudResource<C, U, Q>,
  service: CrudService<V, z.output<C>, z.output<U>, z.output<Q>>,
): AnyRoute[] {
  const one = `${r.path}/:id`;
  const user = (req: Parameters<typeof requireAuth>[0]) => requireAuth(req).userId;
  return [
    defineRoute({
      method: "get",
      path: r.path,
      tag: r.tag,
      summary: r.listSummary ?? `List ${r.noun}s (newest first)`,
      paginated: true,
      query: r.listQuery ?? pageQuery,
      response: r.view.array(),
      guards: [bearer],
      handler: async (ctx) => pageResponse(await service.list(user(ctx.req), ctx.query as z.output<Q>), ctx),
    }),
    defineRoute({
      method: "post",
      path: r.path,
      tag: r.tag,
      summary: `Create a ${r.noun}`,
      body: r.create,
      status: 201,
      response: r.view,
      guards: [bearer, jsonBody],
      handler: (ctx) => service.create(user(ctx.req), ctx.body as z.output<C>),
    }),
    defineRoute({
      method: "get",
      path: one,
      tag: r.tag,
      summary: `Read a ${r.noun}`,
      params: idParams,
      response: r.view,
      guards: [bearer],
      handler: (ctx) => service.get(user(ctx.req), ctx.params.id),
    }),
    defineRoute({
      method: "patch",
      path: one,
      tag: r.tag,
      summary: `Update a ${r.noun}`,
      params: idParams,
      body: r.update,
      response: r.view,
      guards: [bearer, jsonBody],
      handler: (ctx) => service.update(user(ctx.req), ctx.params.id, ctx.body as z.output<U>),
    }),
    defineRoute({
      method: "delete",
      path: one,
      tag: r.tag,
      summary: `Delete a ${r.noun}`,
      params: idParams,
      status: 204,
      guards: [bearer],
      handler: (ctx) => service.remove(user(ctx.req), ctx.params.id),
    }),
  ];
}
