import { Type } from 'typebox';
import { MAX_ADDRESSES_PER_FIELD } from '../../domain/recipients/addresses.ts';
import { MAX_ATTACHMENTS, MAX_ATTACHMENTS_BASE64 } from '../../domain/emails/attachments.ts';
import { MAX_TAG_TEXT, MAX_TAGS, TAG_TEXT } from '../../domain/emails/tags.ts';

// Shared TypeBox pieces. Unions carry a `description`: the error handler quotes it when a value
// matches no branch ("expected a string or an array of strings").

/**
 * The longest value of each kind of string a request may carry. Every string, list and map in a request
 * schema has a bound (test/request-limits.test.ts walks the OpenAPI document to check), so that no field
 * makes a request cost more than its route means to allow.
 */
export const MAX = {
  /** Ids, aliases, and the email addresses that paths take in place of ids. */
  id: 256,
  /** Names, keys, and the words an enum-like field takes. */
  short: 256,
  /** One line of a message header (RFC 5322): addresses, subjects. */
  line: 998,
  /** `scheduled_at`: ISO 8601, or a phrase such as "in 1 min". */
  date: 64,
  url: 2048,
  /** Descriptions, header values, variable and property values. */
  text: 2000,
  /** html and text bodies: with inline images a template or broadcast can pass ten megabytes. */
  body: 20 * 1024 * 1024,
} as const;

/** The body limit of the routes that take html (templates, broadcasts): a little over MAX.body, for the JSON around it. */
export const CONTENT_BODY_LIMIT = 25 * 1024 * 1024;

/**
 * The pattern of a path parameter that is always an id (a UUID). A route written `/emails/:id${UUID}`
 * matches only ids, so that any other path (`/emails/outbox`, `/domains/claim`) is an unknown route,
 * answered 404 like every other.
 */
export const UUID = '(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)';

/** A string of at most `maxLength` characters. */
export const Str = (maxLength: number, description?: string) => Type.String(description === undefined ? { maxLength } : { maxLength, description });

export const IdParams = Type.Object({ id: Str(MAX.id) });

export const AddressList = Type.Union([Str(MAX.line), Type.Array(Str(MAX.line), { maxItems: MAX_ADDRESSES_PER_FIELD })], {
  description: 'an email address or an array of email addresses',
});

const TagText = Type.String({ maxLength: MAX_TAG_TEXT, pattern: TAG_TEXT.source });

export const Tag = Type.Object({ name: TagText, value: Type.Optional(TagText) });

export const Attachment = Type.Object({
  content: Type.Optional(
    Type.Union([Str(MAX_ATTACHMENTS_BASE64), Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), { maxItems: (MAX_ATTACHMENTS_BASE64 / 4) * 3 })], {
      description: 'the file content, base64-encoded or as an array of byte values',
    }),
  ),
  path: Type.Optional(Str(MAX.url, 'http(s) URL fetched when the email is accepted')),
  filename: Type.Optional(Str(MAX.short)),
  content_type: Type.Optional(Str(MAX.short, 'Derived from the filename when absent')),
  content_id: Type.Optional(Str(MAX.short, 'For inline images referenced as cid:...')),
  inline_content_id: Type.Optional(Str(MAX.short, 'The same as content_id')),
});

/** A template variable's value, on send and as a declared fallback. */
export const VariableValue = Type.Union([Str(MAX.text), Type.Number()], { description: 'a string or a number' });

/** A map of at most `maxProperties` entries. */
export const Map = <T extends Parameters<typeof Type.Record>[1]>(value: T, maxProperties: number) =>
  Type.Record(Type.String(), value, { maxProperties });

export const SendEmailBody = Type.Object({
  from: Type.Optional(Str(MAX.line, '"email@example.com" or "Name <email@example.com>"')),
  to: AddressList,
  subject: Type.Optional(Str(MAX.line)),
  cc: Type.Optional(AddressList),
  bcc: Type.Optional(AddressList),
  reply_to: Type.Optional(AddressList),
  html: Type.Optional(Str(MAX.body)),
  text: Type.Optional(Str(MAX.body, 'Generated from html when omitted; "" sends no text part')),
  headers: Type.Optional(Map(Str(MAX.text), 100)),
  tags: Type.Optional(Type.Array(Tag, { maxItems: MAX_TAGS })),
  attachments: Type.Optional(Type.Array(Attachment, { maxItems: MAX_ATTACHMENTS })),
  scheduled_at: Type.Optional(Str(MAX.date, 'ISO 8601 or natural language, at most 30 days ahead')),
  template: Type.Optional(
    Type.Object({
      id: Str(MAX.id, 'The id or alias of a published template'),
      variables: Type.Optional(Map(VariableValue, 100)),
    }),
  ),
  topic_id: Type.Optional(Str(MAX.id)),
});

export const IdResponse = Type.Object({ id: Type.String() });

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Str(256, '1 to 256 characters: the same key and payload within 24 hours answer the first response again'),
  ),
});

/** `{object, id}`, the answer of updates and actions. */
export function objectId(object: string) {
  return Type.Object({ object: Type.Literal(object), id: Type.String() });
}

/** `{object, id, deleted: true}`, the answer of deletes. */
export function deleted(object: string) {
  return Type.Object({ object: Type.Literal(object), id: Type.String(), deleted: Type.Boolean() });
}

/** Resend's list envelope around rows of `item`. */
export function listOfSchema<T extends ReturnType<typeof Type.Object>>(item: T) {
  return Type.Object({ object: Type.Literal('list'), has_more: Type.Boolean(), data: Type.Array(item) });
}

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const EmailListItem = Type.Object({
  id: Type.String(),
  to: Type.Array(Type.String()),
  from: Type.String(),
  created_at: Type.String(),
  subject: Type.String(),
  bcc: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  reply_to: Type.Array(Type.String()),
  last_event: Type.String(),
  scheduled_at: Nullable(Type.String()),
  message_id: Type.String(),
  broadcast_id: Type.Optional(Type.String({ description: "Mailroom's addition: the broadcast the email belongs to, if any" })),
});

export const Email = Type.Object({
  object: Type.Literal('email'),
  ...EmailListItem.properties,
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  tags: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
  topic_id: Type.Optional(Type.String()),
  waiting: Type.Optional(
    Type.Object(
      { reason: Type.String({ description: '"warmup" or "daily_limit"' }), until: Type.String({ description: 'When it goes: its scheduled_at' }) },
      { description: "Mailroom's addition, while some of its recipients wait for the next UTC day: its sending domain's cap for the day is reached (docs/deliverability.md)" },
    ),
  ),
  body_removed_at: Type.Optional(
    Type.String({ description: "Mailroom's addition, once retention (MAILROOM_RETENTION_DAYS) removed the email's html, text, attachments and raw message: when" }),
  ),
});

/** An attachment of an email, as lists show it. */
export const AttachmentListItem = Type.Object({
  id: Type.String(),
  filename: Nullable(Type.String()),
  content_type: Type.String(),
  content_id: Nullable(Type.String()),
  content_disposition: Type.Union([Type.Literal('inline'), Type.Literal('attachment'), Type.Null()]),
  download_url: Type.String({ description: 'Signed; works without an API key until expires_at' }),
  expires_at: Type.String({ description: 'ISO 8601: an hour after the link was made' }),
  size: Type.Integer({ description: 'In bytes' }),
});

export const AttachmentObject = Type.Object({ object: Type.Literal('attachment'), ...AttachmentListItem.properties });
