import type { Context } from '../../context.ts';
import { invalidField, missingField, quoted } from '../../errors.ts';
import type { BroadcastRow } from '../../store/broadcasts.ts';
import { findSegment } from '../../store/segments.ts';
import { findTopic } from '../../store/topics.ts';
import { formatMailbox, parseMailbox } from '../recipients/addresses.ts';
import { checkSenderDomain, senderOf } from '../sending-domains/sender-domain.ts';
import { checkQuotaLeft } from '../projects/quotas.ts';
import { checkPlaceholders, checkReplyTo } from '../templates/template-input.ts';

/** The fields of POST /broadcasts and PATCH /broadcasts/:id; null clears an optional one on update. */
export interface BroadcastInput {
  name?: string | null;
  segment_id?: string;
  /** Deprecated: the same as segment_id. */
  audience_id?: string;
  from?: string;
  subject?: string;
  reply_to?: string | string[] | null;
  preview_text?: string | null;
  html?: string;
  text?: string | null;
  topic_id?: string | null;
}

export interface CreateBroadcastInput extends BroadcastInput {
  send?: boolean;
  scheduled_at?: string;
}

/** What a broadcast's author writes: everything but its state. */
export type BroadcastContent = Pick<
  BroadcastRow,
  'name' | 'segment_id' | 'topic_id' | 'from' | 'subject' | 'reply_to' | 'preview_text' | 'html' | 'text'
>;

/** The segment a broadcast goes to must be its project's; `field` names it as the client did. */
export async function checkSegment(ctx: Context, project: string, id: string, field: string): Promise<string> {
  const segment = await findSegment(ctx.db, project, id.toLowerCase());
  if (!segment) throw invalidField(field, `there is no segment with id ${quoted(id)}.`);
  return segment.id;
}

/** A broadcast's topic must be its project's; null means none. */
export async function existingTopicId(ctx: Context, project: string, id: string | null): Promise<string | null> {
  if (id === null) return null;
  const topic = await findTopic(ctx.db, project, id.toLowerCase());
  if (!topic) throw invalidField('topic_id', `there is no topic with id ${quoted(id)}.`);
  return topic.id;
}

/**
 * What sending needs besides the content, checked when a broadcast is sent (not while it is a draft):
 * its segment and topic still exist, and its `from` may send (the domain rules of POST /emails).
 */
export async function checkSendable(ctx: Context, project: string, row: Pick<BroadcastRow, 'segment_id' | 'topic_id' | 'from'>): Promise<void> {
  await checkSegment(ctx, project, row.segment_id, 'segment_id');
  await existingTopicId(ctx, project, row.topic_id);
  await checkSenderDomain(ctx, parseMailbox(row.from, 'from').address, senderOf(project));
  await checkQuotaLeft(ctx, project);
}

/** The fields the input gives, checked; those it leaves out are not in the answer. */
export async function checkContent(ctx: Context, project: string, input: BroadcastInput): Promise<Partial<BroadcastContent>> {
  const content: Partial<BroadcastContent> = {};
  const segmentField = input.segment_id !== undefined ? 'segment_id' : 'audience_id';
  const segmentId = input.segment_id ?? input.audience_id;
  if (segmentId !== undefined) content.segment_id = await checkSegment(ctx, project, segmentId, segmentField);
  if (input.topic_id !== undefined) content.topic_id = await existingTopicId(ctx, project, input.topic_id);
  if (input.from !== undefined) content.from = formatMailbox(parseMailbox(input.from, 'from'));
  // Line breaks in a subject would end the header: fold them to spaces, as for emails.
  if (input.subject !== undefined) content.subject = checkPlaceholders(input.subject.replace(/[\r\n]+/g, ' '), 'subject');
  if (input.reply_to !== undefined) content.reply_to = input.reply_to === null ? null : checkReplyTo(input.reply_to);
  if (input.name !== undefined) content.name = input.name;
  if (input.preview_text !== undefined) content.preview_text = input.preview_text && checkPlaceholders(input.preview_text, 'preview_text');
  if (input.html !== undefined) content.html = checkPlaceholders(input.html, 'html');
  if (input.text !== undefined) content.text = input.text && checkPlaceholders(input.text, 'text');
  return content;
}

/** POST /broadcasts: the segment, `from`, `subject` and a body are required. */
export async function checkNewContent(ctx: Context, project: string, input: BroadcastInput): Promise<BroadcastContent> {
  if (input.segment_id === undefined && input.audience_id === undefined) throw missingField('segment_id');
  if (input.from === undefined) throw missingField('from');
  if (input.subject === undefined) throw missingField('subject');
  if (input.html === undefined && input.text === undefined) throw missingField('html` or `text');
  const { segment_id, from, subject, ...rest } = await checkContent(ctx, project, input);
  const none = { name: null, topic_id: null, reply_to: null, preview_text: null, html: null, text: null };
  return { ...none, ...rest, segment_id: segment_id!, from: from!, subject: subject! };
}
