/**
 * `isUnstorable` (the engine's own scans, asked at every keystroke) answers
 * exactly as the UNSTORABLE pattern the editor strips with.
 */
import { expect, test } from "vitest";
import { isUnstorable, UNSTORABLE } from "@/server/core/limits";

const HIGH = "\uD83D";
const LOW = "\uDE00";

test("isUnstorable agrees with UNSTORABLE on NUL, paired and lone surrogates anywhere", () => {
  const cases = [
    "",
    "plain text",
    "emoji \uD83D\uDE00 paired",
    "\u0000",
    "before\u0000after",
    HIGH,
    LOW,
    `${HIGH}x`,
    `x${HIGH}`,
    `${LOW}x`,
    `x${LOW}`,
    `${LOW}${HIGH}`,
    `${HIGH}${HIGH}${LOW}`,
    `${HIGH}${LOW}${LOW}`,
    `${HIGH}${LOW}${HIGH}${LOW}`,
    "\uFFFF\uE000 private use and non-characters",
  ];
  const expected = [false, false, false, true, true, true, true, true, true, true, true, true, true, true, false, false];
  expect(cases.map(isUnstorable)).toEqual(expected);
  expect(cases.map((text) => UNSTORABLE.test(text))).toEqual(expected);
});
