// RFC 8460's report format (section 4.3, the fields; 4.4, the JSON) as a JSON Schema, to check the
// reports Mailroom sends: required members, types, the registered result types, RFC 3339 times.

const DATE_TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$';
const count = { type: 'integer', minimum: 0 };

export const TLSRPT_SCHEMA = {
  type: 'object',
  required: ['organization-name', 'date-range', 'contact-info', 'report-id', 'policies'],
  properties: {
    'organization-name': { type: 'string', minLength: 1 },
    'date-range': {
      type: 'object',
      required: ['start-datetime', 'end-datetime'],
      properties: { 'start-datetime': { type: 'string', pattern: DATE_TIME }, 'end-datetime': { type: 'string', pattern: DATE_TIME } },
    },
    'contact-info': { type: 'string', minLength: 1 },
    'report-id': { type: 'string', minLength: 1 },
    policies: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['policy', 'summary'],
        properties: {
          policy: {
            type: 'object',
            required: ['policy-type', 'policy-domain'],
            properties: {
              'policy-type': { enum: ['tlsa', 'sts', 'no-policy-found'] },
              'policy-string': { type: 'array', items: { type: 'string' } },
              'policy-domain': { type: 'string', minLength: 1 },
              'mx-host': { type: 'array', items: { type: 'string' } },
            },
          },
          summary: {
            type: 'object',
            required: ['total-successful-session-count', 'total-failure-session-count'],
            properties: { 'total-successful-session-count': count, 'total-failure-session-count': count },
          },
          'failure-details': {
            type: 'array',
            items: {
              type: 'object',
              required: ['result-type', 'failed-session-count'],
              properties: {
                'result-type': {
                  enum: [
                    'starttls-not-supported', 'certificate-host-mismatch', 'certificate-expired', 'certificate-not-trusted', 'validation-failure',
                    'tlsa-invalid', 'dnssec-invalid', 'dane-required', 'sts-policy-fetch-error', 'sts-policy-invalid', 'sts-webpki-invalid',
                  ],
                },
                'sending-mta-ip': { type: 'string' },
                'receiving-mx-hostname': { type: 'string' },
                'receiving-mx-helo': { type: 'string' },
                'receiving-ip': { type: 'string' },
                'failed-session-count': count,
                'additional-information': { type: 'string' },
                'failure-reason-code': { type: 'string' },
              },
            },
          },
        },
      },
    },
  },
};
