// A real DNS server (npm dns2) for tests, answering from a zone the test edits: Mailroom's resolver
// (DNS_SERVERS) and mailauth's verifier both ask it.
import { Resolver } from 'node:dns/promises';
import dns2, { type Resource } from 'dns2';

const { Packet } = dns2;

export interface Records {
  A?: string[];
  AAAA?: string[];
  MX?: { exchange: string; priority: number }[];
  TXT?: string[];
  CNAME?: string[];
  PTR?: string[];
}

export interface TestDnsServer {
  /** `127.0.0.1:port`, for DNS_SERVERS. */
  address: string;
  /** Records by fully qualified name (lower case); a name absent here answers NXDOMAIN. */
  zone: Map<string, Records>;
  /** Names answered SERVFAIL: a lookup that fails, rather than finds nothing. */
  failing: Set<string>;
  /** Adds records at `name`, beside those already there. */
  add(name: string, records: Records): void;
  /** A node:dns resolver asking this server. */
  resolver: Resolver;
  close(): Promise<void>;
}

const SERVFAIL = 2;
const NXDOMAIN = 3;
const TYPES: Record<number, keyof Records> = {
  [Packet.TYPE.A]: 'A', [Packet.TYPE.AAAA]: 'AAAA', [Packet.TYPE.MX]: 'MX', [Packet.TYPE.TXT]: 'TXT', [Packet.TYPE.CNAME]: 'CNAME', [Packet.TYPE.PTR]: 'PTR',
};

/** A TXT value longer than 255 bytes travels as several strings (a DKIM key does). */
const chunks = (text: string) => text.match(/.{1,255}/gs) ?? [''];

export async function startDnsServer(): Promise<TestDnsServer> {
  const zone = new Map<string, Records>();
  const failing = new Set<string>();
  const server = dns2.createServer({
    udp: true,
    handle(request, send) {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question!.name.toLowerCase();
      const records = zone.get(name);
      if (failing.has(name)) {
        response.header.rcode = SERVFAIL;
        return void send(response);
      }
      if (!records) {
        response.header.rcode = NXDOMAIN;
        return void send(response);
      }
      const type = TYPES[question!.type];
      const answer = (fields: object) =>
        response.answers.push({ name: question!.name, type: question!.type, class: Packet.CLASS.IN, ttl: 60, ...fields } as Resource);
      for (const value of (type && records[type]) || []) {
        if (type === 'MX') answer(value as object);
        else if (type === 'TXT') answer({ data: chunks(value as string) });
        else if (type === 'CNAME' || type === 'PTR') answer({ domain: value });
        else answer({ address: value });
      }
      void send(response);
    },
  });
  const { udp } = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const address = `127.0.0.1:${udp!.port}`;
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([address]);
  return {
    address,
    zone,
    failing,
    add(name, records) {
      const key = name.toLowerCase();
      const current = zone.get(key) ?? {};
      for (const type of Object.keys(records) as (keyof Records)[]) {
        current[type] = [...(current[type] ?? []), ...(records[type] as never[])] as never;
      }
      zone.set(key, current);
    },
    resolver,
    close: () => server.close(),
  };
}

export interface PublishedRecord {
  record: string;
  name: string;
  type: string;
  value: string;
  priority?: number;
}

/** Publishes a domain's records as GET /domains/:id lists them, or only those of some kinds (SPF, DKIM, DMARC, Receiving, Tracking). */
export function publishRecords(dns: TestDnsServer, domain: { name: string; records: PublishedRecord[] }, kinds?: string[]): void {
  for (const record of domain.records) {
    const fqdn = record.name === '@' ? domain.name : `${record.name}.${domain.name}`;
    if (kinds && !kinds.includes(record.record)) continue;
    if (record.type === 'MX') dns.add(fqdn, { MX: [{ exchange: record.value, priority: record.priority ?? 10 }] });
    else if (record.type === 'CNAME') dns.add(fqdn, { CNAME: [record.value] });
    else dns.add(fqdn, { TXT: [record.value] });
  }
}
