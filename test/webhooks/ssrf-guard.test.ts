import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { createResolver, createSafeHttpClient, readBodyPrefix, SafeFetchError, truncateUtf8 } from '../../server/net/safe-fetch.ts';
import { startDnsFake } from '../fakes/dns.ts';
import { startWebhookReceiver } from '../fakes/webhook-receiver.ts';

const dns = await startDnsFake();
const receiver = await startWebhookReceiver();
afterAll(async () => {
  await receiver.close();
  await dns.close();
});

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';
dns.set('public.example.com', [PUBLIC_V4, PUBLIC_V6]);
dns.set('internal.example.com', ['10.0.0.5']);
dns.set('loop.example.com', ['127.0.0.1']);
dns.set('meta.example.com', ['169.254.169.254']);
dns.set('mixed.example.com', [PUBLIC_V4, '192.168.1.1']);
dns.set('v6loop.example.com', ['::1']);
dns.set('mapped.example.com', ['::ffff:127.0.0.1']);
dns.set('cgnat.example.com', ['100.64.0.1']);
dns.set('ula.example.com', ['fd00:ec2::254']);
dns.set('nat64.example.com', ['64:ff9b::a9fe:a9fe']);
dns.set('receiver.example.com', ['127.0.0.1']);

const resolve = createResolver({ servers: [dns.server], timeoutMs: 2_000 });
const publicOnly = createSafeHttpClient({ resolve, policy: { allowLoopback: false } });
const testSwitch = createSafeHttpClient({ resolve, policy: { allowLoopback: true } });

const HOSTILE_URLS = [
  'http://93.184.215.14/hook',
  'ftp://example.com/hook',
  'https://127.0.0.1/',
  'https://127.1/',
  'https://0x7f000001/',
  'https://2130706433/',
  'https://0177.0.0.1/',
  'https://0x7f.0.0.1/',
  'https://127.0.0.1./',
  'https://１２７.０.０.１/',
  'https://127.0.0.%31/',
  'https://0/',
  'https://0.0.0.0/',
  'https://localhost/',
  'https://localhost./',
  'https://LOCALHOST:8443/',
  'https://api.localhost/',
  'https://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/',
  'https://[::1]/',
  'https://[::]/',
  'https://[::ffff:127.0.0.1]/',
  'https://[0:0:0:0:0:ffff:7f00:1]/',
  'https://[::ffff:a9fe:a9fe]/',
  'https://[64:ff9b::a9fe:a9fe]/',
  'https://[::127.0.0.1]/',
  'https://[fe80::1]/',
  'https://[fc00::1]/',
  'https://[fd00:ec2::254]/latest/meta-data/',
  'https://[ff02::1]/',
  'https://[2001:db8::1]/',
  'https://[2002:7f00:1::]/',
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
  'https://10.0.0.1/',
  'https://172.16.5.4/',
  'https://192.168.0.1/',
  'https://0300.0250.0.1/',
  'https://169.254.169.254/latest/meta-data/',
  'https://100.64.0.1/',
  'https://100.100.100.200/latest/meta-data/',
  'https://168.63.129.16/metadata/instance',
  'https://224.0.0.1/',
  'https://240.0.0.1/',
  'https://255.255.255.255/',
  'https://192.0.2.1/',
  'https://198.18.0.1/',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://metadata/',
  'https://instance-data/',
  'https://router.lan/',
  'https://printer.local/',
  'https://user:pass@example.com/',
  'https://example.com@127.0.0.1/',
  'https://evil.example.com\\@127.0.0.1/',
  'https://internal.example.com/',
  'https://loop.example.com/',
  'https://meta.example.com/',
  'https://mixed.example.com/',
  'https://v6loop.example.com/',
  'https://mapped.example.com/',
  'https://cgnat.example.com/',
  'https://ula.example.com/',
  'https://nat64.example.com/',
  'https://nxdomain.example.com/',
  'https:// 127.0.0.1/',
  'not a url',
];

