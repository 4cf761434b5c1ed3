import type { Context } from '../../context.ts';
import { findBroadcast, type BroadcastRow } from '../../store/broadcasts.ts';
import type { EmailRow } from '../../store/emails.ts';
import { escapeHtml, parseTemplate, renderTemplate, type ParsedTemplate, type Value } from '../templates/render-template.ts';
import { createUnsubscribeToken, unsubscribeKey, type UnsubscribeClaims } from '../recipients/unsubscribe-tokens.ts';

// Personalisation of broadcasts. A broadcast's content is stored once; each of its emails carries the
// recipient's data (Personalization), and its body is rendered from both wherever it is needed: when
// the worker composes the message and when GET /emails/:id shows it, by the one function below.

/** The recipient's data a broadcast email is rendered with, stored on the email as JSON. */
export interface Personalization {
  contact_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  /** The contact's values of the properties the broadcast uses. */
  properties: Record<string, Value>;
}

/** A broadcast's content, parsed once, with the property fallbacks fixed when its fan-out started. */
export interface ParsedBroadcast {
  id: string;
  topicId: string | null;
  subject: ParsedTemplate;
  html: ParsedTemplate | null;
  /** null: the text part is generated from the rendered html; "": there is none. */
  text: ParsedTemplate | '' | null;
  /** The keys of the contact properties the content uses. */
  propertyKeys: string[];
}

// The contact's own fields, by their current and their legacy names.
const FIELDS = new Map<string, 'email' | 'first_name' | 'last_name'>([
  ['contact.email', 'email'],
  ['EMAIL', 'email'],
  ['contact.first_name', 'first_name'],
  ['FIRST_NAME', 'first_name'],
  ['contact.last_name', 'last_name'],
  ['LAST_NAME', 'last_name'],
]);
const UNSUBSCRIBE_URLS = new Set(['RESEND_UNSUBSCRIBE_URL', 'SERVICE_UNSUBSCRIBE_URL']);
const PROPERTY = /^contact\.([A-Za-z0-9_]+)$/;

const propertyKey = (name: string) => (FIELDS.has(name) ? undefined : PROPERTY.exec(name)?.[1]);

function propertyKeysOf(parts: (ParsedTemplate | null)[]): string[] {
  const keys = parts.flatMap((part) => part?.placeholders.map((p) => propertyKey(p.name)) ?? []);
  return [...new Set(keys.filter((key) => key !== undefined))];
}

/** The keys of the contact properties a broadcast's subject, preview text, html and text use. */
export function usedPropertyKeys(row: Pick<BroadcastRow, 'subject' | 'preview_text' | 'html' | 'text'>): string[] {
  return propertyKeysOf([row.subject, row.preview_text, row.html, row.text].map((source) => (source ? parseTemplate(source) : null)));
}

/**
 * A property's fallback_value applies where the contact has no value and the placeholder no fallback
 * of its own; it is data, so it is escaped in html.
 */
function withPropertyFallbacks(parsed: ParsedTemplate, fallbacks: Record<string, Value>, html: boolean): ParsedTemplate {
  const placeholders = parsed.placeholders.map((placeholder) => {
    const key = propertyKey(placeholder.name);
    if (placeholder.fallback !== undefined || key === undefined || !Object.hasOwn(fallbacks, key)) return placeholder;
    const fallback = String(fallbacks[key]);
    return { ...placeholder, fallback: html ? escapeHtml(fallback) : fallback };
  });
  return { texts: parsed.texts, placeholders };
}

/** The preview text goes first in the body, hidden: inboxes show it beside the subject. */
export function withPreviewText(html: string, previewText: string | null): string {
  if (!previewText) return html;
  const hidden = `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">${escapeHtml(previewText)}</div>`;
  // The end of the opening <body> tag, found by position: a pattern retried from every "<body" that
  // does not close would take time in the square of the html's length.
  const open = html.search(/<body/i);
  const end = open === -1 ? -1 : html.indexOf('>', open) + 1;
  return end > 0 ? html.slice(0, end) + hidden + html.slice(end) : hidden + html;
}

