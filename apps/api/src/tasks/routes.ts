import {
  createTaskBody,
  createTaskMessageBody,
  idParams,
  pageQuery,
  projectContentQuery,
  type TaskEventView,
  taskMessageSchema,
  taskSchema,
  updateTaskBody,
} from "@app/contracts";
import { type AnyRoute, defineRoute, type Guard } from "@app/http-kit";
import type { Request } from "express";
import type { Logger } from "pino";
import { jsonBody } from "../entry/body.js";
import { requireAuth, streamAuth } from "../entry/stream-auth.js";
import type { EventBus } from "../events/bus.js";
import { eventJson } from "../events/event-json.js";
import { openTaskFeed, parseEventId } from "../events/feed.js";
import { closedStream, type SseHub, type SseStream } from "../events/sse.js";
import { tokenExpiry } from "../lib/expiry.js";
import { pageResponse } from "../lib/pagination.js";
import type { ResumeBudget } from "../lib/resume-budget.js";
import { releaseOnClose, type UserCaps } from "../lib/user-caps.js";
import { crudRoutes } from "../resources/crud.js";
import type { FileStore } from "../uploads/file-store.js";
import { multipart, receivedFiles } from "../uploads/multipart-guard.js";
import type { TaskAccess, TasksService } from "./service.js";

/** Most attachments on one task message. */
export const MAX_MESSAGE_FILES = 10;

/** What the task routes need. */
export interface TaskRouteDeps {
  tasks: TasksService;
  bus: EventBus;
  sse: SseHub;
  store: FileStore;
  upload: { maxFileBytes: number; allowedTypes: readonly string[] };
  /** Most stored events a resume replays before answering `resync` instead. */
  maxResumeEvents: number;
  logger?: Logger;
  /** Per-user cap on concurrent task streams. */
  caps: UserCaps;
  /** The instance's resume budget and how long a resume waits for room in it (then `resync`). */
  resume: { budget: ResumeBudget; maxWaitMs: number };
}

/**
 * Tasks: JSON CRUD (/api/tasks[/:id]) and message listing, plus the two raw routes behind the
 * stream-auth middleware: POST /api/tasks/:id/messages (JSON or multipart with attachments; raw
 * 201 body) and GET /api/tasks/:id/stream (SSE of the task's events, `Last-Event-ID` resume).
 */
