// The only reader of process.env (and of the command line). Parsed once at start, validated, frozen: a
// bad value stops start-up with one line that names the variable.
import { createPublicKey } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism, hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';

/** What a process runs: the HTTP API, the workers, the SMTP listeners; `--role all` is every one. */
export type RolePart = 'api' | 'worker' | 'smtp';
export type Role = ReadonlySet<RolePart>;

/** capture: stored, not sent; relay: through SMTP_URL; direct: to each recipient domain's MX. */
export type DeliveryMode = 'capture' | 'relay' | 'direct';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly apiKey: string | undefined;
  /** MAILROOM_ADMIN_KEY: manages projects at /projects, reads no project's data (docs/projects.md). */
  readonly adminKey: string | undefined;
  readonly publicUrl: string;
  readonly smtpUrl: string | undefined;
  readonly deliveryMode: DeliveryMode;
  /** Refuse a `from` whose domain is not verified (default: on in direct mode only). */
  readonly requireVerifiedDomain: boolean;
  /** DNS servers (`ip` or `ip:port`) for domain verification and MX lookups; undefined: the system's. */
  readonly dnsServers: string[] | undefined;
  /** This mail server's public host name: EHLO in direct mode, and the MX/SPF target of domain records. */
  readonly mailHostname: string;
  /** The domain of VERP bounce addresses for senders not on a Mailroom domain (default: mailHostname). */
  readonly bounceDomain: string;
  /** The addresses mail leaves from, for the deliverability checks; undefined: those of mailHostname. */
  readonly sendingIps: readonly string[] | undefined;
  /** The DNS blocklist zones the deliverability check asks about each sending address. */
  readonly dnsblZones: readonly string[];
  /** MAIL FROM through the relay: each recipient's VERP address, the message's From address, or this address. */
  readonly relayEnvelopeSender: 'verp' | 'sender' | { readonly address: string };
  readonly direct: {
    /** The port of recipients' mail servers (25; another for tests). */
    readonly port: number;
    /** Connections open at once to one destination server. */
    readonly maxConnections: number;
  };
  /** Messages per second by destination (delivery/throttle.ts); empty: no limit. */
  readonly throttle: readonly ThrottleRule[];
  /** Recipient domains' MTA-STS policies in direct mode (delivery/mta-sts.ts). */
  readonly mtaSts: {
    /** The HTTPS port of `mta-sts.<domain>` (443; another for tests). */
    readonly port: number;
    /** Policy hosts and TLS report (https:) endpoints may be on private addresses (tests, a lab network). */
    readonly allowPrivate: boolean;
  };
  /** A PEM file of CAs trusted beside the system's for outbound TLS that checks certificates (MTA-STS, TLS reports); tests. */
  readonly outboundCaFile: string | undefined;
  /** The daily TLS reports (RFC 8460) sent to recipient domains in direct mode. */
  readonly tlsRpt: {
    /** MAILROOM_TLSRPT=off: none recorded, none sent. */
    readonly enabled: boolean;
    /** The From of reports sent by mail (on a Mailroom domain, which signs them); undefined: mailto: reports are not sent. */
    readonly from: string | undefined;
    /** The report's organization-name. */
    readonly organization: string;
  };
  readonly http: {
    /** How long a client may take to send a whole request, body included. */
    readonly requestTimeoutMs: number;
    /** Requests with a body over 1 MB served at once; more get 429 and retry. */
    readonly maxLargeBodies: number;
    /** Requests per second per API key (MAILROOM_RATE_LIMIT), unless the key sets its own; undefined: none. */
    readonly rateLimit: number | undefined;
    /** Requests per second from one client address to the public routes (http/client-limits.ts); 0: none. */
    readonly publicRateLimit: number;
    /** Failed API keys and dashboard sign-ins from one client address within 10 minutes before it is refused. */
    readonly maxAuthFailures: number;
    /** Fastify's trustProxy: which proxies' X-Forwarded-For names the client (false: none, the socket's address). */
    readonly trustProxy: boolean | string[];
  };
  /** The inbound SMTP server (receiving): undefined port, none. */
  readonly inbound: {
    readonly port: number | undefined;
    readonly host: string;
    /** A message over this many bytes is refused (552). */
    readonly maxMessageBytes: number;
    readonly maxRecipients: number;
    /** Connections open at once from one client address. */
    readonly maxClientConnections: number;
  };
  /** SMTP submission (an API key as password): undefined ports, none. */
  readonly submission: {
    /** STARTTLS (587 in production). */
    readonly port: number | undefined;
    /** Implicit TLS (465 in production). */
    readonly tlsPort: number | undefined;
    readonly host: string;
    /** AUTH before STARTTLS (a password in clear): for loopback development only. */
    readonly allowInsecureAuth: boolean;
    /** Connections open at once from one client address. */
    readonly maxClientConnections: number;
    /** Failed AUTH attempts from one client address within 10 minutes before it is refused. */
    readonly maxAuthFailures: number;
  };
  /** How both SMTP servers read DATA (smtp/data-reader.ts). */
  readonly smtpData: {
    /** The whole message must arrive within this long, time spent waiting for a large-message turn aside. */
    readonly timeoutMs: number;
    /** Bytes a second a client must send, over each 30 s of DATA; 0: none. */
    readonly minBytesPerSecond: number;
  };
  /** The TLS pair the SMTP listeners present (PEM files); undefined: a self-signed pair, made once and kept. */
  readonly smtpTls: { readonly certFile: string; readonly keyFile: string } | undefined;
  /** The port (on HOST) of the SMTP listeners' `GET /health` and `GET /metrics`; undefined: none. */
  readonly smtpHealthPort: number | undefined;
  readonly logLevel: string;
  readonly allowPrivateAttachmentUrls: boolean;
  /** When a domain's marketing mail is paused (domain/deliverability/guards.ts). */
  readonly guards: {
    /** Messages sent in the last 24 hours before a rate counts. */
    readonly minSends: number;
    /** Bounced / sent above this pauses. */
    readonly bounceRate: number;
    /** Complained / delivered above this pauses. */
    readonly complaintRate: number;
    /** How long paused mail waits before it looks again. */
    readonly recheckMs: number;
  };
  readonly webhooks: {
    /** An endpoint whose every delivery failed for this long is disabled. */
    readonly disableAfterMs: number;
  };
  /** Accept webhook endpoints on loopback, private and link-local addresses, and deliver to them. */
  readonly allowPrivateWebhookUrls: boolean;
  /** Keys Mailroom's own encryption and signatures; see secret.ts for the default. */
  readonly secret: string | undefined;
  /** Days the bodies of finished emails, received emails and webhook attempts are kept; 0: forever. */
  readonly retentionDays: number;
  /** The API's request logs (GET /logs). */
  readonly apiLogs: {
    /** MAILROOM_API_LOGS: off, no request is recorded. */
    readonly enabled: boolean;
    /** The most of each body a log keeps, in bytes (MAILROOM_LOG_BODY_BYTES); 0: none. */
    readonly bodyBytes: number;
  };
  /** Providers' bounce, complaint and delivery notifications (POST /feedback/<provider>); each undefined: its route answers 404. */
  readonly feedback: {
    readonly ses: FeedbackSes | undefined;
    /** Postmark's webhook credentials, `user:password` (HTTP basic auth, in the URL registered with it). */
    readonly postmark: string | undefined;
    /** Mailgun's HTTP webhook signing key. */
    readonly mailgun: string | undefined;
    /** SendGrid's Signed Event Webhook verification key: a base64 DER (SPKI) ECDSA P-256 public key. */
    readonly sendgrid: string | undefined;
  };
  readonly worker: {
    readonly concurrency: number;
    readonly maxAttempts: number;
    readonly pollMs: number;
    readonly lockTimeoutMs: number;
    readonly shutdownTimeoutMs: number;
    readonly composeThreads: number;
    /** Emails with over 1 MB of attachments composed and sent at once; the others wait their turn. */
    readonly maxLargeMessages: number;
    /** The port of a worker's `GET /health` (on HOST); undefined: none. */
    readonly healthPort: number | undefined;
  };
}

