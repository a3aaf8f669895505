/** One table says how every error code travels on every face; the faces use it. */
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { TRPCError } from "@trpc/server";
import { describe, expect, test } from "vitest";
import { createCaller } from "@/server/api/router";
import { DomainError, ERROR_CODES, ERROR_FACES } from "@/server/core/errors";
import { asSent, unreached } from "../helpers/as-sent";

describe("the error table", () => {
  test.each(ERROR_CODES)("%s: the tRPC code tRPC answers with carries the same HTTP status the table gives", (code) => {
    const { http, trpc } = ERROR_FACES[code];
    expect(getHTTPStatusCodeFromError(new TRPCError({ code: trpc }))).toBe(http);
  });

  test("a tRPC caller without an actor gets UNAUTHORIZED with our UNAUTHENTICATED payload", async () => {
    const caller = createCaller({
      db: unreached("db"),
      actor: null,
      clock: () => new Date(),
      files: unreached("files"),
      live: unreached("live"),
      baseUrl: "http://localhost",
      callerNow: async () => null,
    });
    const error = await caller.read(asSent({ documentId: "x" })).catch((e: unknown) => e as TRPCError);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe("UNAUTHORIZED");
    expect(ERROR_FACES.UNAUTHENTICATED.trpc).toBe("UNAUTHORIZED");
  });

  test("codes are listed once, and a DomainError of each code keeps its code", () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const code of ERROR_CODES) expect(new DomainError(code, "m").toPayload().code).toBe(code);
  });
});