// Content changes only while a broadcast is a draft, before it has any email; once it is sending it is
// fixed, so its parsed form is kept per process, keyed by project and id, for the fan-out and every email of it.
const CACHE_SIZE = 100;
const cache = new Map<string, ParsedBroadcast>();

/** The project's broadcast's content, parsed; from the cache once the broadcast is sending or sent. */
export async function loadParsedBroadcast(ctx: Context, project: string, id: string): Promise<ParsedBroadcast | undefined> {
  const key = `${project}/${id}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const row = await findBroadcast(ctx.db, project, id);
  if (!row) return undefined;
  const fallbacks = row.property_fallbacks ?? {};
  const parse = (source: string, html: boolean) => withPropertyFallbacks(parseTemplate(source), fallbacks, html);
  const html = row.html === null ? null : parse(withPreviewText(row.html, row.preview_text), true);
  const text: ParsedBroadcast['text'] = row.text === null ? null : row.text === '' ? '' : parse(row.text, false);
  const subject = parse(row.subject, false);
  const parsed = { id, topicId: row.topic_id, subject, html, text, propertyKeys: propertyKeysOf([subject, html, text || null]) };
  if (row.status === 'sending' || row.status === 'sent') {
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(key, parsed);
  }
  return parsed;
}

/** The signed link of a recipient's unsubscribe page (and of its one-click POST). */
export function unsubscribeUrl(ctx: Context, claims: UnsubscribeClaims): string {
  return `${ctx.config.publicUrl}/unsubscribe/${createUnsubscribeToken(unsubscribeKey(ctx.secret), claims)}`;
}

/**
 * A placeholder's value for one recipient: the contact's field or property value (an empty one counts as
 * none, so that the fallback shows), or the recipient's unsubscribe link.
 */
function lookupFor(link: () => string, data: Personalization) {
  return (name: string): Value | undefined => {
    const field = FIELDS.get(name);
    if (field !== undefined) return data[field] || undefined;
    if (UNSUBSCRIBE_URLS.has(name)) return link();
    const key = propertyKey(name);
    const value = key !== undefined && Object.hasOwn(data.properties, key) ? data.properties[key] : undefined;
    return value === '' ? undefined : value;
  };
}

/** A recipient's unsubscribe link, signed on first use and then reused (signing costs a key derivation). */
function linkFor(ctx: Context, broadcast: ParsedBroadcast, data: Personalization): () => string {
  let link: string | undefined;
  return () => (link ??= unsubscribeUrl(ctx, { contactId: data.contact_id, broadcastId: broadcast.id, topicId: broadcast.topicId }));
}

/** A recipient's subject, rendered once by the fan-out and stored on the email (lists show it). */
export function renderSubject(ctx: Context, broadcast: ParsedBroadcast, data: Personalization): string {
  return renderTemplate(broadcast.subject, lookupFor(linkFor(ctx, broadcast, data), data), false);
}

/**
 * The body of a broadcast email, as it is sent and shown: html and text rendered for its recipient,
 * and the List-Unsubscribe headers (RFC 2369, and RFC 8058's one-click POST) with its own link.
 */
export async function renderBroadcastEmail(ctx: Context, email: EmailRow): Promise<EmailRow> {
  const broadcast = await loadParsedBroadcast(ctx, email.project_id, email.broadcast_id!);
  if (!broadcast || email.personalization === null) return email;
  const data = email.personalization as Personalization;
  const link = linkFor(ctx, broadcast, data);
  const lookup = lookupFor(link, data);
  return {
    ...email,
    html: broadcast.html && renderTemplate(broadcast.html, lookup, true),
    text: broadcast.text === null || broadcast.text === '' ? broadcast.text : renderTemplate(broadcast.text, lookup, false),
    headers: { 'List-Unsubscribe': `<${link()}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}
