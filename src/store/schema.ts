// Table types, in one place. Columns are snake_case so rows serialize without mapping. Public timestamps
// are text in Resend's format (see clock.ts); internal scheduling times are epoch milliseconds. Lists and
// objects are JSON text, booleans 0/1, so both dialects store and return the same values.

import type { Generated } from 'kysely';

export interface ApiKeyTable {
  id: string;
  /** The project the row belongs to (docs/projects.md). */
  project_id: string;
  name: string;
  token_hash: string;
  permission: 'full_access' | 'sending_access';
  domain_id: string | null;
  created_at: string;
  last_used_at: string | null;
  /** 1 for the key MAILROOM_API_KEY gives: a new value of the variable replaces it. */
  configured: number;
  /** Requests per second; null: MAILROOM_RATE_LIMIT. */
  rate_limit: number | null;
}

/** PostgreSQL: how much of each key's budget the API processes have taken in its current window. */
export interface RateLimitWindowTable {
  api_key_id: string;
  /** Epoch ms of the window's start. */
  window_start: number;
  /** Requests handed out in that window, across processes (it may pass the limit: see store/rate-limit-windows.ts). */
  taken: number;
}

/** PostgreSQL: how much of each destination's outbound rate the workers have taken in its current window. */
export interface ThrottleWindowTable {
  destination: string;
  /** Epoch ms of the window's start. */
  window_start: number;
  /** Messages handed out in that window, across processes (it may pass the limit, as rate_limit_windows). */
  taken: number;
}

/** PostgreSQL: the share of its rate a destination was cut to when it last pushed back (delivery/throttle.ts). */
export interface ThrottleSlowdownTable {
  destination: string;
  factor: number;
  /** Epoch ms; the rate recovers from `factor` from then on. */
  pushed_at: number;
}

export interface EmailTable {
  id: string;
  /** The project the row belongs to (docs/projects.md). */
  project_id: string;
  from: string;
  to: string;
  cc: string;
  bcc: string;
  reply_to: string;
  subject: string;
  headers: string | null;
  tags: string | null;
  message_id: string;
  scheduled_at: string | null;
  last_event: string;
  created_at: string;
  /** The template the email was sent with, if any. */
  template_id: string | null;
  topic_id: string | null;
  /** The broadcast the email belongs to, if any: its html, text and headers are rendered from it. */
  broadcast_id: string | null;
  /** JSON: the recipient's data a broadcast email is rendered with (Personalization). */
  personalization: string | null;
  /** When retention removed its bodies, attachments, source and sent message; null while they are kept. */
  body_removed_at: string | null;
  /** Why it waits for a later UTC day (`warmup` or `daily_limit`): its sending domain's cap; null otherwise. */
  waiting_reason: string | null;
  /** The domain whose cap it waits for, while its next attempt has not taken its slots. */
  waiting_domain: string | null;
}

/** The bodies live apart from the email row, so status updates rewrite a small row, not kilobytes. */
export interface EmailContentTable {
  email_id: string;
  html: string | null;
  text: string | null;
}

export interface EmailRecipientTable {
  email_id: string;
  address: string;
  status: string;
}

export interface EmailAttachmentTable {
  email_id: string;
  position: number;
  filename: string | null;
  content_type: string | null;
  content_id: string | null;
  content: Buffer;
}

export interface EventTable {
  id: string;
  /** The project the row belongs to (docs/projects.md). */
  project_id: string;
  /** A webhook event type: `email.delivered`, `contact.created`... */
  type: string;
  created_at: string;
  /** The payload's `data`, JSON. */
  data: string;
  /** The email the event is about (`data.email_id`), if any. */
  email_id: string | null;
}

export type WebhookStatus = 'enabled' | 'disabled';

export interface WebhookTable {
  id: string;
  /** The project the row belongs to (docs/projects.md). */
  project_id: string;
  endpoint: string;
  /** JSON array of event types. */
  events: string;
  status: WebhookStatus;
  disabled_reason: string | null;
  /** Sealed with MAILROOM_SECRET. */
  signing_secret: string;
  /** Epoch ms of the first failed attempt since the last success. */
  failing_since: number | null;
  created_at: string;
}

