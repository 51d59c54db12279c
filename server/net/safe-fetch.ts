import dns from 'node:dns';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { checkPublicHttpsUrl, forbiddenAddressReason, type AddressPolicy, type CheckedUrl } from './address-policy.ts';

/**
 * Outbound HTTPS to addresses a customer chose (webhook endpoints, import by
 * URL), guarded against SSRF: every hop is parsed and vetted, its host is
 * resolved once, every address it resolves to is checked, and the socket is
 * pinned to those checked addresses (no second lookup, so no DNS-rebinding
 * window). Redirects are followed only when the caller allows them, each hop
 * checked the same way; webhooks allow none.
 */

/** The addresses a host name resolves to (A and AAAA). */
export type ResolveHost = (host: string) => Promise<string[]>;

export type SafeFetchErrorKind = 'refused' | 'dns' | 'timeout' | 'tls' | 'network' | 'too_many_redirects';

export class SafeFetchError extends Error {
  override name = 'SafeFetchError';
  readonly kind: SafeFetchErrorKind;
  constructor(kind: SafeFetchErrorKind, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.kind = kind;
  }
}

const DNS_TIMEOUT_MS = 5_000;

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(onTimeout()), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The system resolver (getaddrinfo: hosts file, then DNS) by default; with
 * `servers` ("host:port" list) the named DNS servers only, which is how the
 * tests give a host one address at creation and another at delivery.
 */
export function createResolver(options: { servers?: string[]; timeoutMs?: number } = {}): ResolveHost {
  const timeoutMs = options.timeoutMs ?? DNS_TIMEOUT_MS;
  let resolve: (host: string) => Promise<string[]>;
  if (options.servers && options.servers.length > 0) {
    const resolver = new dns.promises.Resolver({ timeout: Math.min(timeoutMs, 2_000), tries: 2 });
    resolver.setServers(options.servers);
    resolve = async (host) => {
      const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
      const addresses = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []));
      if (addresses.length === 0) {
        const failure = answers.find((answer) => answer.status === 'rejected');
        throw failure?.status === 'rejected' ? failure.reason : new Error(`no addresses for ${host}`);
      }
      return addresses;
    };
  } else {
    resolve = async (host) => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  }
  return (host) => withTimeout(resolve(host), timeoutMs, () => new Error(`resolving ${host} took longer than ${timeoutMs} ms`));
}

/** A URL that passed every check, with the addresses it may be reached at. */
export type VettedTarget = CheckedUrl & { addresses: string[] };

export type SafeHttpClientOptions = { resolve: ResolveHost; policy: AddressPolicy; agent?: https.Agent };

export type SafeRequestInit = {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Until the response headers of the last hop arrive (DNS and connect included). */
  timeoutMs: number;
  /** Redirects to follow, each hop vetted; 0 (the default) hands a 3xx back as the answer. */
  maxRedirects?: number;
  /**
   * The policy for a redirect that leaves the first URL's origin (default: the client's). URL imports
   * pass public-only, so the test suite's loopback switch never lets a redirect into loopback space.
   */
  crossOriginPolicy?: AddressPolicy;
};

export type SafeResponse = {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, unread: the caller bounds what it reads (see readBodyPrefix). */
  body: IncomingMessage;
  /** The URL that answered (after any redirects). */
  url: URL;
  /** The checked address the socket is connected to. */
  address: string;
  /** Milliseconds from the call to the response headers. */
  latencyMs: number;
};

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function classifyNetworkError(error: unknown): SafeFetchError {
  if (error instanceof SafeFetchError) return error;
  const code = (error as { code?: string }).code ?? '';
  const message = (error as Error).message ?? String(error);
  if (/CERT|SSL|TLS|SELF_SIGNED|ALTNAME|UNABLE_TO_(GET|VERIFY)/.test(code))
    return new SafeFetchError('tls', `TLS failed: ${code || message}`, { cause: error });
  return new SafeFetchError('network', `connection failed: ${code || message}`, { cause: error });
}

