/** The section-change worker thread: answers each request with `sectionChangeOnState` (see section-change.ts). */
import { parentPort } from "node:worker_threads";
import { type SectionChangeAnswer, type SectionChangeRequest, sectionChangeOnState } from "./section-change";

parentPort?.on("message", ({ id, state, from, next }: SectionChangeRequest) => {
  let answer: SectionChangeAnswer;
  try {
    answer = { id, update: sectionChangeOnState(state, from, next) };
  } catch (error) {
    answer = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(answer, "update" in answer && answer.update ? [answer.update.buffer as ArrayBuffer] : []);
});