export type WebhookMessageStatus = 'pending' | 'attempting' | 'success' | 'failed';

export interface WebhookMessageTable {
  id: string;
  webhook_id: string;
  event_id: string;
  status: WebhookMessageStatus;
  next_attempt_at: string | null;
  created_at: string;
}

export interface WebhookAttemptTable {
  id: string;
  message_id: string;
  sent_at: string;
  http_status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** The first KB of the response body. */
  response: string | null;
}

export interface EmailEventTable {
  id: string;
  email_id: string;
  type: string;
  recipient: string | null;
  response: string | null;
  created_at: string;
  /** The link a click followed. */
  link: string | null;
  /** 1 for an open or click a bot made (response says why): kept, but counted nowhere. */
  bot: number;
}

/** The email metrics rollup: how many times `metric` happened in a 15-minute slot (domain/metrics/). */
export interface EmailMetricTable {
  project_id: string;
  /** Epoch ms of the slot's start (a multiple of 15 minutes, UTC). */
  slot: number;
  /** The sender's domain (lower-case ASCII); for `received`, the receiving domain. */
  domain: string;
  /** '' for an email of no broadcast. */
  broadcast_id: string;
  metric: string;
  count: number;
}

/** Increments of the rollup not folded into it yet (store/email-metrics.ts): a row per metric, slot, domain and broadcast of a transaction. */
export interface EmailMetricDeltaTable extends EmailMetricTable {
  id: Generated<number>;
}

/** The MIME source of an email submitted whole (SMTP): what is sent, in place of a composed message. */
export interface EmailSourceTable {
  email_id: string;
  raw: Buffer;
}

/** An email's message as last sent (composed, or as submitted, and signed), in every delivery mode. */
export interface SentMessageTable {
  email_id: string;
  raw: Buffer;
  created_at: string;
}

/** A bounce, complaint or delivery notice recorded, once (domain/outcomes/receipts.ts). */
export interface FeedbackReceiptTable {
  /** Who sent it: `ses`, `postmark`, `mailgun`, `sendgrid`, or `mail` (a DSN or ARF report by mail). */
  source: string;
  /** The source's id of it: SNS MessageId, Postmark ID, Mailgun event id, sg_event_id, a report's Message-ID. */
  receipt_id: string;
  /** The sender domain of the email it was about (lower-case). */
  domain: string;
  email_id: string;
  created_at: string;
}

/** The id a relay's 250 answer gave one recipient's message (domain/feedback/relay-ids.ts). */
export interface RelayMessageIdTable {
  provider_id: string;
  email_id: string;
  recipient: string;
}

export interface JobTable {
  id: string;
  task: string;
  /** Names the job for later changes (reschedule, cancel): unique while the job exists. */
  key: string | null;
  payload: string;
  run_at: number;
  attempts: number;
  locked_by: string | null;
  locked_at: number | null;
  last_error: string | null;
  created_at: number;
}

/** A running worker and when it last said so (epoch ms); jobs it holds are taken over once that is stale. */
export interface WorkerTable {
  id: string;
  heartbeat_at: number;
  /** Why its delivery is paused as a whole (Transport.paused), else null. */
  delivery_paused: string | null;
}

/** A request's answer, kept for 24 hours under its Idempotency-Key. */
export interface IdempotencyKeyTable {
  /** Keys are the API key's own: another API key's request never sees them. */
  api_key_id: string;
  endpoint: string;
  key: string;
  request_hash: string;
  response: string;
  expires_at: number;
}

