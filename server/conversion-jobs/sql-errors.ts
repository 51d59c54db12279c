import { DomainError } from '../errors.ts';
import { sqlState } from '../db/sql-state.ts';

/** SQLSTATEs raised by sql/020_conversion_jobs.sql. */
const CONVERSION_ERRORS = {
  FD001: ['NO_ACTIVE_CONVERSION', 'There is no conversion to cancel'],
  FD002: ['CONVERSION_FINISHING', 'The conversion is finishing and can no longer be cancelled'],
  FD003: ['NO_ACTIVE_CONVERSION', 'The conversion has already finished'],
} as const;

export async function mapConversionErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const state = sqlState(error);
    const mapped = state ? CONVERSION_ERRORS[state as keyof typeof CONVERSION_ERRORS] : undefined;
    if (!mapped) throw error;
    throw new DomainError(mapped[0], mapped[1], { cause: error });
  }
}
