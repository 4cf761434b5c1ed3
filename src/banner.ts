import { roleName, type Config, type Role } from './config.ts';
import type { Context } from './context.ts';
import { selfSignedWarning } from './smtp/tls.ts';

/** What a start brought up. */
export interface Started {
  role: Role;
  /** host:port the API listens on, for the roles that serve it. */
  listen?: string;
  /** host:port the inbound SMTP server listens on (INBOUND_SMTP_PORT). */
  inbound?: string;
  /** host:port of SMTP submission: STARTTLS (SUBMISSION_PORT) and implicit TLS (SUBMISSION_TLS_PORT). */
  submission?: { starttls?: string; implicit?: string };
  /** The SMTP listeners present a self-signed certificate (no SMTP_TLS_CERT). */
  selfSigned?: boolean;
  /** host:port of the worker's health checks (WORKER_HEALTH_PORT). */
  health?: string;
  /** host:port of the SMTP listeners' health checks and metrics (SMTP_HEALTH_PORT). */
  smtpHealth?: string;
  /** A full-access API key this start created: shown once, to a person, never logged. */
  token?: string;
}

/** How the worker delivers; a relay by its host and port only, never SMTP_URL's credentials. */
function describeMode(config: Config): string {
  switch (config.deliveryMode) {
    case 'capture':
      return 'capture mode: mail is stored, not sent';
    case 'relay':
      return `relay mode: mail goes through ${new URL(config.smtpUrl!).host}`;
    case 'direct':
      return `direct mode: mail goes to recipients' mail servers, as ${config.mailHostname}`;
  }
}

/**
 * The name domain records are built from (and, in direct mode, the EHLO name) should be public: warn
 * about one without a dot (a machine's own name) wherever it matters, that is unless mail is only
 * captured.
 */
function hostnameWarning(config: Config, role: Role): string | undefined {
  if (config.mailHostname.includes('.') || (role.has('worker') && config.deliveryMode === 'capture')) return undefined;
  const ehlo = config.deliveryMode === 'direct' && role.has('worker') ? ', and this server introduces itself with it (EHLO)' : '';
  return `MAILROOM_HOSTNAME is "${config.mailHostname}", not a fully qualified name: your domains' MX and SPF records name it${ehlo}; set it to this server's public name, such as mail.example.com`;
}

/** Where applications submit mail, and how they sign in. */
function submissionLine(config: Config, ports: NonNullable<Started['submission']>): string {
  const where = [ports.starttls && `${ports.starttls} (STARTTLS)`, ports.implicit && `${ports.implicit} (TLS)`].filter(Boolean).join(' and ');
  const insecure = config.submission.allowInsecureAuth ? '; AUTH allowed before STARTTLS (SUBMISSION_ALLOW_INSECURE_AUTH)' : '';
  return `SMTP submission on ${where}: user "resend", password an API key${insecure}`;
}

/** How to make another key, shown when a start made none: a lost key cannot be shown again. */
export const KEYS_LINE = 'API keys: `npm run keys -- create --name <name>` creates another (shown once), on this DATABASE_URL';

/**
 * Says once what this process does: a few lines for a person (on stdout at a terminal, above the log
 * lines, else on stderr, so that stdout carries only JSON log lines), and one log line with the same
 * facts but never the key.
 */
export function announce(ctx: Context, started: Started): void {
  const { config, log } = ctx;
  const { role, listen, inbound, submission, selfSigned, health, smtpHealth, token } = started;
  const worker = role.has('worker');
  const lines = [
    listen && worker ? `Mailroom is listening on ${config.publicUrl} (${describeMode(config)})` : undefined,
    listen && !worker ? `Mailroom API is listening on ${config.publicUrl}: it accepts and stores mail, and workers (--role worker) deliver it` : undefined,
    !listen && worker ? `Mailroom worker is running (${describeMode(config)})` : undefined,
    listen ? `Dashboard: ${config.publicUrl}/dashboard (sign in with a full-access API key)` : undefined,
    inbound ? `Receiving mail over SMTP on ${inbound} for the domains with receiving enabled` : undefined,
    submission ? submissionLine(config, submission) : undefined,
    health ? `Worker health checks: GET http://${health}/health` : undefined,
    smtpHealth ? `SMTP health checks: GET http://${smtpHealth}/health` : undefined,
    listen && !token ? KEYS_LINE : undefined,
  ];
  const warnings = [hostnameWarning(config, role), selfSigned ? selfSignedWarning(config) : undefined].filter((w) => w !== undefined);
  for (const warning of warnings) lines.push(`Warning: ${warning}`);
  if (token) lines.push(`Created a full-access API key; it is shown only this once:\n\n  ${token}\n`);
  (process.stdout.isTTY ? process.stdout : process.stderr).write(`${lines.filter(Boolean).join('\n')}\n`);
  log.info(
    {
      role: roleName(role),
      ...(listen ? { listen } : {}),
      ...(inbound ? { inbound } : {}),
      ...(submission ? { submission } : {}),
      ...(worker ? { mode: config.deliveryMode } : {}),
      ...(worker && config.smtpUrl ? { relay: new URL(config.smtpUrl).host } : {}),
      ...(health ? { health } : {}),
      ...(smtpHealth ? { smtp_health: smtpHealth } : {}),
    },
    'mailroom started',
  );
  for (const warning of warnings) log.warn(warning);
}
