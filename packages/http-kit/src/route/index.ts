export { jsonBodyGuard } from "./body-guard.js";
export { aroundGuard, type Guard, guard, middlewareGuard } from "./guard.js";
export { buildOpenApi, type OpenApiInfo, openApiRoute } from "./openapi.js";
export { type PipelineOptions, routeHandler } from "./pipeline.js";
export {
  ANSWERED,
  type Answered,
  type AnyRoute,
  defineRoute,
  type Method,
  type Reply,
  type RouteContext,
  type RouteSpec,
  routeKey,
} from "./spec.js";
export { type RouteCoverage, RouteTable, type RouteTableOptions } from "./table.js";
