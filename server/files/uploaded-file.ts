/** What POST /api/files answers; kept apart from upload.ts so the client SDK's published types need nothing else of the server. */
export type UploadedFile = { id: string; name: string; contentType: string; sizeBytes: number; pages: number | null; status: string };
