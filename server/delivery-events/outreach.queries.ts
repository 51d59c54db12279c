import { sql, AnyRow, type Database } from '../db/database.ts';
import type { EmailEvent } from './delivery-events.queries.ts';

const COLUMN: Partial<Record<EmailEvent, string>> = {
  sent: 'sent_at',
  delivered: 'delivered_at',
  opened: 'opened_at',
  clicked: 'clicked_at',
  bounced: 'bounced_at',
  complained: 'complained_at',
};

/**
 * Keeps the outreach tables current for one campaign-mail event: the send row
 * per message (first time of each milestone), the prospect's status (a
 * permanent bounce or a complaint ends the prospect), and an unsubscribe for
 * a complainant. Every write is idempotent, so a replayed event changes nothing.
 */
export async function recordOutreachEvent(
  db: Database,
  input: { providerMessageId: string; event: EmailEvent; at: Date; recipients: string[]; campaign?: string; suppressed: string[] },
) {
  const column = COLUMN[input.event];
  const at = input.at.toISOString();
  const prospect = input.recipients[0] ?? null;
  await db.transaction(async (tx) => {
    if (prospect) {
      await tx.query(
        sql.type(AnyRow)`insert into prospects (email, last_contacted_at) values (${prospect}, ${at}::timestamptz) on conflict (email) do nothing`,
      );
    }
    await tx.query(sql.type(AnyRow)`
      insert into email_sends (provider_message_id, prospect_email, campaign, status)
      values (${input.providerMessageId}, ${prospect}, ${input.campaign ?? null}, 'sent')
      on conflict (provider_message_id) do nothing`);
    if (column) {
      await tx.query(sql.type(AnyRow)`
        update email_sends set ${sql.identifier([column])} = coalesce(${sql.identifier([column])}, ${at}::timestamptz),
               status = case when status in ('bounced', 'complained') then status else ${input.event} end,
               updated_at = now()
         where provider_message_id = ${input.providerMessageId}`);
    }
    if (input.event === 'bounced' || input.event === 'complained') {
      const status = input.event === 'bounced' ? 'bounced' : 'complained';
      for (const email of input.suppressed) {
        await tx.query(sql.type(AnyRow)`
          insert into prospects (email, status) values (${email}, ${status})
          on conflict (email) do update set status = case when prospects.status = 'active' then excluded.status else prospects.status end, updated_at = now()`);
      }
      if (input.event === 'complained') {
        for (const email of input.suppressed) {
          await tx.query(
            sql.type(AnyRow)`insert into unsubscribes (email, reason, source) values (${email}, 'complaint', 'provider_b') on conflict (email) do nothing`,
          );
        }
      }
    }
  });
}