/** Amazon SES notifications through SNS. */
export interface FeedbackSes {
  /** The topic ARNs whose messages are taken; `*`: any topic. */
  readonly topics: readonly string[] | '*';
  /** The one host (`host[:port]`) SNS certificates and subscription URLs may come from; undefined: `sns.<region>.amazonaws.com`. */
  readonly certHost: string | undefined;
  /** A PEM file of a CA trusted beside the system's to fetch from that host (tests). */
  readonly caFile: string | undefined;
}

/** The most requests per second a key may be given, by MAILROOM_RATE_LIMIT or its own `rate_limit`. */
export const MAX_RATE_LIMIT = 1_000_000;

/** A rate for the destinations a name matches (itself and its subdomains), or for each other one (`*`). */
export interface ThrottleRule {
  readonly name: string;
  readonly perSecond: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function fail(name: string, why: string): never {
  throw new ConfigError(`Invalid ${name}: ${why}`);
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    fail(name, `expected a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** A rate written as a fraction (0.04) or a percentage (4%), from 0 to 1. */
function rate(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const percent = raw.endsWith('%');
  const value = Number(percent ? raw.slice(0, -1) : raw) / (percent ? 100 : 1);
  if (raw === '%' || !Number.isFinite(value) || value < 0 || value > 1) fail(name, `expected a rate such as 0.04 or 4%, got "${raw}"`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  return fail(name, `expected true or false, got "${raw}"`);
}

/** on/off (or true/false). */
function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1'].includes(raw)) return true;
  if (['off', 'false', '0'].includes(raw)) return false;
  return fail(name, `expected on or off, got "${raw}"`);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return fail(name, `"${raw}" is not a URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    fail(name, `expected a ${protocols.map((p) => p.replace(':', '://')).join(' or ')} URL`);
  }
  return raw;
}

const DEFAULT_DATABASE = './data/mailroom.db';

function databaseUrl(env: Env): string {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return DEFAULT_DATABASE;
  if (/^postgres(ql)?:\/\//.test(raw)) return url(env, 'DATABASE_URL', ['postgres:', 'postgresql:'])!;
  if (raw.includes('://')) fail('DATABASE_URL', 'expected a postgres:// URL or a SQLite file path');
  // A first start creates the default folder only: a missing folder elsewhere is a typo or a volume
  // not mounted, and a fresh database there would look like lost mail.
  const folder = dirname(raw);
  if (raw !== ':memory:' && resolve(folder) !== resolve(dirname(DEFAULT_DATABASE)) && !existsSync(folder)) {
    fail('DATABASE_URL', `the folder ${folder} does not exist (only the default ./data is created)`);
  }
  return raw;
}

function apiKey(env: Env, name: 'MAILROOM_API_KEY' | 'MAILROOM_ADMIN_KEY'): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^re_[A-Za-z0-9_-]{32,}$/.test(raw)) {
    fail(name, 'expected "re_" followed by at least 32 letters, digits, "_" or "-"');
  }
  return raw;
}

