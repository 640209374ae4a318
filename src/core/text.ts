/** Length in characters (code points), as JSON Schema's maxLength counts them: an emoji is one character, not two. */
export const charLength = (s: string): number => [...s].length;
