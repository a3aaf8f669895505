"use server";

/** Creating a document from the documents home. The `documents` tool decides (guests cannot; paths are unique). */
import { runAsUser, type ActionResult } from "@/app/_lib/action-result";
import { getBridge } from "@/server/bridge";

const text = (value: unknown): string => (typeof value === "string" ? value.trim() : "");

export async function createDocument(input: { path: unknown; name: unknown }): Promise<ActionResult<{ documentId: string }>> {
  const name = text(input.name);
  return runAsUser("create document", async (userId) => {
    const created = await getBridge().callTool("documents", userId, {
      action: "create",
      path: text(input.path),
      ...(name ? { name } : {}),
    });
    return { documentId: created.documentId };
  });
}
