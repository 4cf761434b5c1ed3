import { domainToASCII } from 'node:url';
import { invalidField, quoted } from '../../errors.ts';

export interface Mailbox {
  /** Display name, unquoted; undefined when none was given. */
  name: string | undefined;
  /** The addr-spec with its domain in ASCII (punycode), safe for an SMTP envelope. */
  address: string;
}

// A dot-atom local part, or a quoted string of RFC 5321's printable characters (qtextSMTP and
// quoted-pairSMTP) without "<" and ">", which nodemailer's address parser turns into spaces on the wire.
const LOCAL_PART =
  /^(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*|"(?:[\x20\x21\x23-\x3b\x3d\x3f-\x5b\x5d-\x7e]|\\[\x20-\x3b\x3d\x3f-\x7e])*")$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A domain name in lower-case ASCII (punycode), or undefined when it is not one. */
export function asciiDomain(domain: string): string | undefined {
  const lower = domain.toLowerCase();
  // Most domains are plain ASCII already, which domainToASCII would only have checked, at some cost.
  const ascii = /^[a-z0-9.-]+$/.test(lower) && !lower.includes('xn--') ? lower : domainToASCII(lower);
  if (!ascii || ascii.length > 253) return undefined;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined;
  const tld = labels[labels.length - 1]!;
  return /^[a-z]{2,63}$|^xn--[a-z0-9-]+$/.test(tld) ? ascii : undefined;
}

/** Checks an addr-spec and returns it with an ASCII domain; undefined when it is not one. */
export function normalizeAddress(value: string): string | undefined {
  const at = value.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = value.slice(0, at);
  const domain = asciiDomain(value.slice(at + 1));
  if (!domain || local.length > 64 || !LOCAL_PART.test(local)) return undefined;
  const address = `${local}@${domain}`;
  return address.length <= 254 ? address : undefined;
}

function invalidMailbox(value: string, field: string) {
  return invalidField(field, `${quoted(value)} is not a valid email address; use \`email@example.com\` or \`Name <email@example.com>\`.`);
}

/**
 * Parses `addr` or `Name <addr>` (the name optionally quoted). Line breaks are refused anywhere, so
 * nothing a client sends can start a new header or SMTP command. The `<...>` is found by position, not
 * by a pattern, so that the time taken grows with the length of the value, never with its square.
 */
export function parseMailbox(value: string, field: string): Mailbox {
  if (/[\r\n\0]/.test(value)) throw invalidMailbox(value, field);
  const trimmed = value.trim();
  const open = trimmed.endsWith('>') ? trimmed.lastIndexOf('<') : -1;
  // A `<...>` holding another `>` is no angle address: the whole value is then read as one (and refused).
  const angle = open !== -1 && trimmed.indexOf('>', open) === trimmed.length - 1 ? open : -1;
  const address = normalizeAddress(angle === -1 ? trimmed : trimmed.slice(angle + 1, -1).trim());
  if (!address) throw invalidMailbox(value, field);
  let name = angle === -1 ? undefined : trimmed.slice(0, angle).trim();
  if (name?.startsWith('"') && name.endsWith('"') && name.length >= 2) {
    name = name.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return { name: name || undefined, address };
}

/** The domain part of an addr-spec. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1);
}

/** At most this many addresses in each of to, cc, bcc and reply_to. */
export const MAX_ADDRESSES_PER_FIELD = 50;

/** A field given as one address or an array of them, each parsed and named `field[i]` when it fails. */
export function parseMailboxList(value: string | string[] | undefined, field: string): Mailbox[] {
  const list = toList(value);
  if (list.length > MAX_ADDRESSES_PER_FIELD) {
    throw invalidField(field, `at most ${MAX_ADDRESSES_PER_FIELD} addresses are allowed.`);
  }
  return list.map((entry, i) => parseMailbox(entry, Array.isArray(value) ? `${field}[${i}]` : field));
}

/** A string or an array of strings, as the API accepts them, as a list. */
export function toList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Formats a mailbox back to `Name <addr>` for storage and display. */
export function formatMailbox(mailbox: Mailbox): string {
  if (!mailbox.name) return mailbox.address;
  const quoted = /[()<>[\]:;@\\,."]/.test(mailbox.name) ? `"${mailbox.name.replace(/(["\\])/g, '\\$1')}"` : mailbox.name;
  return `${quoted} <${mailbox.address}>`;
}
