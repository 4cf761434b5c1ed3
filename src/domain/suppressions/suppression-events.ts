// The webhook events of the suppression list: suppression.added and suppression.removed.
import { isoTime } from '../../time/clock.ts';
import type { SuppressionRow } from '../../store/suppressions.ts';
import type { NewEvent } from '../events/event-log.ts';

/** A suppression.* event: the entry, as the API shows it. */
export function suppressionEvent(type: 'suppression.added' | 'suppression.removed', row: SuppressionRow): NewEvent {
  const { project_id, id, email, origin, source_id, created_at } = row;
  return { project: project_id, type, data: { id, email, origin, source_id, created_at: isoTime(created_at) } };
}
