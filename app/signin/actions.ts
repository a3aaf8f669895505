"use server";

/**
 * Creating the first (owner) account of a fresh instance. A server action,
 * not tRPC: nobody can be signed in yet. The input goes to the bridge as it
 * came; the account's zod schema there judges it (VALIDATION_FAILED with the
 * field at fault), and the bridge refuses with ALREADY_INITIALIZED once any
 * account exists, so this cannot add accounts later, whatever is posted.
 */
import { settle } from "@/app/_lib/action-result";
import { getBridge, type QuireBridge } from "@/server/bridge";

export async function createOwnerAccount(input: Parameters<QuireBridge["createOwner"]>[0]) {
  return settle("create owner", () => getBridge().createOwner(input));
}