/** The admin credential manages projects and reads none: it cannot also be a project's key. */
function adminKey(env: Env): string | undefined {
  const raw = apiKey(env, 'MAILROOM_ADMIN_KEY');
  if (raw !== undefined && raw === env.MAILROOM_API_KEY) fail('MAILROOM_ADMIN_KEY', 'expected a token other than MAILROOM_API_KEY');
  return raw;
}

function secret(env: Env): string | undefined {
  const raw = env.MAILROOM_SECRET;
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 32) fail('MAILROOM_SECRET', 'expected at least 32 characters (e.g. `openssl rand -base64 48`)');
  return raw;
}

const MODES: DeliveryMode[] = ['capture', 'relay', 'direct'];

// The mode follows SMTP_URL unless named; a named mode that contradicts SMTP_URL is refused.
function deliveryMode(env: Env, smtpUrl: string | undefined): DeliveryMode {
  const raw = env.DELIVERY_MODE;
  if (raw === undefined || raw === '') return smtpUrl ? 'relay' : 'capture';
  const mode = MODES.find((m) => m === raw) ?? fail('DELIVERY_MODE', `expected capture, relay or direct, got "${raw}"`);
  if (mode === 'relay' && !smtpUrl) fail('DELIVERY_MODE', 'relay mode needs SMTP_URL');
  if (mode !== 'relay' && smtpUrl) fail('DELIVERY_MODE', `${mode} mode does not use SMTP_URL: unset SMTP_URL or choose relay`);
  return mode;
}

