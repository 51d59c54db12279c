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

/** timestamptz and timestamp come back as Date everywhere (slonik's default is epoch milliseconds). */
const typeParsers = [
  ...createTypeParserPreset().filter((parser) => parser.name !== 'timestamptz' && parser.name !== 'timestamp'),
  { name: 'timestamptz', parse: (value: string) => new Date(value) },
  { name: 'timestamp', parse: (value: string) => new Date(`${value}Z`) },
];

export async function createDatabase(url: string, options: { maximumPoolSize?: number } = {}): Promise<Database> {
  return createPool(url, {
    interceptors: [resultParser],
    typeParsers,
    maximumPoolSize: options.maximumPoolSize ?? 10,
    // Slonik retries whole transactions on serialization failures; our
    // transactions hold no side effects, so a retry is safe.
    transactionRetryLimit: 5,
  });
}

/** For statements whose rows we do not read (calls of void functions, DML without RETURNING). */
export const AnyRow = z.record(z.string(), z.unknown());
