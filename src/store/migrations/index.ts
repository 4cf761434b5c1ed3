import { Migrator, sql, type DatabaseIntrospector, type Kysely, type Migration } from 'kysely';
import { isPostgres } from '../db.ts';
import * as init from './0001-init.ts';
import * as idempotency from './0002-idempotency.ts';
import * as contacts from './0003-contacts.ts';
import * as templates from './0004-templates.ts';
import * as domains from './0005-domains.ts';
import * as broadcasts from './0006-broadcasts.ts';
import * as workers from './0007-workers.ts';
import * as keyScopes from './0008-key-scopes.ts';
import * as webhooks from './0009-webhooks.ts';
import * as receiving from './0010-receiving.ts';
import * as suppressions from './0011-suppressions.ts';
import * as emailSources from './0012-email-sources.ts';
import * as dashboardSessions from './0013-dashboard-sessions.ts';
import * as sentMessages from './0014-sent-messages.ts';
import * as eventEmails from './0015-event-emails.ts';
import * as broadcastEmails from './0016-broadcast-emails.ts';
import * as engagement from './0017-engagement.ts';
import * as emailMetrics from './0018-email-metrics.ts';
import * as rateLimits from './0019-rate-limits.ts';
import * as retention from './0020-retention.ts';
import * as dailyLimits from './0021-daily-limits.ts';
import * as automations from './0022-automations.ts';
import * as apiLogs from './0023-api-logs.ts';
import * as throttles from './0024-throttles.ts';
import * as metricDeltas from './0025-metric-deltas.ts';
import * as trackingDomains from './0026-tracking-domains.ts';
import * as jobAttempts from './0027-job-attempts.ts';
import * as deliveryPaused from './0028-delivery-paused.ts';
import * as feedbackReceipts from './0029-feedback-receipts.ts';
import * as deliverability from './0030-deliverability.ts';
import * as sendingGuards from './0031-sending-guards.ts';
import * as warmup from './0032-warmup.ts';
import * as dmarcReports from './0033-dmarc-reports.ts';
import * as mtaStsTlsReports from './0034-mta-sts-tls-reports.ts';
import * as projects from './0035-projects.ts';
import * as adminSessions from './0036-admin-sessions.ts';
import * as metricsByProject from './0037-metrics-by-project.ts';
import * as projectSends from './0038-project-sends.ts';
import * as adminKeys from './0039-admin-keys.ts';
import * as lz4Bodies from './0040-lz4-bodies.ts';

// Forward-only, in order. Registered here explicitly rather than read from the folder at run time.
const migrations: Record<string, Migration> = {
  '0001-init': init,
  '0002-idempotency': idempotency,
  '0003-contacts': contacts,
  '0004-templates': templates,
  '0005-domains': domains,
  '0006-broadcasts': broadcasts,
  '0007-workers': workers,
  '0008-key-scopes': keyScopes,
  '0009-webhooks': webhooks,
  '0010-receiving': receiving,
  '0011-suppressions': suppressions,
  '0012-email-sources': emailSources,
  '0013-dashboard-sessions': dashboardSessions,
  '0014-sent-messages': sentMessages,
  '0015-event-emails': eventEmails,
  '0016-broadcast-emails': broadcastEmails,
  '0017-engagement': engagement,
  '0018-email-metrics': emailMetrics,
  '0019-rate-limits': rateLimits,
  '0020-retention': retention,
  '0021-daily-limits': dailyLimits,
  '0022-automations': automations,
  '0023-api-logs': apiLogs,
  '0024-throttles': throttles,
  '0025-metric-deltas': metricDeltas,
  '0026-tracking-domains': trackingDomains,
  '0027-job-attempts': jobAttempts,
  '0028-delivery-paused': deliveryPaused,
  '0029-feedback-receipts': feedbackReceipts,
  '0030-deliverability': deliverability,
  '0031-sending-guards': sendingGuards,
  '0032-warmup': warmup,
  '0033-dmarc-reports': dmarcReports,
  '0034-mta-sts-tls-reports': mtaStsTlsReports,
  '0035-projects': projects,
  '0036-admin-sessions': adminSessions,
  '0037-metrics-by-project': metricsByProject,
  '0038-project-sends': projectSends,
  '0039-admin-keys': adminKeys,
  '0040-lz4-bodies': lz4Bodies,
};

/**
 * Brings the schema up to date (or to the migration `target` names: upgrade tests fill a database as an
 * earlier version left it); Kysely's migration lock keeps concurrent starts safe.
 */
export async function migrate(db: Kysely<any>, target?: string): Promise<void> {
  // Kysely looks for its own tables in any schema unless told which: name the connection's schema,
  // so that databases with several schemas (one per tenant, or per test) each migrate on their own.
  const schema = isPostgres(db)
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]!.schema
    : undefined;
  const migrator = new Migrator({
    db: schema === undefined ? db : withSchemaIntrospection(db),
    migrationTableSchema: schema,
    provider: { getMigrations: async () => migrations },
  });
  const { error } = await (target === undefined ? migrator.migrateToLatest() : migrator.migrateTo(target));
  if (error) throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
}

/**
 * `db` whose introspection lists the tables of the connection's schema alone. Kysely's own reads every
 * schema and checks each one's privilege by name, so a schema dropped during that read (another tenant's,
 * another test's) fails the migration with 3F000.
 */
function withSchemaIntrospection(db: Kysely<any>): Kysely<any> {
  const introspection: DatabaseIntrospector = {
    getSchemas: async () => (await sql<{ name: string }>`select current_schema() as name`.execute(db)).rows,
    getTables: async () => {
      const { rows } = await sql<{ name: string; schema: string }>`
        select c.relname as name, n.nspname as schema from pg_catalog.pg_class c
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relkind in ('r', 'p')`.execute(db);
      return rows.map((row) => ({ ...row, isView: false, columns: [] }));
    },
    getMetadata: async () => ({ tables: await introspection.getTables() }),
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, property, target);
      // Kysely's methods read private fields, so they run on the instance itself, not on the proxy.
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