/**
 * RELAY_ENVELOPE_SENDER: `sender` (the default: the message's From address, which every provider
 * accepts), `verp`, `login` (SMTP_URL's user, as Google Workspace and Microsoft 365 require) or an address.
 */
function relayEnvelopeSender(env: Env, mode: DeliveryMode, smtpUrl: string | undefined): Config['relayEnvelopeSender'] {
  const raw = env.RELAY_ENVELOPE_SENDER;
  if (raw === undefined || raw === '') return 'sender';
  if (mode !== 'relay') fail('RELAY_ENVELOPE_SENDER', `applies to relay mode only (this is ${mode} mode)`);
  if (raw === 'sender' || raw === 'verp') return raw;
  const address = raw === 'login' ? decodeURIComponent(new URL(smtpUrl!).username) : raw;
  if (!/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/.test(address)) {
    fail('RELAY_ENVELOPE_SENDER', raw === 'login' ? "`login` needs SMTP_URL's user to be an email address" : `expected sender, verp, login or an email address, got "${raw}"`);
  }
  return Object.freeze({ address });
}

/** `1.1.1.1`, `1.1.1.1:53`, `::1` or `[::1]:53`, comma-separated: what node:dns setServers takes. */
function dnsServers(env: Env): string[] | undefined {
  const raw = env.DNS_SERVERS;
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw.split(',').map((entry) => {
    const server = entry.trim();
    const match = server.match(/^\[([^\]]+)\]:(\d+)$/) ?? server.match(/^([^:]+):(\d+)$/) ?? [server, server, '53'];
    const port = Number(match[2]);
    if (!isIP(match[1]!) || !(port >= 1 && port <= 65535)) {
      fail('DNS_SERVERS', `expected comma-separated IP addresses with optional ports (1.1.1.1:53, [::1]:53), got "${server}"`);
    }
    return server;
  });
}

/** MAILROOM_SENDING_IPS: comma-separated IPv4 and IPv6 addresses. */
function sendingIps(env: Env): string[] | undefined {
  const raw = env.MAILROOM_SENDING_IPS?.trim();
  if (!raw) return undefined;
  const ips = raw.split(',').map((entry) => entry.trim());
  const bad = ips.find((ip) => isIP(ip) === 0);
  if (bad !== undefined) fail('MAILROOM_SENDING_IPS', `expected comma-separated IP addresses (203.0.113.5, 2001:db8::5), got "${bad}"`);
  return ips;
}

/** Public blocklists that answer anyone's queries for free at a sender's volume (docs/deliverability.md). */
export const DEFAULT_DNSBL_ZONES = ['zen.spamhaus.org', 'bl.spamcop.net', 'psbl.surriel.com'];

/** MAILROOM_DNSBL_ZONES: comma-separated zones, or `none`. */
function dnsblZones(env: Env): string[] {
  const raw = env.MAILROOM_DNSBL_ZONES?.trim();
  if (!raw) return DEFAULT_DNSBL_ZONES;
  if (raw === 'none') return [];
  return raw.split(',').map((entry) => {
    const zone = hostName({ MAILROOM_DNSBL_ZONES: entry.trim() }, 'MAILROOM_DNSBL_ZONES', '');
    return zone || fail('MAILROOM_DNSBL_ZONES', `expected comma-separated zones such as zen.spamhaus.org, or none, got "${raw}"`);
  });
}

/**
 * In direct mode, what a destination server (an MX host) gets when DELIVERY_THROTTLE names no `*`:
 * polite to a small server, and above what a new sending address should send one provider (36,000 an hour).
 */
export const DEFAULT_DIRECT_THROTTLE: ThrottleRule = { name: '*', perSecond: 10 };

