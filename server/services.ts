import type { Deps } from './deps.ts';

/**
 * Domain services the routes call, built once per app from its deps. Each
 * area adds its entry here; routers reach them as ctx.deps.services.<area>.
 */
export interface AppServices {}

export function buildServices(_deps: Deps): AppServices {
  return {};
}
