import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLog } from '../../server/log.ts';

describe('structured logs', () => {
  it('writes JSON lines and never the secrets it is handed', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLog({ destination, level: 'info' });
    log.info(
      {
        requestId: 'r-1',
        req: { headers: { authorization: 'Bearer abc.def.ghi', 'x-proxy-secret': 'proxy-s3cret', 'x-webhook-secret': 'hook-s3cret' } },
        provider: { apiKey: 're_live_key', region: 'us-east-1' },
        token: 'download-token-value',
      },
      'request',
    );
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ msg: 'request', requestId: 'r-1', provider: { region: 'us-east-1' } });
    for (const secret of ['abc.def.ghi', 'proxy-s3cret', 'hook-s3cret', 're_live_key', 'download-token-value']) {
      expect(lines[0]).not.toContain(secret);
    }
  });
});
