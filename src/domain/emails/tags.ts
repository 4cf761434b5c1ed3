import { invalidField, quoted } from '../../errors.ts';
import type { Tag } from '../../store/emails.ts';

// Resend's rule for tags, for every edge that sends (the HTTP schema states the same bounds).
export const MAX_TAGS = 100;
export const MAX_TAG_TEXT = 256;
/** ASCII letters, digits, underscores and dashes. */
export const TAG_TEXT = /^[A-Za-z0-9_-]*$/;

/** The tags of a send, checked; null when there are none. `field` names them as the client wrote them. */
export function checkTags(tags: Tag[] | undefined, field = 'tags'): Tag[] | null {
  if (tags === undefined || tags.length === 0) return null;
  if (tags.length > MAX_TAGS) throw invalidField(field, `at most ${MAX_TAGS} tags are allowed.`);
  for (const text of tags.flatMap((t) => [t.name, t.value ?? ''])) {
    if (text.length > MAX_TAG_TEXT || !TAG_TEXT.test(text)) {
      throw invalidField(field, `${quoted(text)}: a tag name or value is at most ${MAX_TAG_TEXT} ASCII letters, digits, underscores or dashes.`);
    }
  }
  return tags;
}
