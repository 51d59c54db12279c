import { z } from 'zod';
import { sql, type Queryable } from '../db/database.ts';

export const FileOwner = z.object({ ownerId: z.uuid(), tenantId: z.uuid().nullable() });
export type FileOwner = z.infer<typeof FileOwner>;

/** Who owns the file, and the owner's tenant (tenant admins see their tenant's files). */
export function selectFileOwner(db: Queryable, fileId: string): Promise<FileOwner | null> {
  return db.maybeOne(sql.type(FileOwner)`
    select f.owner_id as "ownerId", u.tenant_id as "tenantId" from files f join users u on u.id = f.owner_id where f.id = ${fileId}`);
}
