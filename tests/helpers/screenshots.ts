/** Photographs of pages for docs/screenshots, at the two widths every page must fit. */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { expect, type Page } from "@playwright/test";
import { projectRoot } from "./server";

export const WIDE = { width: 1280, height: 900 };
export const NARROW = { width: 390, height: 844 };
export const SCREENSHOTS = path.join(projectRoot, "docs", "screenshots");

/** Full-page photographs at both widths, from the top (`<name>.png`, `<name>-390.png`); neither may scroll sideways. */
export async function photograph(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  for (const [suffix, viewport] of [
    ["", WIDE],
    ["-390", NARROW],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}${suffix}.png`), fullPage: true });
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect.soft(width, `${name} scrolls sideways at ${viewport.width} px`).toBeLessThanOrEqual(viewport.width);
  }
  await page.setViewportSize(WIDE);
}
