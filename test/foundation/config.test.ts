import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.ts';

describe('config', () => {
  it('runs with no environment at all', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.database.url).toBeUndefined();
    expect(config.email.primary).toBe('provider_a');
    expect(config.email.fallback).toBeUndefined();
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', EMAIL_PRIMARY: 'carrier-pigeon', PROVIDER_A_BASE_URL: 'not a url' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/PORT/);
    expect((error as Error).message).toMatch(/EMAIL_PRIMARY/);
    expect((error as Error).message).toMatch(/PROVIDER_A_BASE_URL/);
  });

  it('ignores a fallback equal to the primary, and accepts the defer queue URL alias', () => {
    const config = loadConfig({ EMAIL_PRIMARY: 'provider_b', EMAIL_FALLBACK: 'provider_b', EMAIL_DEFER_QUEUE_URL: 'email.deferred' });
    expect(config.email.fallback).toBeUndefined();
    expect(config.email.deferQueue).toBe('email.deferred');
  });

  it('clamps the batch timeout to 24..168 hours', () => {
    expect(loadConfig({ BATCH_CONVERSION_TIMEOUT_HOURS: '2' }).batch.timeoutHours).toBe(24);
    expect(loadConfig({ BATCH_CONVERSION_TIMEOUT_HOURS: '500' }).batch.timeoutHours).toBe(168);
  });
});
