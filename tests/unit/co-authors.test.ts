/** Co-authors read from commit messages' trailers, as the history page shows them. */
import { describe, expect, test } from "vitest";
import { splitCoAuthors } from "@/server/core/commit-messages";

describe("splitCoAuthors", () => {
  test.each([
    {
      case: "a live commit crediting two editors",
      message:
        "Commit live edits to “Intro”\n\nCo-authored-by: Ada Lovelace <ada@example.test>\nCo-authored-by: Claude via Olivia Owner <olivia@example.test>",
      body: "Commit live edits to “Intro”",
      coAuthors: [
        { name: "Ada Lovelace", email: "ada@example.test" },
        { name: "Claude via Olivia Owner", email: "olivia@example.test" },
      ],
    },
    {
      case: "a body of several paragraphs, trailers any case, trailing newline",
      message: "Subject\n\nWhy it changed.\n\nco-authored-by: Bo <bo@example.test>\n",
      body: "Subject\n\nWhy it changed.",
      coAuthors: [{ name: "Bo", email: "bo@example.test" }],
    },
    {
      case: "a last paragraph that is not all trailers stays in the body",
      message: "Subject\n\nCo-authored-by: Bo <bo@example.test>\nand some words",
      body: "Subject\n\nCo-authored-by: Bo <bo@example.test>\nand some words",
      coAuthors: [],
    },
    { case: "no trailers", message: "Fix a typo", body: "Fix a typo", coAuthors: [] },
    {
      case: "a trailer without a name names the email",
      message: "Subject\n\nCo-authored-by: <x@example.test>",
      body: "Subject",
      coAuthors: [{ name: "x@example.test", email: "x@example.test" }],
    },
  ])("$case", ({ message, body, coAuthors }) => {
    expect(splitCoAuthors(message)).toEqual({ body, coAuthors });
  });
});
