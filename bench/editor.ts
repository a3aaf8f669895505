/**
 * The editor in the browser (issue 14): how long a 2,000-section document
 * takes to open on its branch in Chromium until it is readable and ready to
 * type, beside the rendered commit view (no live layer) of the same document;
 * where the opening's time goes (server time to first byte, transfer size,
 * load event); and keystroke-to-paint in an editor while a peer types in the
 * same section, beside a plain textarea on the same page (typed in while the
 * peer types too, the same conditions, and alone as before). Each is measured
 * with the editor in its live preview and in markdown source (the editor
 * without the preview), opened in turn so both meet the same load.
 *
 *   npx next build && node --import tsx bench/editor.ts
 *
 * Environment (all optional):
 *   TEST_DATABASE_URL / DATABASE_URL  PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
 *                                     the bench creates and drops its own database there.
 *   CHROMIUM_PATH=/usr/bin/chromium   the browser (headless)
 *   BENCH_OPENS=7                     measured opens of each page (after one warm-up each); medians are reported
 *   BENCH_SECTIONS=2000               sections in the long document
 *
 * Times are the page's own clock, from the start of its navigation: Navigation
 * Timing gives time to first byte, the load event and the transfer size; the
 * moments the first section's room synced and its editor became editable are
 * read with the browser's querySelector on a 10 ms timer (see `appearedAt`). Typing is
 * measured two ways: the browser's Event Timing (a key's `duration` runs from
 * the key event to the paint after it, in 8 ms steps, and only keys of 16 ms
 * or more are reported, so the others count as 0), and, to the millisecond,
 * from the key event to the task that follows the next frame's rendering on
 * the page's main thread. Layout shift: the page's cumulative layout shift
 * (Layout Instability API, shifts of what is on screen) from its start until
 * 1.5 s after the first editor became editable, while the sections near the
 * screen swap their placeholders for editors.
 */
import os from "node:os";
import type { Page } from "playwright-core";
import { launchChromium, signInPage } from "../tests/helpers/browser";
import { WIDE } from "../tests/helpers/screenshots";
import { startTestServer } from "../tests/helpers/server";

process.env.TEST_DATABASE_URL ??= process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const OPENS = Number(process.env.BENCH_OPENS ?? 7);
const SECTIONS = Number(process.env.BENCH_SECTIONS ?? 2_000);
const PASSWORD = "correct horse battery";
/**
 * A section's text, with the markdown the live preview renders (marks, a link, code, a list, a heading), so the editor's
 * decorations are in the measurement, and a placeholder that drew the text otherwise than its editor would show as a shift.
 */
const PARAGRAPH = (i: number) =>
  `Paragraph ${i + 1} of a **long** document, with a [link](https://example.test/${i + 1}) and \`code\`.\n\n- one point\n- another point\n\n### Next steps\n\nMore text.`;

const log = (...args: unknown[]) => console.log(...args);
const text = (t: string) => ({ blockType: "text" as const, text: t });
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
const range = (values: number[]) => `${Math.min(...values)}-${Math.max(...values)}`;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** The page's own Navigation Timing for the last load (after its load event): time to first byte, the load event, and bytes of the HTML document. */
const navigation = async (page: Page) => {
  await page.waitForFunction(() => (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming).loadEventEnd > 0);
  return page.evaluate(() => {
    const entry = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
    return {
      ttfbMs: Math.round(entry.responseStart),
      loadMs: Math.round(entry.loadEventEnd),
      htmlKb: Math.round(entry.encodedBodySize / 1024),
    };
  });
};

/**
 * When, in the page's own clock (ms since its navigation started), an element
 * matching `selector` was first seen. Looked for with the browser's
 * querySelector every 10 ms on a timer: Playwright's own waiting polls its
 * selector engine on every animation frame, which makes the page render a
 * frame each time (and run content-visibility's intersection checks over all
 * 2,000 sections), work no reader's browser does.
 */
const appearedAt = (page: Page, selector: string) =>
  page
    .waitForFunction((wanted) => (document.querySelector(wanted) ? Math.round(performance.now()) : 0), selector, { polling: 10 })
    .then((handle) => handle.jsonValue());

/** The page's cumulative layout shift so far (shifts right after input excluded, as the metric does). */
const layoutShift = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        // No named function inside: the page runs this as written, without the bundler's name helper.
        type Shift = PerformanceEntry & { value: number; hadRecentInput: boolean };
        let sum = 0;
        const observer = new PerformanceObserver((list) => {
          for (const entry of list.getEntries() as Shift[]) if (!entry.hadRecentInput) sum += entry.value;
        });
        observer.observe({ type: "layout-shift", buffered: true });
        setTimeout(() => {
          for (const entry of observer.takeRecords() as Shift[]) if (!entry.hadRecentInput) sum += entry.value;
          observer.disconnect();
          resolve(Math.round(sum * 10_000) / 10_000);
        }, 50);
      }),
  );

