import { idParams, type PageQuery, pageQuery } from "@app/contracts";
import type { z } from "zod";
import { type Page, pageResponse } from "../lib/pagination.js";
import type { ApiRoutes } from "../lib/registry.js";

/** A service with the five CRUD operations of one user-owned resource. */
export interface CrudService<V, C, U> {
  list(userId: string, query: PageQuery): Promise<Page<V>>;
  create(userId: string, body: C): Promise<V>;
  get(userId: string, id: string): Promise<V>;
  update(userId: string, id: string, body: U): Promise<V>;
  remove(userId: string, id: string): Promise<void>;
}

/** Schemas and names of one CRUD resource. */
export interface CrudResource<C extends z.ZodType, U extends z.ZodType> {
  /** Collection path, e.g. `/api/projects`. */
  path: string;
  tag: string;
  /** Singular name for summaries. */
  noun: string;
  view: z.ZodType;
  create: C;
  update: U;
}

/**
 * Declares the five JSON routes of a resource: `GET path` (200, paginated array), `POST path`
 * (201), `GET path/:id` (200), `PATCH path/:id` (200), `DELETE path/:id` (204). Every one is
 * bearer-authenticated; another user's row answers 404.
 */
export function crudRoutes<V, C extends z.ZodType, U extends z.ZodType>(
  api: ApiRoutes,
  r: CrudResource<C, U>,
  service: CrudService<V, z.output<C>, z.output<U>>,
): void {
  const one = `${r.path}/:id`;
  api.json(
    "get",
    r.path,
    { tag: r.tag, summary: `List ${r.noun}s (newest first)`, paginated: true },
    {
      auth: true,
      query: pageQuery,
      response: r.view.array(),
      handler: async (ctx) => pageResponse(await service.list(ctx.userId, ctx.query), ctx),
    },
  );
  api.json(
    "post",
    r.path,
    { tag: r.tag, summary: `Create a ${r.noun}` },
    { auth: true, body: r.create, status: 201, response: r.view, handler: (ctx) => service.create(ctx.userId, ctx.body as z.output<C>) },
  );
  api.json(
    "get",
    one,
    { tag: r.tag, summary: `Read a ${r.noun}` },
    { auth: true, params: idParams, response: r.view, handler: (ctx) => service.get(ctx.userId, ctx.params.id) },
  );
  api.json(
    "patch",
    one,
    { tag: r.tag, summary: `Update a ${r.noun}` },
    {
      auth: true,
      params: idParams,
      body: r.update,
      response: r.view,
      handler: (ctx) => service.update(ctx.userId, ctx.params.id, ctx.body as z.output<U>),
    },
  );
  api.json(
    "delete",
    one,
    { tag: r.tag, summary: `Delete a ${r.noun}` },
    { auth: true, params: idParams, status: 204, handler: (ctx) => service.remove(ctx.userId, ctx.params.id) },
  );
}
