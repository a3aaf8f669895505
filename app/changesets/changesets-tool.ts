/** The `changesets` tool's calls for the changeset pages' client components (typed per action, refusals as values). */
import { toolCall } from "@/app/_lib/tool-call";
import { useTRPCClient } from "@/app/_lib/trpc";
import type { changesetsTool } from "@/server/actions/changesets";

export const useChangesetsTool = () => toolCall<typeof changesetsTool>(useTRPCClient().changesets.mutate);
