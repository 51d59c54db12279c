import { z } from 'zod';

/**
 * A boolean input taken as sent. The REST bridge coerces every z.boolean()
 * body field (Boolean('no') is true, so a typo would flip a setting on);
 * literals are left alone and a string is refused.
 */
export const StrictBoolean = z.union([z.literal(true), z.literal(false)]);