describe('the SSRF guard', () => {
  beforeEach(() => receiver.reset());

  it(`refuses all ${HOSTILE_URLS.length} hostile URLs, each with a reason`, async () => {
    expect(HOSTILE_URLS.length).toBeGreaterThanOrEqual(40);
    const outcomes = await Promise.all(
      HOSTILE_URLS.map((url) =>
        publicOnly.vet(url).then(
          (target) => ({ url, accepted: target.addresses }),
          (error: unknown) => ({ url, error }),
        ),
      ),
    );
    const accepted = outcomes.filter((outcome) => 'accepted' in outcome);
    expect(accepted).toEqual([]);
    for (const outcome of outcomes) {
      expect(outcome, outcome.url).toMatchObject({ error: expect.any(SafeFetchError) });
      const error = (outcome as { error: SafeFetchError }).error;
      expect(['refused', 'dns'], `${outcome.url}: ${error.message}`).toContain(error.kind);
    }
    expect((outcomes.find((outcome) => outcome.url.includes('mixed.example.com')) as { error: Error }).error.message).toMatch(/192\.168\.1\.1/);
  });

  it('accepts public HTTPS by address (IPv4, IPv6) and by name, resolving every address', async () => {
    expect((await publicOnly.vet(`https://${PUBLIC_V4}/hook`)).addresses).toEqual([PUBLIC_V4]);
    expect((await publicOnly.vet(`https://[${PUBLIC_V6}]/hook`)).addresses).toEqual([PUBLIC_V6]);
    const named = await publicOnly.vet('https://Public.Example.com.:8443/hooks?x=1');
    expect(named).toMatchObject({ host: 'public.example.com', port: 8443 });
    expect([...named.addresses].sort()).toEqual([PUBLIC_V6, PUBLIC_V4].sort());
  });

  it('the test-only switch unlocks loopback and nothing else', async () => {
    expect((await testSwitch.vet('https://127.0.0.1:9/')).addresses).toEqual(['127.0.0.1']);
    expect((await testSwitch.vet('https://[::1]:9/')).addresses).toEqual(['::1']);
    for (const url of ['https://10.0.0.1/', 'https://169.254.169.254/', 'http://127.0.0.1/', 'https://localhost/', 'https://mixed.example.com/']) {
      await expect(testSwitch.vet(url), url).rejects.toThrow(SafeFetchError);
    }
  });

  it('connects to the address it checked, with one lookup, sending the name as Host', async () => {
    const before = dns.queries.filter((query) => query.name === 'receiver.example.com').length;
    const response = await testSwitch.request(`https://receiver.example.com:${receiver.port}/pinned`, { method: 'POST', body: '{}', timeoutMs: 5_000 });
    expect(response.status).toBe(200);
    expect(response.address).toBe('127.0.0.1');
    await readBodyPrefix(response.body, { keepBytes: 100, timeoutMs: 1_000 });
    expect(receiver.requests.map((request) => [request.path, request.headers.host])).toEqual([['/pinned', `receiver.example.com:${receiver.port}`]]);
    // one A and one AAAA question, asked once: nothing re-resolves between the check and the connect
    expect(dns.queries.filter((query) => query.name === 'receiver.example.com').length - before).toBe(2);
    // without the switch the same name is refused before any connection
    await expect(publicOnly.request(`https://receiver.example.com:${receiver.port}/pinned`, { timeoutMs: 5_000 })).rejects.toMatchObject({ kind: 'refused' });
    expect(receiver.requests).toHaveLength(1);
  });

  it('never follows a redirect unless allowed, and checks every hop it follows', async () => {
    receiver.always({ kind: 'status', status: 302, headers: { location: `https://127.0.0.1:${receiver.port}/second` } });
    const plain = await testSwitch.request(receiver.url('/first'), { method: 'POST', body: '{}', timeoutMs: 5_000 });
    expect(plain.status).toBe(302);
    plain.body.resume();
    expect(receiver.requests.map((request) => request.path)).toEqual(['/first']);

    receiver.reset();
    receiver.next({ kind: 'status', status: 302, headers: { location: '/second' } });
    const followed = await testSwitch.request(receiver.url('/first'), { timeoutMs: 5_000, maxRedirects: 3 });
    expect(followed.status).toBe(200);
    followed.body.resume();
    expect(receiver.requests.map((request) => request.path)).toEqual(['/first', '/second']);

    for (const location of ['https://10.0.0.1/x', 'https://169.254.169.254/latest/', `http://127.0.0.1:${receiver.port}/x`, 'https://loop.example.com.evil/']) {
      receiver.reset();
      receiver.next({ kind: 'status', status: 307, headers: { location } });
      await expect(testSwitch.request(receiver.url('/first'), { timeoutMs: 5_000, maxRedirects: 3 }), location).rejects.toThrow(SafeFetchError);
      expect(receiver.requests).toHaveLength(1);
    }

    receiver.reset();
    receiver.always({ kind: 'status', status: 302, headers: { location: '/again' } });
    await expect(testSwitch.request(receiver.url('/loop'), { timeoutMs: 5_000, maxRedirects: 3 })).rejects.toMatchObject({ kind: 'too_many_redirects' });
    expect(receiver.requests).toHaveLength(4);
  });

  it('gives up at its deadline and says so', async () => {
    receiver.next({ kind: 'delay', ms: 2_000 });
    const started = performance.now();
    await expect(testSwitch.request(receiver.url('/slow'), { timeoutMs: 200 })).rejects.toMatchObject({ kind: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('keeps at most the bytes asked for, cut on a character boundary', () => {
    const text = `${'a'.repeat(1022)}éé`;
    const kept = truncateUtf8(Buffer.from(text), 1024);
    expect(kept).toBe(`${'a'.repeat(1022)}é`);
    expect(Buffer.byteLength(truncateUtf8(Buffer.alloc(2000, 0xff), 1024))).toBeLessThanOrEqual(1024);
    expect(truncateUtf8(Buffer.from('a\u0000b'), 1024)).toBe('ab');
  });
});

describe('the test-only switch in configuration', () => {
  it.each([['production'], ['development'], [undefined]])('stops the start under NODE_ENV=%s', (nodeEnv) => {
    expect(() => loadConfig({ NODE_ENV: nodeEnv, WEBHOOK_TEST_ALLOW_LOOPBACK: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: nodeEnv, WEBHOOK_TEST_ALLOW_LOOPBACK: 'true' })).toThrow(/WEBHOOK_TEST_ALLOW_LOOPBACK/);
  });

  it('is off unless set, and on only under NODE_ENV=test', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).webhooks.allowLoopbackReceiver).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test' }).webhooks.allowLoopbackReceiver).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test', WEBHOOK_TEST_ALLOW_LOOPBACK: 'true' }).webhooks.allowLoopbackReceiver).toBe(true);
  });
});
