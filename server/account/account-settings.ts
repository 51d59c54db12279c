import { z } from 'zod';
import { sql, type Database } from '../db/database.ts';

export const AccountSettings = z.object({
  /** Mail me when a conversion I started completes or fails (never for conversions started by email: those get their reply). */
  conversionResultEmail: z.boolean(),
});
export type AccountSettings = z.infer<typeof AccountSettings>;

export const AccountSettingsPatch = z.object({ conversionResultEmail: z.boolean().optional() }).strict();

export function getAccountSettings(db: Database, userId: string): Promise<AccountSettings> {
  return db.one(sql.type(AccountSettings)`select conversion_result_email as "conversionResultEmail" from users where id = ${userId}`);
}

/** Changes the given settings and answers all of them. */
export function updateAccountSettings(db: Database, userId: string, patch: z.infer<typeof AccountSettingsPatch>): Promise<AccountSettings> {
  return db.one(sql.type(AccountSettings)`
    update users set conversion_result_email = coalesce(${patch.conversionResultEmail ?? null}::boolean, conversion_result_email)
     where id = ${userId} returning conversion_result_email as "conversionResultEmail"`);
}
