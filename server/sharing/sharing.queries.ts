import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';

const PromoRow = z.object({ slug: z.string(), title: z.string(), active: z.boolean(), expiresAt: z.date().nullable() });

export async function findPromo(db: Database, slug: string) {
  return db.maybeOne(sql.type(PromoRow)`select slug, title, active, expires_at as "expiresAt" from promos where slug = ${slug}`);
}

export async function recordPromoClaim(db: Database, claim: { slug: string; email: string; status: string; logId?: string }) {
  await db.query(sql.type(AnyRow)`
    insert into promo_claims (promo_slug, email, last_send_status, last_send_log_id)
    values (${claim.slug}, ${claim.email}, ${claim.status}, ${claim.logId ?? null})
    on conflict (promo_slug, email) do update
       set claims = promo_claims.claims + 1,
           last_send_status = excluded.last_send_status,
           last_send_log_id = excluded.last_send_log_id,
           updated_at = now()`);
}
