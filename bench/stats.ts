/** The middle value of `values` (the upper middle of an even count). */
export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
