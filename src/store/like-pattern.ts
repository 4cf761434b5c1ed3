/** `text` inside a LIKE pattern (`... like ? escape '\'`), its wildcards escaped: a "contains" search. */
export const contains = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`;