const server = await startTestServer({ next: true });
try {
  const olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  const mo = await server.createUser("mo@example.test", "Mo Member", PASSWORD);
  const big = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "bench/long",
    name: "Long document",
    sections: Array.from({ length: SECTIONS }, (_, i) => ({
      name: `Part ${i + 1}`,
      content: [text(PARAGRAPH(i))],
    })),
  });
  await server.callTool("documents", olive.userId, {
    action: "set_permissions",
    documentId: big.documentId,
    grants: [{ userId: mo.userId, permission: "edit" }],
  });
  const firstSection = `[data-section-id="${big.sectionIds[0]}"]`;
  const firstEditor = `${firstSection} [data-testid="editor-prose"] .cm-content`;

  const browser = await launchChromium();
  const signIn = async (email: string) =>
    signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email, password: PASSWORD });
  const page = await signIn(olive.email);
  page.setDefaultTimeout(60_000);

  log(`editor bench: ${SECTIONS} sections, ${OPENS} opens each, load average before ${load()}`);
  const commitView = `${server.url}/documents/${big.documentId}?commit=${big.commitId}`;
  const livePage = `${server.url}/documents/${big.documentId}?branch=main`;
  /** The editor's modes, opened in turn on every round so both meet the same load: the live preview, and the markdown source (the editor as it was before the preview). */
  const MODES = ["preview", "source"] as const;
  type Mode = (typeof MODES)[number];
  /** Picks the mode the next open of the document uses, as its switch does (app/documents/[documentId]/live/preview/mode.tsx); the page must be on the server's origin. */
  const useMode = (on: Page, mode: Mode) =>
    on.evaluate(([key, wanted]) => (wanted === "source" ? localStorage.setItem(key, wanted) : localStorage.removeItem(key)), [
      `quire:editor-mode:${big.documentId}`,
      mode,
    ] as const);
  const rendered = { loadMs: [] as number[], ttfbMs: [] as number[], htmlKb: [] as number[] };
  const opened = () => ({
    loadMs: [] as number[],
    ttfbMs: [] as number[],
    htmlKb: [] as number[],
    syncedMs: [] as number[],
    readyMs: [] as number[],
    editors: [] as number[],
    shift: [] as number[],
  });
  const live: Record<Mode, ReturnType<typeof opened>> = { preview: opened(), source: opened() };
  await page.goto(commitView);
  await page.goto(livePage);
  await page.waitForSelector(`${firstEditor}[contenteditable="true"]`);
  for (let i = 0; i < OPENS; i++) {
    await page.goto(commitView);
    const renderedNav = await navigation(page);
    rendered.loadMs.push(renderedNav.loadMs);
    rendered.ttfbMs.push(renderedNav.ttfbMs);
    rendered.htmlKb.push(renderedNav.htmlKb);

    // Alternating which mode opens first, so neither always follows the commit view.
    for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) {
      await useMode(page, mode);
      await page.goto(livePage, { waitUntil: "commit" });
      live[mode].syncedMs.push(await appearedAt(page, `${firstSection}[data-synced="true"]`));
      live[mode].readyMs.push(await appearedAt(page, `${firstEditor}[contenteditable="true"]`));
      await page.waitForTimeout(1_500);
      live[mode].shift.push(await layoutShift(page));
      live[mode].editors.push(await page.locator(".cm-editor").count());
      const liveNav = await navigation(page);
      live[mode].loadMs.push(liveNav.loadMs);
      live[mode].ttfbMs.push(liveNav.ttfbMs);
      live[mode].htmlKb.push(liveNav.htmlKb);
    }
  }
  const row = (what: string, values: number[], unit = "ms") =>
    log(`  ${what.padEnd(44)} median ${median(values)} ${unit} (${range(values)})`);
  log("rendered commit view (no live layer):");
  row("time to first byte", rendered.ttfbMs);
  row("HTML transferred", rendered.htmlKb, "KiB");
  row("load event", rendered.loadMs);
  for (const mode of MODES) {
    log(`live page on its branch, ${mode === "preview" ? "live preview" : "markdown source"}:`);
    row("time to first byte", live[mode].ttfbMs);
    row("HTML transferred", live[mode].htmlKb, "KiB");
    row("load event (readable)", live[mode].loadMs);
    row("first section's room synced", live[mode].syncedMs);
    row("ready to type (first editor mounted)", live[mode].readyMs);
    row("editors mounted (1.5 s after ready)", live[mode].editors, "");
    row("layout shift until then (CLS)", live[mode].shift, "");
  }

  // Typing: Mo types at the end of the first section's first line while Olive types at its start; then a plain textarea on Olive's page.
  const peer = await signIn(mo.email);
  peer.setDefaultTimeout(60_000);
  await peer.goto(livePage);
  await peer.locator(firstEditor).click();
  await peer.keyboard.press("End");
  /** Counts keys and their timings on the page from now on, and puts a plain textarea at its top. */
  const watchKeys = () =>
    page.evaluate(() => {
      const timings = { keys: 0, slow: [] as number[], toFrame: [] as number[] };
      (window as { keyTimings?: typeof timings }).keyTimings = timings;
      document.addEventListener(
        "keydown",
        (event) => {
          timings.keys++;
          // The task after the next frame's rendering: what the key cost the page's main thread, to the millisecond.
          requestAnimationFrame(() => setTimeout(() => timings.toFrame.push(performance.now() - event.timeStamp)));
        },
        true,
      );
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) if (entry.name === "keydown") timings.slow.push(entry.duration);
      }).observe({ type: "event", durationThreshold: 16 } as PerformanceObserverInit);
      const plain = document.createElement("textarea");
      plain.id = "plain-textarea";
      plain.setAttribute("aria-label", "Plain textarea");
      document.body.prepend(plain);
    });
  /** Typed keys' median and slowest time to paint (keys under 16 ms count as 0), from the timings gathered since the last call. */
  const measure = async (type: () => Promise<unknown>) => {
    await type();
    await page.waitForTimeout(300);
    const taken = await page.evaluate(() => {
      const timings = (window as { keyTimings?: { keys: number; slow: number[]; toFrame: number[] } }).keyTimings!;
      const copy = { keys: timings.keys, slow: [...timings.slow], toFrame: [...timings.toFrame] };
      timings.keys = 0;
      timings.slow = [];
      timings.toFrame = [];
      return copy;
    });
    const all = [...taken.slow, ...Array<number>(Math.max(0, taken.keys - taken.slow.length)).fill(0)];
    const toFrame = [...taken.toFrame].sort((a, b) => a - b);
    return {
      keys: taken.keys,
      median: median(all),
      max: Math.max(...all),
      toFrameMedian: median(toFrame).toFixed(1),
      toFrameP90: toFrame[Math.floor(toFrame.length * 0.9)]!.toFixed(1),
    };
  };
  const sentence = "Measured typing while a peer types in the same section. ";
  for (const mode of MODES) {
    await useMode(page, mode);
    await page.goto(livePage);
    await page.waitForSelector(`${firstEditor}[contenteditable="true"]`);
    await watchKeys();
    await page.locator("#plain-textarea").click();
    const plain = await measure(() => page.keyboard.type(sentence, { delay: 30 }));
    /** Types the sentence on Olive's page while Mo types in the first section, whatever Olive's focus is in. */
    const withPeer = () =>
      Promise.all([
        peer.keyboard.type(" The peer keeps typing through all of this.", { delay: 30 }),
        page.keyboard.type(sentence, { delay: 30 }),
      ]);
    // The textarea as well while the peer types: Olive's page takes in the peer's updates (the first section's room is open)
    // whichever element she types in, so this is the baseline the editor is compared with, under the same conditions.
    const plainWithPeer = await measure(withPeer);
    await page.locator(firstEditor).click();
    await page.keyboard.press("Home");
    const editor = await measure(withPeer);
    log(`typing, ${mode === "preview" ? "live preview" : "markdown source"}:`);
    log("  keystroke to paint (Event Timing duration):");
    log(`    editor, peer typing in the same section     median ${editor.median} ms, max ${editor.max} ms over ${editor.keys} keys`);
    log(
      `    plain textarea on the same page, peer typing median ${plainWithPeer.median} ms, max ${plainWithPeer.max} ms over ${plainWithPeer.keys} keys`,
    );
    log(`    plain textarea, no peer typing              median ${plain.median} ms, max ${plain.max} ms over ${plain.keys} keys`);
    log("  keystroke to the end of the next frame on the page's main thread (event time to a task queued from requestAnimationFrame):");
    log(`    editor, peer typing in the same section     median ${editor.toFrameMedian} ms, p90 ${editor.toFrameP90} ms`);
    log(`    plain textarea on the same page, peer typing median ${plainWithPeer.toFrameMedian} ms, p90 ${plainWithPeer.toFrameP90} ms`);
    log(`    plain textarea, no peer typing              median ${plain.toFrameMedian} ms, p90 ${plain.toFrameP90} ms`);
    log(
      `    editor / textarea with the peer typing      ${(Number(editor.toFrameMedian) / Number(plainWithPeer.toFrameMedian)).toFixed(2)}x (target 1.1x)`,
    );
  }
  log(`load average after ${load()}`);
  await browser.close();
} finally {
  await server.close();
}