/**
 * In direct mode, the big mailbox providers' MX hosts by name suffix, each provider one budget, unless
 * DELIVERY_THROTTLE names the same suffix. None publishes a rate: all ask for a steady one that grows
 * slowly and defer a burst (docs/deliverability.md): so below what a new address would burst, Yahoo lowest.
 */
export const PROVIDER_THROTTLES: readonly ThrottleRule[] = [
  { name: 'google.com', perSecond: 20 }, // Gmail and Google Workspace: *.l.google.com
  { name: 'googlemail.com', perSecond: 20 }, // Workspace's backup MX hosts
  { name: 'outlook.com', perSecond: 10 }, // Outlook.com, Hotmail and Microsoft 365: *.protection.outlook.com
  { name: 'yahoodns.net', perSecond: 5 }, // Yahoo and AOL: *.yahoodns.net
];

const PER_UNIT: Record<string, number> = { s: 1, m: 60, h: 3600 };

/**
 * `google.com=20/s,outlook.com=600/m,*=50/s`; in direct mode PROVIDER_THROTTLES fill in the suffixes it
 * does not name, and `*` defaults to DEFAULT_DIRECT_THROTTLE.
 */
function throttle(env: Env, mode: DeliveryMode): ThrottleRule[] {
  const raw = env.DELIVERY_THROTTLE?.trim() ?? '';
  const usage = 'expected comma-separated destination=rate such as "gmail.com=20/s,*=50/s" (a rate per s, m or h)';
  const rules: ThrottleRule[] = [];
  for (const entry of raw === '' ? [] : raw.split(',')) {
    const match = entry.trim().match(/^([^=\s]+)\s*=\s*(\d+(?:\.\d+)?)\/([smh])$/);
    const name = match?.[1]!.toLowerCase().replace(/\.$/, '');
    const perSecond = match ? Number(match[2]) / PER_UNIT[match[3]!]! : 0;
    if (!match || !(perSecond > 0) || (name !== '*' && !/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(name!))) fail('DELIVERY_THROTTLE', `${usage}, got "${entry.trim()}"`);
    if (rules.some((rule) => rule.name === name)) fail('DELIVERY_THROTTLE', `${name} is named twice`);
    rules.push({ name: name!, perSecond });
  }
  if (mode !== 'direct') return rules;
  const named = rules.filter((rule) => rule.name !== '*');
  const others = rules.find((rule) => rule.name === '*') ?? DEFAULT_DIRECT_THROTTLE;
  return [...named, ...PROVIDER_THROTTLES.filter((p) => !named.some((rule) => rule.name === p.name)), others];
}

/** A readable file's path, or undefined when unset. */
function file(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!existsSync(raw)) fail(name, `the file ${raw} does not exist`);
  return raw;
}

/** MAILROOM_TLSRPT_FROM: a bare address. */
function tlsRptFrom(env: Env): string | undefined {
  const raw = env.MAILROOM_TLSRPT_FROM?.trim();
  if (!raw) return undefined;
  if (!/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/.test(raw)) fail('MAILROOM_TLSRPT_FROM', `expected an email address such as tls-reports@example.com, got "${raw}"`);
  return raw;
}

/** A host name variable, lowercased; `fallback` when unset. */
function hostName(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(raw)) {
    fail(name, `expected a host name such as mail.example.com, got "${raw}"`);
  }
  return raw.toLowerCase();
}

/** SMTP_TLS_CERT and SMTP_TLS_KEY: both or neither, each a readable file. */
function smtpTls(env: Env): Config['smtpTls'] {
  const certFile = env.SMTP_TLS_CERT || undefined;
  const keyFile = env.SMTP_TLS_KEY || undefined;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) fail(certFile ? 'SMTP_TLS_KEY' : 'SMTP_TLS_CERT', 'SMTP_TLS_CERT and SMTP_TLS_KEY go together: set both PEM files, or neither');
  for (const [name, file] of [['SMTP_TLS_CERT', certFile], ['SMTP_TLS_KEY', keyFile]] as const) {
    if (!existsSync(file)) fail(name, `the file ${file} does not exist`);
  }
  return Object.freeze({ certFile, keyFile });
}

