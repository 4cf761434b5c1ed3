import type { StsFailure } from './mta-sts.ts';

// What a TLS session to a recipient's server came to, in RFC 8460's result types: counted per recipient
// domain and day for the TLS reports that domain asks for (domain/tls-reports/).

export type TlsFailureType = 'starttls-not-supported' | 'certificate-host-mismatch' | 'certificate-expired' | 'certificate-not-trusted' | 'validation-failure';

export type TlsResult = 'success' | TlsFailureType | StsFailure;

/** One session, as the report counts it; the MX host and address are those of a failure. */
export interface TlsSession {
  domain: string;
  result: TlsResult;
  mxHost: string;
  receivingIp: string;
  /** The failure's code or words (RFC 8460 failure-reason-code). */
  reason: string;
}

export type RecordTlsSession = (session: TlsSession) => void;

const NOT_TRUSTED = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED', 'CERT_REVOKED']);

/**
 * The TLS failure a nodemailer error reports, if it is one: STARTTLS refused where it was required, or a
 * certificate refused in the handshake (nodemailer keeps the TLS error's code as `originalCode`).
 */
export function tlsFailureOf(error: { code?: string; originalCode?: string; command?: string; response?: string }): { type: TlsFailureType; reason: string } | undefined {
  const code = error.originalCode ?? '';
  if (error.code === 'ETLS') return error.command === 'STARTTLS' && error.response ? { type: 'starttls-not-supported', reason: error.response.slice(0, 200) } : { type: 'validation-failure', reason: 'TLS handshake failed' };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return { type: 'certificate-host-mismatch', reason: code };
  if (code === 'CERT_HAS_EXPIRED') return { type: 'certificate-expired', reason: code };
  if (NOT_TRUSTED.has(code)) return { type: 'certificate-not-trusted', reason: code };
  if (/^(ERR_TLS|ERR_SSL|CERT_)/.test(code)) return { type: 'validation-failure', reason: code };
  return undefined;
}
