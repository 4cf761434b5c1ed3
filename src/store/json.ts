// The tables keep lists and objects as JSON text (see schema.ts); the store modules turn them into
// values as rows are read and back into text as rows are written, with these.

/** A nullable column's text: null stays SQL NULL (not the text "null"). */
export const json = (value: unknown): string | null => (value === null ? null : JSON.stringify(value));

/** A nullable column's value. */
export const parsed = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
