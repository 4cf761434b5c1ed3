import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// DMARC aggregate reports read from mail (domain/dmarc/): the address a domain takes them at, each
// report once (a reporter's org_name and report_id name it) with its rows; they go with their domain.
export async function up(db: Kysely<any>): Promise<void> {
  const { id } = columnTypes(db);
  await db.schema.alterTable('domains').addColumn('dmarc_report_address', 'text').execute();
  // The inbound server asks, for each recipient, whether it is a report address.
  await db.schema.createIndex('domains_dmarc_report_address').on('domains').column('dmarc_report_address').execute();
  await db.schema
    .createTable('dmarc_reports')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('domain_id', id, (c) => c.notNull().references('domains.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('org_name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('report_id', 'text', (c) => c.notNull())
    .addColumn('date_begin', 'text', (c) => c.notNull())
    .addColumn('date_end', 'text', (c) => c.notNull())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('messages', 'bigint', (c) => c.notNull())
    .addColumn('row_count', 'integer', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .execute();
  // A report resent (or sent to two addresses) is the same report.
  await db.schema.createIndex('dmarc_reports_org_report').unique().on('dmarc_reports').columns(['org_name', 'report_id']).execute();
  await db.schema.createIndex('dmarc_reports_domain').on('dmarc_reports').columns(['domain_id', 'date_end']).execute();
  await db.schema
    .createTable('dmarc_report_rows')
    .addColumn('dmarc_report_id', id, (c) => c.notNull().references('dmarc_reports.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('source_ip', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addColumn('disposition', 'text', (c) => c.notNull())
    .addColumn('dkim', 'text', (c) => c.notNull())
    .addColumn('spf', 'text', (c) => c.notNull())
    .addColumn('dkim_aligned', 'text', (c) => c.notNull())
    .addColumn('spf_aligned', 'text', (c) => c.notNull())
    .addColumn('header_from', 'text', (c) => c.notNull())
    .addColumn('envelope_from', 'text')
    .addColumn('auth_results', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('dmarc_report_rows_pk', ['dmarc_report_id', 'position'])
    .execute();
}
