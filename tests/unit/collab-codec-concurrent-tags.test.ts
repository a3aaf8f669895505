/**
 * A committed change that replaces a comment's tags (a new comment's tags
 * becoming its id's) while someone types right outside the comment: the
 * typing stays outside, whichever client id Yjs orders the two insertions by
 * (the live fuzzer's seed 259430 had a peer's edit refused as altering the
 * comment, its text having landed inside it).
 */
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import { applyTextChange } from "@/server/collab/codec";

const NEW = '<svc:comment-new body="about">';
const NEW_END = "</svc:comment-new>";
const ID = '<svc:comment id="0b7d3a52-1f7e-4d8e-9a51-5a3f9c2f4d10">';
const END = "</svc:comment>";

/** The server's doc and a peer's, both on `base`; the peer types at `at` while the server applies base → next; both exchange. */
function concurrently(base: string, next: string, at: (t: string) => number, typed: string, peerClientId: number): string {
  const server = new Y.Doc();
  server.clientID = 1_000_000;
  server.getText("t").insert(0, base);
  const peer = new Y.Doc();
  peer.clientID = peerClientId;
  Y.applyUpdate(peer, Y.encodeStateAsUpdate(server));
  const peerBefore = Y.encodeStateVector(peer);
  const serverBefore = Y.encodeStateVector(server);
  peer.getText("t").insert(at(base), typed);
  applyTextChange(server.getText("t"), base, next);
  Y.applyUpdate(server, Y.encodeStateAsUpdate(peer, serverBefore));
  Y.applyUpdate(peer, Y.encodeStateAsUpdate(server, peerBefore));
  expect(peer.getText("t").toString()).toBe(server.getText("t").toString());
  return server.getText("t").toString();
}

describe("a comment's tags replaced while someone types at its edge", () => {
  const base = `a ${NEW}t${NEW_END} b`;
  const next = `a ${ID}t${END} b`;
  for (const peerClientId of [1, 2_000_000]) {
    it(`keeps text typed right after the closing tag outside the comment (peer client id ${peerClientId})`, () => {
      expect(concurrently(base, next, (t) => t.indexOf(NEW_END) + NEW_END.length, "P", peerClientId)).toBe(`a ${ID}t${END}P b`);
    });
    it(`keeps text typed right before the opening tag outside the comment (peer client id ${peerClientId})`, () => {
      expect(concurrently(base, next, (t) => t.indexOf(NEW), "P", peerClientId)).toBe(`a P${ID}t${END} b`);
    });
  }
});
