/**
 * The characters dropped from every text before it is framed for a model (src/safety/frame.ts)
 * or cut into words (src/search/text.ts): format characters (zero-width space/non-joiner/joiner,
 * word joiner, BOM, bidi controls, soft hyphen, tag characters), variation selectors, fillers,
 * controls but \t \n. A module of its own, so the tokenizer does not load the frame's rules.
 */
export const INVISIBLE =
  /[\p{Cf}\u115F\u1160\u180E\u3164\uFFA0\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|\p{Variation_Selector}|\u034F|\u17B4|\u17B5|\u180B|\u180C|\u180D|\u180F/gu;
