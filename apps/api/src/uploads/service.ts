import type { ReadStream } from "node:fs";
import type { PageQuery, UploadView } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { keysetPage, type Page } from "../lib/pagination.js";
import { notFound } from "../lib/refs.js";
import type { Memberships } from "../organizations/membership.js";
import type { FileStore } from "./file-store.js";
import type { ReceivedFile } from "./multipart.js";

/** The public view of an upload row. */
export function uploadView(u: Prisma.UploadModel): UploadView {
  return {
    id: u.id,
    filename: u.filename,
    contentType: u.contentType,
    size: u.size,
    sha256: u.sha256,
    createdAt: u.createdAt.toISOString(),
  };
}

/** An upload opened for download. */
export interface OpenedUpload {
  upload: UploadView;
  stream: ReadStream;
}

/**
 * Uploaded files: rows in `upload`, bytes in the {@link FileStore}. Someone else's upload is "not found".
 * The list and delete cover the files uploaded on their own (POST /api/uploads): an attachment
 * belongs to its task message (tasks/service.ts) and is listed and kept with it. An attachment to
 * a task of an organization's project is every member's to download, and no one else's, its
 * uploader included once out of the organization.
 */
export class UploadsService {
  constructor(
    private readonly prisma: PrismaClient,
    readonly store: FileStore,
    private readonly memberships: Memberships,
  ) {}

  /** Records a stored file; deletes its bytes if the row cannot be written. */
  async create(userId: string, file: ReceivedFile): Promise<UploadView> {
    try {
      const row = await this.prisma.upload.create({
        data: { id: file.id, userId, filename: file.filename, contentType: file.contentType, size: file.size, sha256: file.sha256 },
      });
      return uploadView(row);
    } catch (error) {
      await this.store.remove([file.id]);
      throw error;
    }
  }

  /** The user's own uploads (not attached to a task message), newest first. */
  async list(userId: string, query: PageQuery): Promise<Page<UploadView>> {
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.upload.findMany({
        where: { userId, taskMessageId: null, ...(before ? { id: { lt: before } } : {}) },
        orderBy: { id: "desc" },
        take,
      }),
    );
    return { ...page, items: page.items.map(uploadView) };
  }

  /**
   * Deletes one of the user's own uploads: the row first (it decides ownership), then its bytes, so
   * a download that races the delete finds no row rather than a row without a file.
   */
  async remove(userId: string, id: string): Promise<void> {
    const { count } = await this.prisma.upload.deleteMany({ where: { id, userId, taskMessageId: null } });
    if (count === 0) throw notFound("upload");
    await this.store.remove([id]);
  }

  /** Opens an upload the user may read for streaming (one read, and one of the membership for an organization's attachment). */
  async open(userId: string, id: string): Promise<OpenedUpload> {
    const row = await this.prisma.upload.findUnique({
      where: { id },
      include: { taskMessage: { select: { task: { select: { project: { select: { organizationId: true } } } } } } },
    });
    if (!row) throw notFound("upload");
    const organizationId = row.taskMessage?.task.project?.organizationId ?? null;
    await this.memberships.require(userId, { at: { userId: row.userId, organizationId }, action: "read", kind: "upload" });
    const file = await this.store.open(row.id);
    if (!file) throw notFound("upload");
    return { upload: uploadView(row), stream: file.stream };
  }
}
