import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parentPort } from 'node:worker_threads';

/**
 * The benchmark's customer receiver, on its own thread so its event loop
 * does not share Folio's: HTTPS on loopback with the test certificate,
 * answers 200 at once, and reports each delivery's fileId with the absolute
 * time (ms) it arrived, in batches.
 */
const fixture = (name: string) => fs.readFileSync(new URL(`../test/fixtures/webhooks/${name}`, import.meta.url));
let arrivals: Array<[string, number]> = [];
const server = https.createServer({ key: fixture('receiver-key.pem'), cert: fixture('receiver-cert.pem') }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    arrivals.push([(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { fileId: string }).fileId, at]);
  });
});
server.keepAliveTimeout = 30_000;
setInterval(() => {
  if (arrivals.length === 0) return;
  parentPort!.postMessage({ arrivals });
  arrivals = [];
}, 20).unref();
parentPort!.on('message', (message: { stop?: boolean }) => {
  if (message.stop) server.close(() => process.exit(0));
});
server.listen(0, '127.0.0.1', () => parentPort!.postMessage({ port: (server.address() as AddressInfo).port }));
