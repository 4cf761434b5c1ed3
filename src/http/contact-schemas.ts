import { Type } from 'typebox';
import { PageQuery } from './pagination.ts';
import { Nullable } from './schemas.ts';

// TypeBox pieces of contacts, shared by /contacts, /segments/:id/contacts and the legacy /audiences routes.

export const ContactParams = Type.Object({ id: Type.String({ description: 'The contact id or email address' }) });

export const Subscription = Type.Enum(['opt_in', 'opt_out']);

export const TopicRefs = Type.Array(Type.Object({ id: Type.String(), subscription: Subscription }));

export const SegmentRefs = Type.Array(
  Type.Union([Type.String(), Type.Object({ id: Type.String() })], { description: 'a segment id or {"id": "..."}' }),
);

const PropertyValues = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Number(), Type.Null()], { description: 'a string, a number, or null to remove the value' }),
);

export const CreateContactBody = Type.Object({
  email: Type.String(),
  first_name: Type.Optional(Nullable(Type.String())),
  last_name: Type.Optional(Nullable(Type.String())),
  unsubscribed: Type.Optional(Type.Boolean()),
  properties: Type.Optional(PropertyValues),
  segments: Type.Optional(SegmentRefs),
  topics: Type.Optional(TopicRefs),
  audience_id: Type.Optional(Type.String({ description: 'Deprecated: a segment to add the contact to' })),
});

export const UpdateContactBody = Type.Object({
  email: Type.Optional(Type.String()),
  first_name: Type.Optional(Nullable(Type.String({ description: 'null clears it' }))),
  last_name: Type.Optional(Nullable(Type.String({ description: 'null clears it' }))),
  unsubscribed: Type.Optional(Type.Boolean()),
  properties: Type.Optional(PropertyValues),
});

export const ContactListQuery = Type.Object({
  ...PageQuery.properties,
  segment_id: Type.Optional(Type.String({ description: 'Only the contacts of this segment' })),
  audience_id: Type.Optional(Type.String({ description: 'Deprecated: same as segment_id' })),
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