// The names proxy-addr knows for the private ranges, beside addresses and CIDR blocks.
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * MAILROOM_TRUST_PROXY: true, false, or comma-separated addresses, CIDR blocks and range names. (Fastify
 * turns a hop count into trusting no one, so none is taken.)
 */
function trustProxy(env: Env): boolean | string[] {
  const raw = env.MAILROOM_TRUST_PROXY?.trim();
  if (!raw || raw === 'false') return false;
  if (raw === 'true') return true;
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    const validBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!PROXY_RANGES.includes(entry) && (family === 0 || !validBits || rest.length > 0)) {
      fail('MAILROOM_TRUST_PROXY', `expected true, false, or comma-separated addresses, CIDR blocks, loopback, linklocal or uniquelocal, got "${entry}"`);
    }
  }
  return entries;
}

/** FEEDBACK_SES_TOPICS turns the SES route on: `*`, or the comma-separated topic ARNs it takes. */
function feedbackSes(env: Env): FeedbackSes | undefined {
  const raw = env.FEEDBACK_SES_TOPICS?.trim();
  if (!raw) return undefined;
  const topics: string[] | '*' = raw === '*' ? '*' : raw.split(',').map((entry) => entry.trim());
  if (topics !== '*' && topics.some((arn) => !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}$/.test(arn))) {
    fail('FEEDBACK_SES_TOPICS', `expected * or comma-separated SNS topic ARNs (arn:aws:sns:us-east-1:123456789012:ses-feedback), got "${raw}"`);
  }
  const certHost = env.FEEDBACK_SNS_HOST || undefined;
  if (certHost !== undefined && !/^[a-z0-9.-]+(:\d{1,5})?$/i.test(certHost)) fail('FEEDBACK_SNS_HOST', `expected a host or host:port, got "${certHost}"`);
  const caFile = env.FEEDBACK_SNS_CA || undefined;
  if (caFile !== undefined && !existsSync(caFile)) fail('FEEDBACK_SNS_CA', `the file ${caFile} does not exist`);
  return Object.freeze({ topics: topics === '*' ? topics : Object.freeze(topics), certHost: certHost?.toLowerCase(), caFile });
}

/** A secret setting: unset or empty is none; a value shorter than `min` is a mistake (never echoed). */
function secretSetting(env: Env, name: string, min: number, shape?: RegExp, expected?: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < min || (shape && !shape.test(raw))) fail(name, expected ?? `expected at least ${min} characters`);
  return raw;
}

