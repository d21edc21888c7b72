import {
  type AdminUserView,
  adminUserSchema,
  type CreateTaskBody,
  type Me,
  meSchema,
  NEXT_CURSOR_HEADER,
  type TaskMessageView,
  type TaskView,
  taskMessageSchema,
  taskSchema,
  UPLOAD_FILE_FIELD,
  type UpdateTaskBody,
  type UploadView,
  type UserRolesView,
  uploadSchema,
  userRolesSchema,
} from "@app/contracts";
import type { z } from "zod";
import { type Http, jsonInit } from "./http.js";

/** One page of a list route and the cursor of the next one (null: last page). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** `?limit=` and `?cursor=` of list routes. */
export interface PageRequest {
  limit?: number;
  cursor?: string;
}

const id = (value: string) => encodeURIComponent(value);

function pageQuery(page: PageRequest = {}, extra: Record<string, string | undefined> = {}): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) query.set(key, value);
  if (page.limit !== undefined) query.set("limit", String(page.limit));
  if (page.cursor) query.set("cursor", page.cursor);
  const text = query.toString();
  return text ? `?${text}` : "";
}

/** One page of a list route: the items and the `x-next-cursor` header; `extra` adds filters such as `organizationId`. */
export async function list<S extends z.ZodType>(
  http: Http,
  item: S,
  path: string,
  page?: PageRequest,
  extra?: Record<string, string | undefined>,
): Promise<Page<z.output<S>>> {
  const { data, response } = await http.json(item.array(), `${path}${pageQuery(page, extra)}`);
  return { items: data, nextCursor: response.headers.get(NEXT_CURSOR_HEADER) };
}

/** A file for multipart bodies: a `Blob`/`File`, and the name to send (a `File`'s own by default). */
export interface FilePart {
  blob: Blob;
  filename?: string;
}

function filename(part: FilePart): string {
  return part.filename ?? ((part.blob as Partial<File>).name || "file");
}

/** Task routes: JSON CRUD, messages (JSON or multipart with attachments). */
export interface TasksApi {
  list(page?: PageRequest): Promise<Page<TaskView>>;
  create(body: CreateTaskBody): Promise<TaskView>;
  get(taskId: string): Promise<TaskView>;
  update(taskId: string, body: UpdateTaskBody): Promise<TaskView>;
  remove(taskId: string): Promise<void>;
  messages(taskId: string, page?: PageRequest): Promise<Page<TaskMessageView>>;
  /** Adds a message; with files it is sent as multipart/form-data (`text` + file parts). */
  addMessage(taskId: string, text: string, files?: FilePart[]): Promise<TaskMessageView>;
}

/** Builds the {@link TasksApi}. */
export function tasksApi(http: Http): TasksApi {
  return {
    list: (page) => list(http, taskSchema, "/api/tasks", page),
    create: async (body) => (await http.json(taskSchema, "/api/tasks", jsonInit("POST", body))).data,
    get: async (taskId) => (await http.json(taskSchema, `/api/tasks/${id(taskId)}`)).data,
    update: async (taskId, body) => (await http.json(taskSchema, `/api/tasks/${id(taskId)}`, jsonInit("PATCH", body))).data,
    remove: async (taskId) => {
      const response = await http.sendOk(`/api/tasks/${id(taskId)}`, { method: "DELETE" });
      await response.body?.cancel().catch(() => undefined);
    },
    messages: (taskId, page) => list(http, taskMessageSchema, `/api/tasks/${id(taskId)}/messages`, page),
    addMessage: (taskId, text, files = []) => {
      const path = `/api/tasks/${id(taskId)}/messages`;
      if (!files.length) return http.raw(taskMessageSchema, path, jsonInit("POST", { text }));
      const form = new FormData();
      form.append("text", text);
      for (const part of files) form.append("files", part.blob, filename(part));
      return http.raw(taskMessageSchema, path, { method: "POST", body: form });
    },
  };
}

/** Upload routes. */
export interface UploadsApi {
  /** `POST /api/uploads` as multipart/form-data (field `file`). */
  create(file: FilePart): Promise<UploadView>;
  /** One page of your own uploads, newest first (attachments are listed with their message). */
  list(page?: PageRequest): Promise<Page<UploadView>>;
  /** The bytes of an upload (owner only). */
  download(uploadId: string): Promise<Blob>;
  /** Deletes an upload and its bytes (204); another user's or an unknown id is a 404 {@link ApiError}. */
  remove(uploadId: string): Promise<void>;
}

/** Builds the {@link UploadsApi}. */
export function uploadsApi(http: Http): UploadsApi {
  return {
    create: (part) => {
      const form = new FormData();
      form.append(UPLOAD_FILE_FIELD, part.blob, filename(part));
      return http.raw(uploadSchema, "/api/uploads", { method: "POST", body: form });
    },
    list: (page) => list(http, uploadSchema, "/api/uploads", page),
    download: async (uploadId) => (await http.sendOk(`/api/uploads/${id(uploadId)}`)).blob(),
    remove: async (uploadId) => {
      const response = await http.sendOk(`/api/uploads/${id(uploadId)}`, { method: "DELETE" });
      await response.body?.cancel().catch(() => undefined);
    },
  };
}

/** Admin routes (403 `forbidden` for callers without the admin role). */
export interface AdminApi {
  users(page?: PageRequest): Promise<Page<AdminUserView>>;
  setRoles(userId: string, roles: string[]): Promise<UserRolesView>;
}

/** Builds the {@link AdminApi}. */
export function adminApi(http: Http): AdminApi {
  return {
    users: (page) => list(http, adminUserSchema, "/api/admin/users", page),
    setRoles: async (userId, roles) =>
      (await http.json(userRolesSchema, `/api/admin/users/${id(userId)}/roles`, jsonInit("PUT", { roles }))).data,
  };
}

/** `GET /api/me`: who the JWT says the caller is (a snapshot taken at issuance). */
export async function me(http: Http): Promise<Me> {
  return (await http.json(meSchema, "/api/me")).data;
}
