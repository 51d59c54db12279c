import { z } from 'zod';
import { createPool, createTypeParserPreset, sql, type CommonQueryMethods, type DatabasePool, type Interceptor } from 'slonik';

export { sql };
export type Database = DatabasePool;
/** The pool or an open transaction (where `transaction` opens a savepoint): what a query function runs on. */
export type Queryable = CommonQueryMethods;

/**
 * Slonik v49 hands every row of a `sql.type(schema)` query to interceptors but
 * validates nothing itself; without this interceptor a typed query is only a
 * cast. Rows of untyped queries pass through.
 */
const resultParser: Interceptor = {
  name: 'folio-result-parser',
  transformRowAsync: async (context, _query, row) => {
    const parser = context.resultParser;
    if (!parser) return row;
    const result = await parser['~standard'].validate(row);
    if (result.issues) {
      const detail = result.issues.map((issue) => `${(issue.path ?? []).map(String).join('.')}: ${issue.message}`).join('; ');
      throw new Error(`Query result did not match its schema: ${detail}`);
    }
    return result.value as typeof row;
  },
};

const writeWatchers: Array<{ table: RegExp; onWrite: () => void }> = [];

/**
 * Calls `onWrite` after every statement of this process (on any pool built by
 * createDatabase) that names `table` and is not a plain SELECT, whether it
 * succeeded or not: for in-process caches that must see this process's own
 * writes at once. It cannot see other processes, nor a call of a function that
 * writes the table without naming it; callers of those say so themselves.
 */
export function watchTableWrites(table: string, onWrite: () => void): void {
  writeWatchers.push({ table: new RegExp(`\\b${table}\\b`, 'i'), onWrite });
}

const READ_ONLY = /^\s*select\b/i;

function noticeWrites(query: { sql: string }) {
  if (writeWatchers.length === 0 || READ_ONLY.test(query.sql)) return null;
  for (const watcher of writeWatchers) if (watcher.table.test(query.sql)) watcher.onWrite();
  return null;
}

const writeWatch: Interceptor = {
  name: 'folio-write-watch',
  afterQueryExecution: (_context, query) => noticeWrites(query),
  queryExecutionError: (_context, query) => noticeWrites(query),
};

/** timestamptz and timestamp come back as Date everywhere (slonik's default is epoch milliseconds). */
const typeParsers = [
  ...createTypeParserPreset().filter((parser) => parser.name !== 'timestamptz' && parser.name !== 'timestamp'),
  { name: 'timestamptz', parse: (value: string) => new Date(value) },
  { name: 'timestamp', parse: (value: string) => new Date(`${value}Z`) },
];

export async function createDatabase(url: string, options: { maximumPoolSize?: number } = {}): Promise<Database> {
  return createPool(url, {
    interceptors: [resultParser, writeWatch],
    typeParsers,
    maximumPoolSize: options.maximumPoolSize ?? 10,
    // Slonik's default sends DISCARD ALL after every use of a connection: a
    // second round trip per query, and every cached plan (the PL/pgSQL
    // functions' too) thrown away, so the send log and the event recording
    // were planned afresh on every call. Nothing here leaves session state
    // on a pooled connection (no session SET, temp table, LISTEN or session
    // advisory lock; those use their own clients), so there is nothing to discard.
    resetConnection: async () => {},
    // Slonik retries whole transactions on serialization failures; our
    // transactions hold no side effects, so a retry is safe.
    transactionRetryLimit: 5,
  });
}

/** For statements whose rows we do not read (calls of void functions, DML without RETURNING). */
export const AnyRow = z.record(z.string(), z.unknown());