/** SendGrid's verification key: base64 of a DER public key, as its settings page shows it. */
function sendgridKey(env: Env): string | undefined {
  const raw = secretSetting(env, 'FEEDBACK_SENDGRID_KEY', 40, /^[A-Za-z0-9+/=\s]+$/, 'expected the base64 verification key SendGrid shows');
  if (raw === undefined) return undefined;
  try {
    const key = createPublicKey({ key: Buffer.from(raw, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ec') fail('FEEDBACK_SENDGRID_KEY', 'expected an ECDSA public key');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    fail('FEEDBACK_SENDGRID_KEY', 'expected the base64 verification key SendGrid shows (a DER public key)');
  }
  return raw.replace(/\s+/g, '');
}

function logLevel(env: Env): string {
  const raw = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(raw)) fail('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}`);
  return raw;
}

/** Reads and validates the configuration; throws ConfigError naming the first bad variable. */
export function readConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const publicUrl = url(env, 'MAILROOM_PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  const smtpUrl = url(env, 'SMTP_URL', ['smtp:', 'smtps:']);
  const mode = deliveryMode(env, smtpUrl);
  const host = env.HOST || '0.0.0.0';
  const mailHostname = hostName(env, 'MAILROOM_HOSTNAME', hostname());
  return Object.freeze({
    port,
    host,
    databaseUrl: databaseUrl(env),
    apiKey: apiKey(env, 'MAILROOM_API_KEY'),
    adminKey: adminKey(env),
    publicUrl: publicUrl.replace(/\/+$/, ''),
    smtpUrl,
    deliveryMode: mode,
    requireVerifiedDomain: boolean(env, 'MAILROOM_REQUIRE_VERIFIED_DOMAIN', mode === 'direct'),
    dnsServers: dnsServers(env),
    mailHostname,
    bounceDomain: hostName(env, 'MAILROOM_BOUNCE_DOMAIN', mailHostname),
    sendingIps: Object.freeze(sendingIps(env)),
    dnsblZones: Object.freeze(dnsblZones(env)),
    relayEnvelopeSender: relayEnvelopeSender(env, mode, smtpUrl),
    direct: Object.freeze({
      port: integer(env, 'DIRECT_SMTP_PORT', 25, 1, 65535),
      maxConnections: integer(env, 'DIRECT_MAX_CONNECTIONS', 5, 1, 100),
    }),
    throttle: Object.freeze(throttle(env, mode)),
    mtaSts: Object.freeze({
      port: integer(env, 'MAILROOM_MTA_STS_PORT', 443, 1, 65535),
      allowPrivate: boolean(env, 'MAILROOM_ALLOW_PRIVATE_TLS_HOSTS', false),
    }),
    outboundCaFile: file(env, 'MAILROOM_OUTBOUND_CA'),
    tlsRpt: Object.freeze({
      enabled: onOff(env, 'MAILROOM_TLSRPT', true),
      from: tlsRptFrom(env),
      organization: env.MAILROOM_TLSRPT_ORG?.trim() || mailHostname,
    }),
    http: Object.freeze({
      requestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 120_000, 1000, 3_600_000),
      maxLargeBodies: integer(env, 'HTTP_MAX_LARGE_BODIES', 2, 1, 1000),
      rateLimit: env.MAILROOM_RATE_LIMIT ? integer(env, 'MAILROOM_RATE_LIMIT', 0, 1, MAX_RATE_LIMIT) : undefined,
      publicRateLimit: integer(env, 'MAILROOM_PUBLIC_RATE_LIMIT', 50, 0, MAX_RATE_LIMIT),
      maxAuthFailures: integer(env, 'MAILROOM_MAX_AUTH_FAILURES', 20, 1, 10_000),
      trustProxy: trustProxy(env),
    }),
    inbound: Object.freeze({
      port: env.INBOUND_SMTP_PORT ? integer(env, 'INBOUND_SMTP_PORT', 0, 0, 65535) : undefined,
      host: env.INBOUND_SMTP_HOST || host,
      maxMessageBytes: integer(env, 'INBOUND_MAX_MESSAGE_BYTES', 40 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      maxRecipients: integer(env, 'INBOUND_MAX_RECIPIENTS', 100, 1, 10_000),
      maxClientConnections: integer(env, 'INBOUND_MAX_CONNECTIONS_PER_CLIENT', 10, 1, 10_000),
    }),
    submission: Object.freeze({
      port: env.SUBMISSION_PORT ? integer(env, 'SUBMISSION_PORT', 0, 0, 65535) : undefined,
      tlsPort: env.SUBMISSION_TLS_PORT ? integer(env, 'SUBMISSION_TLS_PORT', 0, 0, 65535) : undefined,
      host: env.SUBMISSION_HOST || host,
      allowInsecureAuth: boolean(env, 'SUBMISSION_ALLOW_INSECURE_AUTH', false),
      maxClientConnections: integer(env, 'SUBMISSION_MAX_CONNECTIONS_PER_CLIENT', 10, 1, 10_000),
      maxAuthFailures: integer(env, 'SUBMISSION_MAX_AUTH_FAILURES', 10, 1, 10_000),
    }),
    smtpData: Object.freeze({
      timeoutMs: integer(env, 'SMTP_DATA_TIMEOUT_MS', 600_000, 1000, 86_400_000),
      // Postfix's smtpd_min_data_rate: far below any real link, far above a client that trickles.
      minBytesPerSecond: integer(env, 'SMTP_DATA_MIN_RATE', 500, 0, 1_000_000_000),
    }),
    smtpTls: smtpTls(env),
    smtpHealthPort: env.SMTP_HEALTH_PORT ? integer(env, 'SMTP_HEALTH_PORT', 0, 1, 65535) : undefined,
    logLevel: logLevel(env),
    allowPrivateAttachmentUrls: boolean(env, 'MAILROOM_ALLOW_PRIVATE_ATTACHMENT_URLS', false),
    guards: Object.freeze({
      minSends: integer(env, 'MAILROOM_GUARD_MIN_SENDS', 200, 1, 1_000_000_000),
      bounceRate: rate(env, 'MAILROOM_GUARD_BOUNCE_RATE', 0.04),
      complaintRate: rate(env, 'MAILROOM_GUARD_COMPLAINT_RATE', 0.003),
      recheckMs: integer(env, 'MAILROOM_GUARD_RECHECK_MS', 60_000, 100, 86_400_000),
    }),
    webhooks: Object.freeze({ disableAfterMs: integer(env, 'WEBHOOK_DISABLE_AFTER_DAYS', 5, 1, 365) * 86_400_000 }),
    allowPrivateWebhookUrls: boolean(env, 'MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS', false),
    secret: secret(env),
    retentionDays: integer(env, 'MAILROOM_RETENTION_DAYS', 30, 0, 36_500),
    apiLogs: Object.freeze({
      enabled: boolean(env, 'MAILROOM_API_LOGS', true),
      bodyBytes: integer(env, 'MAILROOM_LOG_BODY_BYTES', 10 * 1024, 0, 1024 * 1024),
    }),
    feedback: Object.freeze({
      ses: feedbackSes(env),
      postmark: secretSetting(env, 'FEEDBACK_POSTMARK_AUTH', 3, /^[^:]+:.+$/, 'expected user:password'),
      mailgun: secretSetting(env, 'FEEDBACK_MAILGUN_KEY', 16),
      sendgrid: sendgridKey(env),
    }),
    worker: Object.freeze({
      concurrency: integer(env, 'WORKER_CONCURRENCY', 128, 1, 1000),
      maxAttempts: integer(env, 'WORKER_MAX_ATTEMPTS', 21, 1, 100),
      pollMs: integer(env, 'WORKER_POLL_MS', 1000, 10, 60_000),
      lockTimeoutMs: integer(env, 'WORKER_LOCK_TIMEOUT_MS', 300_000, 1000, 86_400_000),
      shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
      composeThreads: integer(env, 'COMPOSE_THREADS', Math.max(1, availableParallelism() - 1), 0, 64),
      maxLargeMessages: integer(env, 'WORKER_MAX_LARGE_MESSAGES', 2, 1, 1000),
      healthPort: env.WORKER_HEALTH_PORT ? integer(env, 'WORKER_HEALTH_PORT', 0, 1, 65535) : undefined,
    }),
  });
}

const ROLE_USAGE = 'the only option is --role all, or a comma-separated list of api, worker and smtp';
const PARTS: RolePart[] = ['api', 'worker', 'smtp'];

/**
 * The role named on the command line: `--role all` (the default) or a list such as `api,worker` or
 * `smtp`; anything else is refused by name.
 */
export function readRole(args: string[]): Role {
  const { tokens } = parseArgs({ args, options: { role: { type: 'string' } }, strict: false, allowPositionals: true, tokens: true });
  let role = 'all';
  for (const token of tokens) {
    if (token.kind === 'positional') throw new ConfigError(`Unexpected argument "${token.value}": ${ROLE_USAGE}`);
    if (token.kind === 'option' && token.name !== 'role') throw new ConfigError(`Unknown option ${token.rawName}: ${ROLE_USAGE}`);
    if (token.kind === 'option') role = token.value ?? '';
  }
  if (role === 'all') return new Set(PARTS);
  const parts = role.split(',').map((part) => part.trim());
  const unknown = parts.find((part) => !PARTS.includes(part as RolePart));
  if (unknown !== undefined) throw new ConfigError(`Invalid --role: expected all, or a comma-separated list of api, worker and smtp, got "${role}"`);
  return new Set(parts as RolePart[]);
}

/** The role as its name is written: `all`, or its parts in a fixed order. */
export const roleName = (role: Role): string => (role.size === PARTS.length ? 'all' : PARTS.filter((part) => role.has(part)).join(','));
