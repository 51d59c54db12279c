import dgram from 'node:dgram';
import net from 'node:net';

/**
 * A local DNS server (UDP, RFC 1035 wire format) answering A and AAAA
 * queries from a table the test edits, with TTL 0 so nothing is cached: a
 * name can resolve to a public address at creation and to 127.0.0.1 at
 * delivery. Unknown names get NXDOMAIN; a known name without an address of
 * the asked family gets an empty NOERROR answer, as real servers give.
 */
export type DnsFake = {
  /** "127.0.0.1:port", for WEBHOOK_DNS_SERVERS */
  server: string;
  set: (host: string, addresses: string[]) => void;
  queries: Array<{ name: string; type: 'A' | 'AAAA' | number }>;
  close: () => Promise<void>;
};

const TYPE_A = 1;
const TYPE_AAAA = 28;

function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  for (;;) {
    const length = message[at]!;
    if (length === 0) return { name: labels.join('.').toLowerCase(), end: at + 1 };
    labels.push(message.subarray(at + 1, at + 1 + length).toString('ascii'));
    at += 1 + length;
  }
}

function addressBytes(address: string): Buffer {
  if (net.isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  // a dotted-quad tail (::ffff:127.0.0.1) is the last two groups
  const text = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a, b, c, d) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((group) => group.toString(16)).join(':'),
  );
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return Buffer.from(groups.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 0xff]));
}

export async function startDnsFake(): Promise<DnsFake> {
  const table = new Map<string, string[]>();
  const queries: DnsFake['queries'] = [];
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, remote) => {
    if (message.length < 12) return;
    const { name, end } = readName(message, 12);
    const type = message.readUInt16BE(end);
    queries.push({ name, type: type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : type });
    const question = message.subarray(12, end + 4);
    const known = table.get(name);
    const wanted = (known ?? []).filter((address) => (type === TYPE_A ? net.isIPv4(address) : type === TYPE_AAAA && net.isIPv6(address)));
    const header = Buffer.alloc(12);
    header.writeUInt16BE(message.readUInt16BE(0), 0);
    // QR, opcode 0, RD copied, RA; RCODE 3 (NXDOMAIN) for names we do not know.
    header.writeUInt16BE(0x8180 | (message.readUInt16BE(2) & 0x0100) | (known ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(wanted.length, 6);
    const answers = wanted.map((address) => {
      const data = addressBytes(address);
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4); // class IN
      record.writeUInt32BE(0, 6); // TTL 0: never cached
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([header, question, ...answers]), remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    set: (host, addresses) => void table.set(host.toLowerCase().replace(/\.$/, ''), addresses),
    queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
