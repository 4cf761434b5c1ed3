import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// mta_sts_policies: recipient domains' MTA-STS policies (RFC 8461), kept for their max_age and shared by
// every worker; one row a domain. tls_session_counts: TLS sessions in direct mode by UTC day, recipient
// domain and RFC 8460 result (a failure's MX host and address beside it), added up as they come.
// tls_reports: the (day, domain) TLS reports made, one each whatever happens: its key is the guard.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mta_sts_policies')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('policy_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('mx', 'text', (c) => c.notNull())
    .addColumn('max_age', 'bigint', (c) => c.notNull())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('fetched_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('tls_session_counts')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('mx_host', 'text', (c) => c.notNull())
    .addColumn('receiving_ip', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('tls_session_counts_pk', ['day', 'domain', 'result', 'mx_host', 'receiving_ip'])
    .execute();
  await db.schema
    .createTable('tls_reports')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('report_id', 'text', (c) => c.notNull())
    .addColumn('rua', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('tls_reports_pk', ['day', 'domain'])
    .execute();
}
