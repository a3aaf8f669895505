/** Generated commit messages that git users would recognise. */
import { actingName } from "./agents";
import { MAX_COMMIT_MESSAGE_CHARS, quoteForMessage } from "./names";

/**
 * Written instead of the subject of a commit that touched a section some
 * reader of the document may not see: a generated message is stored once and
 * read by everyone, so it never quotes such a subject.
 */
export const RESTRICTED_SUBJECT = "(changes to sections not everyone can see)";

/** The first line of a commit message. */
export const subjectOf = (message: string): string => message.split("\n", 1)[0]!.trim();

/**
 * "Merge branch 'source' into 'target'", then the subject line of each source
 * commit since the merge base, oldest first (like `git merge --log`); `null`
 * stands for a subject that must not be quoted.
 */
export function mergeCommitMessage(sourceBranch: string, targetBranch: string, sourceMessages: ReadonlyArray<string | null>): string {
  const title = `Merge branch '${sourceBranch}' into '${targetBranch}'`;
  if (sourceMessages.length === 0) return title;
  const subjects = sourceMessages.map((m) => `* ${m === null ? RESTRICTED_SUBJECT : subjectOf(m)}`);
  return `${title}\n\n${subjects.join("\n")}`;
}

/**
 * `Revert to 1c59ab12 ("Create document "handbook/onboarding"")`: the reverted
 * commit's subject as text, or only its id when the subject must not be quoted.
 */
export function revertCommitMessage(commitId: string, message: string | null): string {
  const short = commitId.slice(0, 8);
  return message === null ? `Revert to ${short}` : `Revert to ${short} (${quoteForMessage(subjectOf(message))})`;
}

export const exceedsCommitMessageLimit = (message: string): boolean => message.length > MAX_COMMIT_MESSAGE_CHARS;

/** A person credited on a commit by a `Co-authored-by: Name <email>` trailer. */
export interface CoAuthor {
  name: string;
  email: string;
}

/**
 * The `Co-authored-by:` line crediting a person, or an agent acting for them as history names it ("Claude via Olivia
 * Owner <olivia@…>": the person's email, since an agent has none of its own).
 */
export function coAuthorTrailer(person: CoAuthor, agent: { name: string } | null): string {
  return `Co-authored-by: ${actingName(person.name, agent)} <${person.email}>`;
}

const CO_AUTHOR_TRAILER = /^co-authored-by:\s*(.*?)\s*<([^<>]*)>\s*$/i;

/**
 * A commit message split into what its author wrote and the people its `Co-authored-by:` trailers credit (git's
 * trailer block: the last paragraph, when every line of it is such a trailer), so pages can show them as people.
 * A message without that block is all body.
 */
export function splitCoAuthors(message: string): { body: string; coAuthors: CoAuthor[] } {
  const trimmed = message.trimEnd();
  const blockStart = trimmed.lastIndexOf("\n\n");
  const block = trimmed.slice(blockStart + 2).split("\n");
  const coAuthors: CoAuthor[] = [];
  for (const line of block) {
    const match = CO_AUTHOR_TRAILER.exec(line.trim());
    if (!match) return { body: message, coAuthors: [] };
    coAuthors.push({ name: match[1] || match[2]!, email: match[2]! });
  }
  return { body: blockStart === -1 ? "" : trimmed.slice(0, blockStart), coAuthors };
}
