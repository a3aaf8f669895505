/** Generated commit messages that git users would recognise. */
import { MAX_COMMIT_MESSAGE_CHARS } from "./names";

/**
 * "Merge branch 'source' into 'target'", then the subject line of each source
 * commit since the merge base, oldest first (like `git merge --log`).
 */
export function mergeCommitMessage(sourceBranch: string, targetBranch: string, sourceMessages: readonly string[]): string {
  const title = `Merge branch '${sourceBranch}' into '${targetBranch}'`;
  if (sourceMessages.length === 0) return title;
  const subjects = sourceMessages.map((m) => `* ${m.split("\n", 1)[0]!.trim()}`);
  return `${title}\n\n${subjects.join("\n")}`;
}

export const exceedsCommitMessageLimit = (message: string): boolean => message.length > MAX_COMMIT_MESSAGE_CHARS;
