import { Type } from 'typebox';
import { PageQuery } from '../pagination.ts';
import { Map, MAX, Nullable, Str } from './common.ts';

// TypeBox pieces of contacts, their topics, properties and segments, shared by their routes and the
// dashboard's forms (/contacts, /segments/:id/contacts, the legacy /audiences routes, /topics, /contact-properties).

export const ContactParams = Type.Object({ id: Str(MAX.id, 'The contact id or email address') });

export const Subscription = Type.Enum(['opt_in', 'opt_out']);

export const TopicRefs = Type.Array(Type.Object({ id: Str(MAX.id), subscription: Subscription }), { maxItems: 1000 });

export const SegmentRefs = Type.Array(
  Type.Union([Str(MAX.id), Type.Object({ id: Str(MAX.id) })], { description: 'a segment id or {"id": "..."}' }),
  { maxItems: 1000 },
);

const PropertyValues = Map(
  Type.Union([Str(MAX.text), Type.Number(), Type.Null()], { description: 'a string, a number, or null to remove the value' }),
  1000,
);

export const CreateContactBody = Type.Object({
  email: Str(MAX.line),
  first_name: Type.Optional(Nullable(Str(MAX.short))),
  last_name: Type.Optional(Nullable(Str(MAX.short))),
  unsubscribed: Type.Optional(Type.Boolean()),
  properties: Type.Optional(PropertyValues),
  segments: Type.Optional(SegmentRefs),
  topics: Type.Optional(TopicRefs),
  audience_id: Type.Optional(Str(MAX.id, 'Deprecated: a segment to add the contact to')),
});

export const UpdateContactBody = Type.Object({
  email: Type.Optional(Str(MAX.line)),
  first_name: Type.Optional(Nullable(Str(MAX.short, 'null clears it'))),
  last_name: Type.Optional(Nullable(Str(MAX.short, 'null clears it'))),
  unsubscribed: Type.Optional(Type.Boolean()),
  properties: Type.Optional(PropertyValues),
});

export const ContactListQuery = Type.Object({
  ...PageQuery.properties,
  segment_id: Type.Optional(Str(MAX.id, 'Only the contacts of this segment')),
  audience_id: Type.Optional(Str(MAX.id, 'Deprecated: same as segment_id')),
});

export const ContactItem = Type.Object({
  id: Type.String(),
  email: Type.String(),
  first_name: Nullable(Type.String()),
  last_name: Nullable(Type.String()),
  created_at: Type.String(),
  unsubscribed: Type.Boolean(),
});

export const Contact = Type.Object({
  object: Type.Literal('contact'),
  ...ContactItem.properties,
  properties: Type.Record(Type.String(), Type.Object({ value: Type.Union([Type.String(), Type.Number()]), type: Type.String() })),
});

export const ContactCreated = Type.Object({ object: Type.Literal('contact'), id: Type.String() });

/** Resend's answer names the contact as the path did; `id` is added when the contact existed. */
export const ContactDeleted = Type.Object({
  object: Type.Literal('contact'),
  id: Type.Optional(Type.String()),
  contact: Type.String(),
  deleted: Type.Boolean(),
});

export const SegmentItem = Type.Object({ id: Type.String(), name: Type.String(), created_at: Type.String() });

export const TopicBody = Type.Object({
  name: Type.Optional(Str(MAX.short, 'At most 50 characters; required on create')),
  description: Type.Optional(Nullable(Str(MAX.text, 'At most 200 characters'))),
  default_subscription: Type.Optional(Str(MAX.short, '"opt_in" or "opt_out"; required on create, then fixed')),
  visibility: Type.Optional(Str(MAX.short, '"public" or "private" (default)')),
});

export const PropertyValue = Type.Union([Str(MAX.text), Type.Number()], { description: 'a string or a number' });

export const PropertyBody = Type.Object({
  key: Type.Optional(Str(MAX.short, 'Letters, digits and underscores, at most 50; required on create, then fixed')),
  type: Type.Optional(Str(MAX.short, '"string" or "number"; required on create, then fixed')),
  fallback_value: Type.Optional(Nullable(PropertyValue)),
});

export const SegmentBody = Type.Object({ name: Str(MAX.short) });