function isLoopback(address: string) {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/**
 * A client that only reaches public HTTPS (see the module comment). One per
 * process: its keep-alive agent reuses connections, which were each opened to
 * a checked address.
 */
export function createSafeHttpClient(options: SafeHttpClientOptions) {
  const { resolve, policy } = options;
  const agent = options.agent ?? new https.Agent({ keepAlive: true, maxSockets: 64, maxTotalSockets: 512, scheduling: 'lifo' });

  /** Parses, vets and resolves a URL; throws SafeFetchError('refused' | 'dns'). */
  async function vet(input: string | URL, hopPolicy: AddressPolicy = policy): Promise<VettedTarget> {
    const check = checkPublicHttpsUrl(typeof input === 'string' ? input : input.href, hopPolicy);
    if (!check.ok) throw new SafeFetchError('refused', check.reason);
    const target = check.value;
    if (target.literalAddress) return { ...target, addresses: [target.literalAddress] };
    let addresses: string[];
    try {
      addresses = await resolve(target.host);
    } catch (error) {
      throw new SafeFetchError('dns', `${target.host} could not be resolved`, { cause: error });
    }
    if (addresses.length === 0) throw new SafeFetchError('dns', `${target.host} has no addresses`);
    for (const address of addresses) {
      const reason = forbiddenAddressReason(address, hopPolicy);
      if (reason) throw new SafeFetchError('refused', `${target.host} resolves to ${address}, which is not a public address (${reason})`);
    }
    return { ...target, addresses };
  }

  function hop(
    target: VettedTarget,
    init: SafeRequestInit,
    deadline: number,
    hopPolicy: AddressPolicy,
  ): Promise<{ response: IncomingMessage; address: string }> {
    // The socket may only go where we looked: hand net.connect the checked addresses, never the name.
    const lookup: LookupFunction = (_host, lookupOptions, callback) => {
      const family = (address: string) => (address.includes(':') ? 6 : 4);
      const wanted = target.addresses.filter((address) => !lookupOptions.family || family(address) === lookupOptions.family);
      const list = wanted.length > 0 ? wanted : target.addresses;
      if (lookupOptions.all)
        (callback as (error: null, addresses: Array<{ address: string; family: number }>) => void)(
          null,
          list.map((address) => ({ address, family: family(address) })),
        );
      else callback(null, list[0]!, family(list[0]!));
    };
    const insecureLoopback = hopPolicy.allowLoopback && target.addresses.every(isLoopback);
    return new Promise((resolvePromise, reject) => {
      let settled = false;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.destroy();
        reject(classifyNetworkError(error));
      };
      const request = https.request({
        host: target.host,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        method: init.method ?? 'GET',
        headers: { ...init.headers, host: target.url.host },
        agent,
        lookup,
        servername: target.literalAddress ? undefined : target.host,
        // Only the test suite's loopback receiver, under its test-only switch, may be self-signed.
        rejectUnauthorized: !insecureLoopback,
      });
      const timer = setTimeout(() => fail(new SafeFetchError('timeout', `no answer within ${init.timeoutMs} ms`)), Math.max(0, deadline - performance.now()));
      const checkSocket = (socket: Socket) => {
        const remote = socket.remoteAddress;
        const reason = remote ? forbiddenAddressReason(remote, hopPolicy) : undefined;
        if (reason) fail(new SafeFetchError('refused', `connected to ${remote}, which is not a public address (${reason})`));
      };
      request.on('socket', (socket) => {
        if (socket.connecting) socket.once('connect', () => checkSocket(socket));
        else checkSocket(socket);
      });
      request.on('error', fail);
      request.on('response', (response) => {
        if (settled) {
          response.destroy();
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolvePromise({ response, address: response.socket.remoteAddress ?? target.addresses[0]! });
      });
      request.end(init.body);
    });
  }

  /**
   * One guarded request. Resolves with the response headers and an unread
   * body; rejects with SafeFetchError (refused, dns, timeout, tls, network,
   * too_many_redirects). Never follows a redirect it was not allowed to.
   */
  async function request(input: string | URL, init: SafeRequestInit): Promise<SafeResponse> {
    const started = performance.now();
    const deadline = started + init.timeoutMs;
    const remaining = () => deadline - performance.now();
    let url = typeof input === 'string' ? input : input.href;
    let firstOrigin: string | undefined;
    let current = init;
    for (let redirects = 0; ; redirects++) {
      const hopPolicy = firstOrigin !== undefined && new URL(url).origin !== firstOrigin ? (init.crossOriginPolicy ?? policy) : policy;
      const target = await withTimeout(
        vet(url, hopPolicy),
        Math.max(1, remaining()),
        () => new SafeFetchError('timeout', `no answer within ${init.timeoutMs} ms`),
      );
      firstOrigin ??= target.url.origin;
      const { response, address } = await hop(target, current, deadline, hopPolicy);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (!REDIRECT_STATUSES.has(status) || !location || (init.maxRedirects ?? 0) === 0) {
        return { status, headers: response.headers, body: response, url: target.url, address, latencyMs: Math.round(performance.now() - started) };
      }
      response.resume();
      if (redirects >= (init.maxRedirects ?? 0)) throw new SafeFetchError('too_many_redirects', `more than ${init.maxRedirects} redirects`);
      const next = new URL(location, target.url);
      const sameOrigin = next.origin === target.url.origin;
      const becomesGet = status === 303 || ((status === 301 || status === 302) && current.method === 'POST');
      const headers = Object.fromEntries(
        Object.entries(current.headers ?? {}).filter(
          ([name]) => (sameOrigin || !/^(authorization|cookie)$/i.test(name)) && !(becomesGet && /^content-/i.test(name)),
        ),
      );
      current = becomesGet ? { ...current, method: 'GET', body: undefined, headers } : { ...current, headers };
      url = next.href;
    }
  }

  return { vet, request, agent };
}

export type SafeHttpClient = ReturnType<typeof createSafeHttpClient>;

/**
 * Reads at most `keepBytes` of a body (cut on a UTF-8 boundary when read as
 * text), discarding up to `drainBytes` more so the connection can be reused;
 * a longer or slower body is cut off. Never rejects.
 */
export function readBodyPrefix(
  body: Readable,
  options: { keepBytes: number; drainBytes?: number; timeoutMs: number },
): Promise<{ bytes: Buffer; truncated: boolean }> {
  const drainBytes = options.drainBytes ?? 64 * 1024;
  return new Promise((resolve) => {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let seen = 0;
    let done = false;
    const finish = (complete: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (!complete) body.destroy();
      resolve({ bytes: Buffer.concat(kept), truncated: seen > keptBytes || !complete });
    };
    const timer = setTimeout(() => finish(false), Math.max(0, options.timeoutMs));
    body.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (keptBytes < options.keepBytes) {
        const part = chunk.subarray(0, options.keepBytes - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      if (seen > options.keepBytes + drainBytes) finish(false);
    });
    body.on('end', () => finish(true));
    body.on('error', () => finish(false));
    body.on('close', () => finish(seen <= keptBytes));
  });
}

/**
 * Text of at most `maxBytes` UTF-8 bytes, safe to store: a character the cut
 * would split is left out, bytes that are not UTF-8 become U+FFFD (and still
 * count), and NUL characters, which PostgreSQL text cannot hold, are dropped.
 */
export function truncateUtf8(bytes: Buffer, maxBytes: number): string {
  let text = bytes.subarray(0, maxBytes).toString('utf8').replaceAll('\u0000', '');
  if (bytes.length > maxBytes && text.endsWith('\uFFFD')) text = text.slice(0, -1);
  while (Buffer.byteLength(text) > maxBytes) text = text.slice(0, -1);
  return text;
}
