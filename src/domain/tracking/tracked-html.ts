import type { DomainRow } from '../../store/domains.ts';
import { rewriteHtml } from './html-rewriter.ts';
import { createTrackingToken } from './tracking-tokens.ts';

// What tracking makes of one recipient's html. The plan is plain data, so that it travels to the
// composer threads (delivery/compose-thread.ts), where the html is rewritten beside the composing.

/** One recipient's tracking: where its URLs point, and what is tracked. */
export interface Tracking {
  emailId: string;
  recipient: string;
  /** The origin of the tracking URLs, without a trailing slash. */
  baseUrl: string;
  open: boolean;
  click: boolean;
  /** Links under this prefix stay as they are: the unsubscribe links, which must work, untracked. */
  keep: string;
}

export type TrackingDomain = Pick<DomainRow, 'name' | 'open_tracking' | 'click_tracking' | 'tracking_subdomain' | 'record_statuses'>;

export const OPEN_PATH = '/track/open/';
export const CLICK_PATH = '/track/click/';

/**
 * The origin of a domain's tracking URLs: its tracking subdomain once the Tracking CNAME is verified
 * (before that the name may not resolve, and the links would lead nowhere), else MAILROOM_PUBLIC_URL.
 */
export function trackingBaseUrl(domain: TrackingDomain, publicUrl: string): string {
  const verified = domain.tracking_subdomain !== null && domain.record_statuses.tracking === 'verified';
  return verified ? `https://${domain.tracking_subdomain}.${domain.name}` : publicUrl;
}

/** Whether mail from `domain` is tracked at all (it has an html part to track in, too). */
export function tracks(domain: TrackingDomain | undefined): domain is TrackingDomain {
  return domain !== undefined && (domain.open_tracking === 1 || domain.click_tracking === 1);
}

/** The tracking of `recipient` of an email from `domain` (which tracks). */
export function trackingFor(domain: TrackingDomain, publicUrl: string, emailId: string, recipient: string): Tracking {
  return {
    emailId,
    recipient,
    baseUrl: trackingBaseUrl(domain, publicUrl),
    open: domain.open_tracking === 1,
    click: domain.click_tracking === 1,
    keep: `${publicUrl}/unsubscribe/`,
  };
}

/** The html as `tracking`'s recipient gets it: links through signed redirects, the pixel at the end. */
export function trackHtml(key: Buffer, html: string, tracking: Tracking): string {
  const { emailId, recipient, baseUrl } = tracking;
  return rewriteHtml(html, {
    pixel: tracking.open ? baseUrl + OPEN_PATH + createTrackingToken(key, { kind: 'open', emailId, recipient }) : undefined,
    link: tracking.click
      ? (link) => (link.startsWith(tracking.keep) ? undefined : baseUrl + CLICK_PATH + createTrackingToken(key, { kind: 'click', emailId, recipient, link }))
      : undefined,
  });
}
