import type { AnyRouter } from '@trpc/server';

/**
 * trpc-to-openapi "coerces" every boolean, number, bigint and date of a
 * procedure's input on each REST call by setting `coerce` on the shared zod
 * schema, in place: from the first REST request on, `"false"` parsed as
 * `true` (Boolean("false")), `"yes"` passed, and tRPC calls inherited it.
 * Here every such schema refuses the flag, so inputs stay strict on both
 * adapters; a query parameter that must be read from a string says so itself
 * with `z.coerce` (its flag is already set and is left alone).
 */
export function keepInputsStrict(router: AnyRouter): void {
  const seen = new Set<object>();
  for (const procedure of Object.values(router._def.procedures as Record<string, { _def: { inputs?: unknown[] } }>)) {
    for (const input of procedure._def.inputs ?? []) pin(input, seen);
  }
}

type ZodDef = {
  type?: string;
  coerce?: boolean;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  element?: unknown;
  options?: unknown[];
  in?: unknown;
  out?: unknown;
};

function pin(schema: unknown, seen: Set<object>): void {
  const def = (schema as { _zod?: { def?: ZodDef } } | undefined)?._zod?.def;
  if (!def || seen.has(def)) return;
  seen.add(def);
  if (['boolean', 'number', 'bigint', 'date'].includes(def.type ?? '') && !def.coerce) {
    Object.defineProperty(def, 'coerce', { get: () => false, set: () => undefined, configurable: true, enumerable: true });
  }
  if (def.shape) for (const field of Object.values(def.shape)) pin(field, seen);
  for (const inner of [def.innerType, def.element, def.in, def.out, ...(def.options ?? [])]) pin(inner, seen);
}