export function taskRoutes(bearer: Guard, deps: TaskRouteDeps): AnyRoute[] {
  const { tasks, bus, sse, store } = deps;
  // The multipart guard's authorization, which the handler reuses: one membership read a request.
  const admitted = new WeakMap<Request, TaskAccess>();
  const messageBody = multipart({
    store,
    limits: { ...deps.upload, maxFiles: MAX_MESSAGE_FILES },
    body: { schema: createTaskMessageBody, from: (fields) => ({ text: fields.text }) },
    // Refuse before accepting a single byte of a file for a task the caller may not write.
    admit: async (req) => {
      admitted.set(req, await tasks.authorize(requireAuth(req).userId, String(req.params.id), "write"));
    },
    otherwise: jsonBody,
  });
  const crud = crudRoutes(
    bearer,
    {
      path: "/api/tasks",
      tag: "tasks",
      noun: "task",
      view: taskSchema,
      create: createTaskBody,
      update: updateTaskBody,
      listQuery: projectContentQuery,
      listSummary:
        "List tasks (newest first): `?projectId=` a project's (every member's in an organization's), else your own outside organizations",
    },
    tasks,
  );
  const listMessages = defineRoute({
    method: "get",
    path: "/api/tasks/:id/messages",
    tag: "tasks",
    summary: "List a task's messages (oldest first)",
    paginated: true,
    params: idParams,
    query: pageQuery,
    response: taskMessageSchema.array(),
    guards: [bearer],
    handler: async (ctx) => pageResponse(await tasks.listMessages(requireAuth(ctx.req).userId, ctx.params.id, ctx.query), ctx),
  });
  const addMessage = defineRoute({
    method: "post",
    path: "/api/tasks/:id/messages",
    tag: "tasks",
    summary: "Add a message: JSON {text}, or multipart/form-data with a text field and file attachments. Raw 201 body (no envelope).",
    params: idParams,
    body: createTaskMessageBody,
    status: 201,
    reply: "json",
    response: taskMessageSchema,
    guards: [bearer, messageBody],
    handler: async ({ req, params, body }) => {
      const { userId } = requireAuth(req);
      const files = receivedFiles(req);
      if (!files) return tasks.addMessage(userId, params.id, body.text);
      try {
        return await tasks.addMessage(userId, params.id, body.text, files, admitted.get(req));
      } catch (error) {
        await store.remove(files.map((f) => f.id));
        throw error;
      }
    },
  });
  const streamRoute = defineRoute({
    method: "get",
    path: "/api/tasks/:id/stream",
    tag: "tasks",
    summary:
      "SSE stream of the task's events (message.created, task.updated, task.deleted) with `id:` lines, heartbeat comments every 15 s, and resume with Last-Event-ID (or ?lastEventId=). A resume point more than SSE_MAX_RESUME_EVENTS (500) events back, or a resume that finds no room in the server's resume budget within RESUME_MAX_WAIT_MS, gets `event: resync` instead of the backlog: refetch the task, then continue live.",
    params: idParams,
    reply: { raw: "text/event-stream" },
    guards: [bearer, streamAuth],
    handler: async ({ req, res, params }) => {
      const { userId, claims } = requireAuth(req);
      const { id } = params;
      const { place } = await tasks.authorize(userId, id, "read");
      // One slot per open stream, returned when the response closes, on every path (ended,
      // client gone, error answered before the stream started).
      const lease = await deps.caps.acquire("streams", userId);
      releaseOnClose(res, lease);
      const header = req.headers["last-event-id"];
      const afterId = parseEventId(typeof header === "string" ? header : undefined) ?? parseEventId(req.query.lastEventId);
      // The response starts once the listener is in place (a 200 means subscribed); a failure
      // before that, such as "event delivery unavailable", is still a JSON error.
      let stream: SseStream = closedStream;
      const left = new AbortController();
      // The backlog is paced by the reader (sendPaced) page by page; once live, events are sent
      // as they come and a reader that falls behind is cut (events/sse.ts).
      let live = false;
      const toClient = (event: TaskEventView) => ({ id: event.id, event: event.type, json: eventJson(event) });
      const deliver = (event: TaskEventView): void | Promise<void> => {
        if (event.type === "task.deleted") {
          stream.send(toClient(event));
          return stream.close();
        }
        if (live) return stream.send(toClient(event));
        return stream.sendPaced(toClient(event));
      };
      const feed = await openTaskFeed(bus, {
        taskId: id,
        userId,
        shared: place.organizationId !== null,
        afterId,
        deliver,
        maxResumeEvents: deps.maxResumeEvents,
        // Too far behind to replay: the client refetches the task and its messages, and resumes
        // from the newest id (the `id:` line moves the browser's Last-Event-ID there).
        onResync: (latest, why) =>
          stream.sendPaced({
            id: latest > 0n ? latest.toString() : undefined,
            event: "resync",
            data: {
              reason:
                why === "deep"
                  ? `more than ${deps.maxResumeEvents} events since the resume point; refetch the task`
                  : "too many resumes under way on this server; refetch the task",
              lastEventId: latest.toString(),
            },
          }),
        onListening: () => {
          stream = sse.open(res, { expiresAt: tokenExpiry(claims), userId });
          stream.onClose(() => left.abort());
        },
        // A catch-up holds at most this stream's buffer budget, reserved in the instance's budget.
        resume: {
          enter: () => deps.resume.budget.acquire(sse.maxBufferedBytes, { maxWaitMs: deps.resume.maxWaitMs, signal: left.signal }),
          room: () => stream.room(),
        },
        signal: left.signal,
      }).catch((error: unknown) => {
        if (!res.headersSent) throw error;
        // Headers are sent: the stream just ends, and the client resumes from its Last-Event-ID.
        deps.logger?.warn({ err: (error as Error).message }, "task stream catch-up failed");
        stream.close();
        return undefined;
      });
      live = true;
      if (feed) stream.onClose(() => feed.close());
    },
  });
  return [...crud, listMessages, addMessage, streamRoute];
}
