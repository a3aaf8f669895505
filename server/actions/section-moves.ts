/**
 * `sections` `move`: one section to a new place, named by the section it goes
 * before — what the editor's drag and its move up/down buttons ask. The place
 * is found in the branch as the write finds it (not in an order read earlier
 * by the caller, which another write could have changed in between), among
 * the sections the caller sees; hidden sections keep their slots, as with
 * `reorder`.
 */
import { z } from "zod";
import { notFound } from "@/server/core/errors";
import { quoteForMessage } from "@/server/core/names";
import { sectionRules, visibleEntries } from "@/server/access/documents";
import { assertNotDeleted, writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { loadSection, sectionWriteFields, withSections } from "./section-target";
import { uuidSchema } from "./tool";

const moveInput = z.strictObject({
  action: z.literal("move"),
  documentId: sectionWriteFields.documentId,
  branchName: sectionWriteFields.branchName,
  sectionId: sectionWriteFields.sectionId,
  beforeSectionId: uuidSchema.nullable().describe("Section to precede; null: the end."),
  commitMessage: sectionWriteFields.commitMessage,
});

/** The input schemas of these actions, in the order agents read them. */
export const moveActionInputs = [moveInput] as const;

function move(ctx: ActionContext, input: z.output<typeof moveInput>) {
  return writeBranch(ctx, input, "edit", async (state, tx, access) => {
    assertNotDeleted(state.tree, input.branchName);
    const moved = await loadSection(tx, state, access, input.sectionId, "read");
    const rules = await sectionRules(tx, access, state.branch.name);
    const visible = new Map((await visibleEntries(rules, state.tree, state.loadSections)).map((e) => [e.sectionId, e]));
    const order = [...visible.keys()].filter((id) => id !== moved.sectionId);
    const before = input.beforeSectionId;
    if (before !== null && before !== moved.sectionId && !visible.has(before)) {
      throw notFound(
        "Section",
        before,
        `The place to move to is not on branch ${JSON.stringify(state.branch.name)}; \`read\` lists its sections.`,
      );
    }
    // Before itself is where it is: the write changes nothing (and makes no commit).
    const at = before === null ? order.length : before === moved.sectionId ? [...visible.keys()].indexOf(before) : order.indexOf(before);
    order.splice(at, 0, moved.sectionId);
    const placed = order[Symbol.iterator]();
    const sections = state.tree.sections.map((e) => (visible.has(e.sectionId) ? visible.get(placed.next().value as string)! : e));
    return {
      tree: withSections(state.tree, sections),
      message: `Move section ${quoteForMessage(moved.version.name)}`,
      result: { sectionId: moved.sectionId },
    };
  });
}

export const moveHandlers = { move };
