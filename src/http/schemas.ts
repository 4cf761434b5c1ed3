import { Type, type Static } from 'typebox';

// Shared TypeBox pieces. Unions carry a `description`: the error handler quotes it when a value
// matches no branch ("expected a string or an array of strings").

export const IdParams = Type.Object({ id: Type.String() });

export const AddressList = Type.Union([Type.String(), Type.Array(Type.String())], {
  description: 'an email address or an array of email addresses',
});

const TagText = Type.String({ maxLength: 256, pattern: '^[A-Za-z0-9_-]*$' });

export const Tag = Type.Object({ name: TagText, value: Type.Optional(TagText) });

export const Attachment = Type.Object({
  content: Type.Optional(Type.String({ description: 'File content, base64-encoded' })),
  path: Type.Optional(Type.String({ description: 'http(s) URL fetched when the email is accepted' })),
  filename: Type.Optional(Type.String()),
  content_type: Type.Optional(Type.String({ description: 'Derived from the filename when absent' })),
  content_id: Type.Optional(Type.String({ description: 'For inline images referenced as cid:...' })),
});

/** A template variable's value, on send and as a declared fallback. */
export const VariableValue = Type.Union([Type.String(), Type.Number()], { description: 'a string or a number' });

export const SendEmailBody = Type.Object({
  from: Type.Optional(Type.String({ description: '"email@example.com" or "Name <email@example.com>"' })),
  to: AddressList,
  subject: Type.Optional(Type.String()),
  cc: Type.Optional(AddressList),
  bcc: Type.Optional(AddressList),
  reply_to: Type.Optional(AddressList),
  html: Type.Optional(Type.String()),
  text: Type.Optional(Type.String({ description: 'Generated from html when omitted; "" sends no text part' })),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  tags: Type.Optional(Type.Array(Tag)),
  attachments: Type.Optional(Type.Array(Attachment)),
  scheduled_at: Type.Optional(Type.String({ description: 'ISO 8601 or natural language, at most 30 days ahead' })),
  template: Type.Optional(
    Type.Object({
      id: Type.String({ description: 'The id or alias of a published template' }),
      variables: Type.Optional(Type.Record(Type.String(), VariableValue)),
    }),
  ),
  topic_id: Type.Optional(Type.String()),
});
export type SendEmailInput = Static<typeof SendEmailBody>;

export const IdResponse = Type.Object({ id: Type.String() });

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: '1 to 256 characters: the same key and payload within 24 hours answer the first response again' }),
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
  broadcast_id: Type.Optional(Type.String({ description: "Mailroom's addition: the broadcast the email belongs to, if any" })),
});

export const Email = Type.Object({
  object: Type.Literal('email'),
  ...EmailListItem.properties,
  message_id: Type.String(),
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  tags: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
  topic_id: Type.Optional(Type.String()),
});
