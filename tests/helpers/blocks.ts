/** Content blocks as tests write them. */
export const text = (t: string) => ({ blockType: "text" as const, text: t });
