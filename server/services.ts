import type { Deps } from './deps.ts';
import { createEmailService, type EmailService } from './email/email-service.ts';
import { createConversionService, type ConversionService } from './conversion-jobs/service.ts';
import { createConversionEvents, type ConversionEvents } from './conversion-jobs/events.ts';
import { lazyEngine } from './conversion-jobs/engine-provider.ts';
import type { FiguresDeps } from './figures/figures.ts';
import { resolveSigningSecrets } from './secrets.ts';
import { createObjectStore } from './storage/storage.ts';

/**
 * Domain services the routes call, built once per app from its deps. Each
 * area adds its entry here; routers reach them as ctx.deps.services.<area>.
 */
export interface AppServices {
  email: EmailService;
  conversion: ConversionService;
  conversionEvents: ConversionEvents;
  /** the figures API: shares the conversion service's store and engine (one worker pool per process) */
  figures: FiguresDeps;
}

export function buildServices(deps: Deps): AppServices {
  const downloadSecret = resolveSigningSecrets(deps.config).download;
  const conversion = createConversionService({
    ...deps,
    store: createObjectStore(deps.config.storage),
    engine: lazyEngine(deps),
    downloadSecret,
  });
  return {
    email: createEmailService(deps),
    conversion,
    conversionEvents: createConversionEvents(deps.databaseUrl, deps.log),
    figures: { db: deps.db, clock: deps.clock, log: deps.log, store: conversion.store, engine: conversion.engine, downloadSecret },
  };
}