export interface TemplateTable {
  id: string;
  project_id: string;
  alias: string | null;
  name: string;
  /** The version GET shows and PATCH edits. */
  current_version_id: string;
  /** The version sending uses; null until the template is first published. Never edited in place. */
  published_version_id: string | null;
  published_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface TemplateVersionTable {
  id: string;
  template_id: string;
  from: string | null;
  subject: string | null;
  /** JSON array of addresses. */
  reply_to: string | null;
  html: string;
  text: string | null;
  /** JSON array of {id, key, type, fallback_value, created_at, updated_at}. */
  variables: string;
  created_at: string;
}

/** Emails are stored lowercased, so that lookups and the unique index ignore case. */
export interface ContactTable {
  id: string;
  project_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: number;
  created_at: string;
}

export interface SegmentTable {
  id: string;
  project_id: string;
  name: string;
  created_at: string;
}

export interface SegmentContactTable {
  segment_id: string;
  contact_id: string;
}

export type Subscription = 'opt_in' | 'opt_out';

export interface TopicTable {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  default_subscription: Subscription;
  visibility: 'public' | 'private';
  created_at: string;
}

export interface ContactTopicTable {
  contact_id: string;
  topic_id: string;
  subscription: Subscription;
}

export interface ContactPropertyTable {
  id: string;
  project_id: string;
  key: string;
  type: 'string' | 'number';
  /** JSON: a string or a number, matching `type`; null when none. */
  fallback_value: string | null;
  created_at: string;
}

export interface ContactPropertyValueTable {
  contact_id: string;
  property_id: string;
  /** JSON: a string or a number, matching the property's type. */
  value: string;
}

export interface ContactImportTable {
  id: string;
  project_id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  /** JSON: how CSV columns map to contact fields, and the segments and topics to apply (ImportPlan). */
  plan: string;
  /** Data rows done so far: the import resumes after them. */
  processed: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  error: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface ContactImportChunkTable {
  import_id: string;
  position: number;
  content: Buffer;
}

export interface DomainTable {
  id: string;
  /** The project the row belongs to (docs/projects.md). */
  project_id: string;
  name: string;
  /** not_started, pending, partially_verified, verified, temporary_failure or failed. */
  status: string;
  /** JSON: the status of each DNS record, by record key (see domain/domain-records.ts). */
  record_statuses: string;
  /** When the current verification window (72 hours) began; null when none runs. */
  verify_started_at: number | null;
  region: string;
  custom_return_path: string;
  open_tracking: number;
  click_tracking: number;
  tracking_subdomain: string | null;
  /** The tracking domain's id (Resend's /domains/:id/tracking/:tracking_id) while it has a tracking subdomain. */
  tracking_id: string | null;
  tracking_created_at: string | null;
  tls: string;
  sending: string;
  receiving: string;
  /** Messages it may send a UTC day (warm-up); null: no cap. */
  daily_limit: number | null;
  /** A warm-up (domain/sending-domains/warmup.ts): its first day's volume and length; null: none. */
  warmup_start: number | null;
  warmup_days: number | null;
  /** Epoch ms: day 0 of the warm-up is this UTC day. */
  warmup_started_at: number | null;
  dkim_selector: string;
  /** The DKIM public key, base64 DER (SubjectPublicKeyInfo): the `p=` of the DNS record. */
  dkim_public_key: string;
  /** The DKIM private key, PKCS#8 PEM sealed with MAILROOM_SECRET (encryption.ts); never returned. */
  dkim_private_key: string;
  created_at: string;
  /** Why the guards paused its marketing mail (domain/deliverability/guards.ts); null while it sends. */
  sending_paused_reason: string | null;
  sending_paused_at: string | null;
  /** Epoch ms of the last resume: the guards count only what was sent after it. */
  sending_resumed_at: number | null;
  /** Where it takes its DMARC aggregate reports (domain/dmarc/); null: not read here. */
  dmarc_report_address: string | null;
}

/** A DMARC aggregate report read from mail, once per reporter's org_name and report_id. */
export interface DmarcReportTable {
  id: string;
  project_id: string;
  domain_id: string;
  /** The policy's domain as the report names it. */
  domain: string;
  org_name: string;
  email: string | null;
  report_id: string;
  date_begin: string;
  date_end: string;
  /** JSON: the policy published, as the reporter saw it ({p, sp, adkim, aspf, pct}). */
  policy: string;
  /** The messages its rows count (bigint: a string from PostgreSQL). */
  messages: number | string;
  row_count: number;
  received_at: string;
}

/** One row of a report: messages from one source with one outcome. */
export interface DmarcReportRowTable {
  dmarc_report_id: string;
  position: number;
  source_ip: string;
  count: number | string;
  disposition: string;
  /** pass when any DKIM signature verified, else the first result (none without one). */
  dkim: string;
  /** The SPF result. */
  spf: string;
  /** The policy's evaluation: pass when DKIM, or SPF, passed aligned with From. */
  dkim_aligned: string;
  spf_aligned: string;
  header_from: string;
  envelope_from: string | null;
  /** JSON: {dkim: [{domain, selector, result}], spf: [{domain, scope, result}]}. */
  auth_results: string;
}

/** What a domain with a daily_limit sent each UTC day (`YYYY-MM-DD`). */
export interface DomainDailySendTable {
  domain_id: string;
  day: string;
  sent: number;
}

export type BroadcastStatus = 'draft' | 'scheduled' | 'queued' | 'sending' | 'sent' | 'canceled';

export interface BroadcastTable {
  id: string;
  project_id: string;
  name: string | null;
  segment_id: string;
  topic_id: string | null;
  from: string;
  /** The sources as written, placeholders and all: rendered per recipient. */
  subject: string;
  /** JSON array of addresses. */
  reply_to: string | null;
  preview_text: string | null;
  html: string | null;
  text: string | null;
  status: BroadcastStatus;
  created_at: string;
  scheduled_at: string | null;
  sent_at: string | null;
  /** JSON {key: value}: the fallbacks of the contact properties the content uses, fixed when the fan-out starts. */
  property_fallbacks: string | null;
  /** The last contact id the fan-out has written emails for; null before the first chunk. */
  fanout_cursor: string | null;
}

/** Who a broadcast goes to, fixed when its fan-out starts. */
export interface BroadcastRecipientTable {
  broadcast_id: string;
  contact_id: string;
}

export type SuppressionOrigin = 'bounce' | 'complaint' | 'manual';

/** An address no email goes to. Emails are stored lowercased, as contacts' are. */
export interface SuppressionTable {
  id: string;
  project_id: string;
  email: string;
  origin: SuppressionOrigin;
  /** The email whose bounce or complaint put the address here; null for manual entries. */
  source_id: string | null;
  created_at: string;
}

/** A message the inbound SMTP server took: its parsed fields (JSON arrays and objects as text). */
export interface ReceivedEmailTable {
  id: string;
  project_id: string;
  created_at: string;
  /** MAIL FROM (empty for a bounce). */
  envelope_from: string;
  /** JSON array: the RCPT TO addresses Mailroom accepted. */
  received_for: string;
  client_address: string;
  /** The bare address of the From header. */
  from: string;
  /** JSON arrays of bare addresses. */
  to: string;
  cc: string;
  bcc: string;
  reply_to: string;
  subject: string;
  message_id: string;
  html: string | null;
  text: string | null;
  /** JSON object, lower-case names; a repeated header's values joined. */
  headers: string;
  /** JSON {spf, dkim, dmarc}: each result's verdict and detail. */
  authentication: string | null;
  /** The message's size in bytes, as received. */
  size: number;
  /** When retention removed its html, text, attachments and bytes; null while they are kept. */
  body_removed_at: string | null;
}

/** The bytes of a received message, as they arrived. */
export interface ReceivedMessageTable {
  email_id: string;
  raw: Buffer;
}

export interface ReceivedAttachmentTable {
  id: string;
  email_id: string;
  position: number;
  filename: string | null;
  content_type: string;
  content_disposition: string | null;
  content_id: string | null;
  size: number;
  content: Buffer;
}

/** A dashboard sign-in (domain/dashboard/sessions.ts); times in epoch ms. */
export interface DashboardSessionTable {
  id: string;
  /** SHA-256 of the cookie's token: the token itself is never stored. */
  token_hash: string;
  api_key_id: string;
  /** The token every change must carry (CSRF). */
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

/** Admin keys made with `npm run keys -- create --admin`: admin credentials as MAILROOM_ADMIN_KEY is, of no project. */
export interface AdminKeyTable {
  id: string;
  name: string;
  token_hash: string;
  created_at: string;
}

/** The admin keys' dashboard sessions (an admin key is no row of api_keys). */
export interface AdminSessionTable {
  id: string;
  token_hash: string;
  /** SHA-256 of the admin key it signed in with: once MAILROOM_ADMIN_KEY changes, or that admin key is deleted, the session is over. */
  admin_key_hash: string;
  /** The project it browses (the dashboard's switcher); null on the projects list. */
  project_id: string | null;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

/** Values every process of an install shares, by name (the SMTP TLS pair, sealed). */
export interface SettingTable {
  name: string;
  value: string;
}

/** One API request (GET /logs); bodies are JSON text, secrets removed (domain/api-logs/redact.ts). */
export interface ApiLogTable {
  id: string;
  /** The project of the key that made the request. */
  project_id: string;
  created_at: string;
  method: string;
  /** The path as called, without the query string. */
  endpoint: string;
  response_status: number;
  user_agent: string | null;
  api_key_id: string | null;
  duration_ms: number;
  request_body: string | null;
  response_body: string | null;
}

/** A custom event: a name automations are triggered by, and an optional schema of its payload. */
export interface CustomEventTable {
  id: string;
  project_id: string;
  name: string;
  /** JSON object: a flat map of payload keys to `string`, `number`, `boolean` or `date`; null for none. */
  schema: string | null;
  created_at: string;
  updated_at: string | null;
}

export interface AutomationTable {
  id: string;
  /** Its versions and runs are its project's, reached through it. */
  project_id: string;
  name: string;
  /** `enabled` (events start runs) or `disabled`. */
  status: string;
  /** The current version: what new runs follow. */
  version_id: string;
  /** The current version's trigger event, to find the automations an event starts. */
  trigger_event: string;
  created_at: string;
  updated_at: string;
}

/** An automation's graph as it was written; never changed, so a run finishes on the one it started. */
export interface AutomationVersionTable {
  id: string;
  automation_id: string;
  /** JSON arrays of the steps and of the connections, as validated. */
  steps: string;
  connections: string;
  created_at: string;
}

/** One contact's way through an automation, started by an event. */
export interface AutomationRunTable {
  id: string;
  automation_id: string;
  version_id: string;
  contact_id: string;
  /** The contact's email when the run started. */
  email: string;
  /** `running`, `completed`, `failed` or `cancelled`. */
  status: string;
  /** JSON {name, payload}: the event that started the run. */
  event: string;
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
}

/** A step a run reached: executed, or due (`pending`), or holding the run (`waiting`). */
export interface AutomationRunStepTable {
  id: string;
  run_id: string;
  key: string;
  type: string;
  /** `pending`, `waiting`, `completed`, `failed`, `skipped` or `cancelled`. */
  status: string;
  /** JSON objects, or null. */
  output: string | null;
  error: string | null;
  /** The event a waiting wait_for_event step waits for; null otherwise. */
  wait_event: string | null;
  contact_id: string;
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
}

/** A domain's last deliverability check (domain/deliverability/). */
export interface DomainDeliverabilityTable {
  domain_id: string;
  /** pass, warn or fail: the worst of its checks. */
  status: string;
  /** JSON: the checks, `[{id, status, detail, fix}]`, as the API answers them. */
  checks: string;
  checked_at: string;
}

/** A recipient domain's MTA-STS policy (delivery/mta-sts.ts). */
export interface MtaStsPolicyTable {
  domain: string;
  /** The `_mta-sts` TXT id it was fetched under. */
  policy_id: string;
  mode: string;
  /** JSON: the mx patterns. */
  mx: string;
  max_age: number;
  /** JSON: the policy's lines. */
  policy: string;
  /** Epoch ms. */
  fetched_at: number;
  expires_at: number;
}

/** TLS sessions of a UTC day to a recipient domain, by RFC 8460 result (domain/tls-reports/). */
export interface TlsSessionCountTable {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  domain: string;
  /** `success` or a failure's result type. */
  result: string;
  /** A failure's MX host and the address connected to; '' when none. */
  mx_host: string;
  receiving_ip: string;
  count: number;
  /** The last failure's reason code or words. */
  reason: string;
}

/** A TLS report made for a day and a recipient domain: at most one each. */
export interface TlsReportTable {
  day: string;
  domain: string;
  report_id: string;
  /** Where it went: the `rua` URIs, or why nowhere. */
  rua: string;
  created_at: string;
}

/** A project: what its keys may see and send (docs/projects.md). */
export interface ProjectTable {
  id: string;
  name: string;
  /** Requests per second for each of its keys without a rate of their own; null: MAILROOM_RATE_LIMIT. */
  rate_limit: number | null;
  /** Emails it may send a UTC day and a UTC month; null: no quota. */
  daily_quota: number | null;
  monthly_quota: number | null;
  /** Its own relay's SMTP URL, sealed with MAILROOM_SECRET; null: the install's transport. */
  smtp_url: string | null;
  created_at: string;
}

/** What a project sent in a UTC day (`2026-11-29`) or month (`2026-11`), counted only while it has a quota. */
export interface ProjectSendTable {
  project_id: string;
  period: string;
  sent: number;
}

export interface Database {
  projects: ProjectTable;
  project_sends: ProjectSendTable;
  api_keys: ApiKeyTable;
  api_logs: ApiLogTable;
  rate_limit_windows: RateLimitWindowTable;
  throttle_windows: ThrottleWindowTable;
  throttle_slowdowns: ThrottleSlowdownTable;
  emails: EmailTable;
  email_contents: EmailContentTable;
  email_recipients: EmailRecipientTable;
  email_attachments: EmailAttachmentTable;
  email_events: EmailEventTable;
  email_metrics: EmailMetricTable;
  email_metric_deltas: EmailMetricDeltaTable;
  email_sources: EmailSourceTable;
  events: EventTable;
  webhooks: WebhookTable;
  webhook_messages: WebhookMessageTable;
  webhook_attempts: WebhookAttemptTable;
  sent_messages: SentMessageTable;
  feedback_receipts: FeedbackReceiptTable;
  relay_message_ids: RelayMessageIdTable;
  received_emails: ReceivedEmailTable;
  received_messages: ReceivedMessageTable;
  received_attachments: ReceivedAttachmentTable;
  settings: SettingTable;
  dashboard_sessions: DashboardSessionTable;
  admin_keys: AdminKeyTable;
  admin_sessions: AdminSessionTable;
  jobs: JobTable;
  workers: WorkerTable;
  idempotency_keys: IdempotencyKeyTable;
  templates: TemplateTable;
  template_versions: TemplateVersionTable;
  contacts: ContactTable;
  segments: SegmentTable;
  segment_contacts: SegmentContactTable;
  topics: TopicTable;
  contact_topics: ContactTopicTable;
  contact_properties: ContactPropertyTable;
  contact_property_values: ContactPropertyValueTable;
  contact_imports: ContactImportTable;
  contact_import_chunks: ContactImportChunkTable;
  domains: DomainTable;
  domain_daily_sends: DomainDailySendTable;
  domain_deliverability: DomainDeliverabilityTable;
  dmarc_reports: DmarcReportTable;
  dmarc_report_rows: DmarcReportRowTable;
  mta_sts_policies: MtaStsPolicyTable;
  tls_session_counts: TlsSessionCountTable;
  tls_reports: TlsReportTable;
  broadcasts: BroadcastTable;
  broadcast_recipients: BroadcastRecipientTable;
  suppressions: SuppressionTable;
  custom_events: CustomEventTable;
  automations: AutomationTable;
  automation_versions: AutomationVersionTable;
  automation_runs: AutomationRunTable;
  automation_run_steps: AutomationRunStepTable;
}
