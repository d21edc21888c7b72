import express, { type Router } from "express";
import { nonConforming, routeHandler } from "./pipeline.js";
import { type AnyRoute, routeKey } from "./spec.js";

/** Options of a {@link RouteTable}. */
export interface RouteTableOptions {
  /**
   * Checks every success body against its route's response schema, as a client would read it
   * (after JSON serialisation); a body that breaks it answers 500 and is logged. On under tests
   * (`NODE_ENV=test`, which vitest sets), so every integration test is also a conformance test.
   */
  checkResponses?: boolean;
}

/** How often each route answered, and with what problems (see {@link RouteTable.coverage}). */
export interface RouteCoverage {
  key: string;
  answered: number;
  nonConforming: string[];
}

function describeIssues(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues.map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`).join("; ");
}

/**
 * The one route table of a service: each route is declared once (method, path, schemas from
 * contracts, ordered guards, handler); the table mounts them on an Express router and produces
 * the OpenAPI document (openapi.ts), so what is served and what is documented cannot drift.
 */
export class RouteTable {
  readonly routes: AnyRoute[] = [];
  readonly #answered = new Map<string, RouteCoverage>();
  readonly #check: boolean;

  constructor(options: RouteTableOptions = {}) {
    this.#check = options.checkResponses ?? process.env.NODE_ENV === "test";
  }

  /** Adds routes; a second declaration of the same method and path is a programming error. */
  add(...routes: AnyRoute[]): this {
    for (const route of routes) {
      const key = routeKey(route);
      if (this.#answered.has(key)) throw new Error(`route ${key} is declared twice`);
      this.#answered.set(key, { key, answered: 0, nonConforming: [] });
      this.routes.push(route);
    }
    return this;
  }

  /** An Express router serving every route of the table, in declaration order. */
  router(): Router {
    return this.mount(express.Router());
  }

  /**
   * Declares every route of the table, in declaration order, on `target` itself: an app (or a
   * router) whose own layers then reach the routes without passing through a nested router's
   * layer walk, prefix trimming and parameter handling on every request. Returns `target`.
   */
  mount<T extends Pick<Router, AnyRoute["method"]>>(target: T): T {
    const checkResponse = this.#check ? (route: AnyRoute, data: unknown, raw: boolean) => this.#conform(route, data, raw) : undefined;
    for (const route of this.routes) target[route.method](route.path, routeHandler(route, { checkResponse }));
    return target;
  }

  /** Per route: answers checked against its schema so far and the problems found (tests). */
  coverage(): RouteCoverage[] {
    return [...this.#answered.values()].map((entry) => ({ ...entry, nonConforming: [...entry.nonConforming] }));
  }

  #conform(route: AnyRoute, data: unknown, raw: boolean): void {
    const entry = this.#answered.get(routeKey(route));
    if (entry) entry.answered++;
    if (raw || !route.response) return;
    const wire = data === undefined ? undefined : JSON.parse(JSON.stringify(data));
    const result = route.response.safeParse(wire);
    if (result.success) return;
    const issues = describeIssues(result.error);
    entry?.nonConforming.push(issues);
    throw nonConforming(route, issues);
  }
}
