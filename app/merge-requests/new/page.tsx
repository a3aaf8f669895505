import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { AppShell } from "@/app/_components/app-shell";
import { failedPage } from "@/app/_components/error-panel";
import { PageHeading } from "@/app/_components/page-parts";
import { attempt, type BranchSummary, type CommitLog, commitLog, listBranches, UUID_PATTERN } from "@/app/_lib/quire";
import { firstParam, type SearchParams, withQuery } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";
import { CreateForm } from "./create-form";
import "../merge-requests.css";

export const metadata: Metadata = { title: "New merge request" };

export default async function NewMergeRequestPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const documentId = firstParam(query.documentId);
  const user = await requireUser(withQuery("/merge-requests/new", { documentId, source: firstParam(query.source) }));
  if (!documentId || !UUID_PATTERN.test(documentId)) notFound();
  const branches = await attempt(() => listBranches(user.id, documentId));
  if (!branches.ok) return failedPage(user, "Could not list the document's branches", branches);
  const main = branches.value.find((b) => b.isDefault)?.name ?? "main";
  const others = branches.value.filter((b) => !b.isDefault);
  const source = firstParam(query.source) ?? others[0]?.name ?? main;
  const target = firstParam(query.target) ?? main;
  // What the source brings: its commits the target's recent history does not hold (a title suggestion and the empty check).
  const [sourceLog, targetLog] = await Promise.all([
    attempt(() => commitLog(user.id, documentId, source)),
    attempt(() => commitLog(user.id, documentId, target)),
  ]);
  // A history that could not be read says so: it is never taken for an empty one ("nothing to merge").
  const unread = !sourceLog.ok ? { branch: source, failure: sourceLog } : !targetLog.ok ? { branch: target, failure: targetLog } : null;
  const onTarget = new Set(targetLog.ok ? targetLog.value.commits.map((c) => c.commitId) : []);
  const incoming: CommitLog["commits"] =
    sourceLog.ok && targetLog.ok ? sourceLog.value.commits.filter((c) => !onTarget.has(c.commitId)) : [];
  const suggestedTitle = incoming.length > 0 ? firstLineOf(incoming[incoming.length - 1]!.message) : `Merge ${source} into ${target}`;

  return (
    <AppShell user={user}>
      <PageHeading title="New merge request" description="Propose a branch's changes for review." />
      <CreateForm
        authorId={user.id}
        documentId={documentId}
        branches={branches.value.map((b: BranchSummary) => b.name)}
        source={source}
        target={target}
        suggestedTitle={incoming.length > 1 ? `${suggestedTitle} (+${incoming.length - 1} more)` : suggestedTitle}
        incoming={
          unread
            ? { unread: `Could not read the history of ${unread.branch}: ${unread.failure.message} (${unread.failure.code})` }
            : { commits: incoming.length }
        }
      />
    </AppShell>
  );
}

function firstLineOf(message: string): string {
  return message.split("\n")[0]!.slice(0, 300);
}
