// The webhook events of the suppression list: suppression.added and suppression.removed.
import { isoTime } from '../../time/clock.ts';
import type { SuppressionRow } from '../../store/suppressions.ts';
import { UNSCOPED_PROJECT } from '../../store/projects.ts';
import type { NewEvent } from '../events/event-log.ts';

/** A suppression.* event: the entry, as the API shows it. */
export function suppressionEvent(type: 'suppression.added' | 'suppression.removed', row: SuppressionRow): NewEvent {
  const { id, email, origin, source_id, created_at } = row;
  return { project: UNSCOPED_PROJECT, type, data: { id, email, origin, source_id, created_at: isoTime(created_at) } };
}
