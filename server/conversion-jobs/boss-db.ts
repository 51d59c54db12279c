import { sql, type Database } from '../db/database.ts';
import type { DatabaseTransactionConnection } from 'slonik';

/** The pool or an open transaction: whatever the queue job should commit with. */
export type BossConnection = Pick<Database, 'query'> | DatabaseTransactionConnection;

/**
 * pg-boss's `db` option over a slonik connection, so a `boss.send` runs inside
 * our transaction: the chunk rows and their queue jobs commit or vanish together.
 * pg-boss speaks `$n` text; we hand slonik the same text split at the placeholders.
 */
export function bossDb(connection: BossConnection) {
  return {
    async executeSql(text: string, values: unknown[] = []) {
      const parts = text.split(/\$(\d+)/);
      const strings: string[] = [];
      const args: unknown[] = [];
      for (let index = 0; index < parts.length; index += 2) {
        strings.push(parts[index]!);
        if (index + 1 < parts.length) args.push(values[Number(parts[index + 1]) - 1] ?? null);
      }
      const template = Object.freeze(Object.assign([...strings], { raw: Object.freeze([...strings]) })) as unknown as TemplateStringsArray;
      const result = await connection.query(sql.unsafe(template, ...(args as never[])));
      return { rows: [...result.rows] };
    },
  };
}
