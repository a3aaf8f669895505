/**
 * The access policy as a table: role × the subject's standing on the document
 * (team default, grant, share link) × section overrides × person or agent →
 * edit / read / none. Each row is written out by hand, not computed, so the
 * table states the rules README "Access" documents.
 */
import { describe, expect, test } from "vitest";
import type { Role } from "@/db/schema";
import type { Permission } from "@/server/core/document-model";
import {
  AGENT_CANNOT_CHANGE_ACCESS,
  type AccessSubject,
  accessChangeRefusal,
  agentCapBelow,
  canManageDocument,
  type DocumentFacts,
  documentPermission,
  isRestrictedSection,
  type Principal,
  type SectionOverrides,
  sectionPermission,
} from "@/server/policies/access";

const CREATOR = "00000000-0000-4000-8000-00000000c0de";
const SOMEONE = "00000000-0000-4000-8000-0000000000aa";

const person = (role: Role, userId = SOMEONE): AccessSubject => ({ kind: "member", userId, role, principal: "person" });
const agent = (role: Role, userId = SOMEONE): AccessSubject => ({ kind: "member", userId, role, principal: "agent" });
const link = (permission: Permission): AccessSubject => ({ kind: "share", permission });
const doc = (facts: Partial<DocumentFacts> = {}): DocumentFacts => ({
  createdBy: CREATOR,
  defaultPermission: "edit",
  aiAccess: "edit",
  grant: null,
  ...facts,
});
const section = (defaultPermission: Permission | null, aiAccess: Permission | null = null): SectionOverrides => ({
  defaultPermission,
  aiAccess,
});

type Row = [label: string, subject: AccessSubject, facts: DocumentFacts, overrides: SectionOverrides | null, expected: Permission];

const ROWS: Row[] = [
  // Managers see and edit everything, hidden sections included.
  ["owner, team none, section none", person("owner"), doc({ defaultPermission: "none" }), section("none"), "edit"],
  ["admin, section none", person("admin"), doc(), section("none"), "edit"],
  ["creator (a member), team none, section none", person("member", CREATOR), doc({ defaultPermission: "none" }), section("none"), "edit"],
  ["guest who created the document, section none", person("guest", CREATOR), doc({ defaultPermission: "none" }), section("none"), "edit"],

  // Members without a grant: the section override replaces the team default.
  ["member, team edit", person("member"), doc(), null, "edit"],
  ["member, team read", person("member"), doc({ defaultPermission: "read" }), null, "read"],
  ["member, team none", person("member"), doc({ defaultPermission: "none" }), null, "none"],
  ["member, team edit, section none", person("member"), doc(), section("none"), "none"],
  ["member, team edit, section read", person("member"), doc(), section("read"), "read"],
  ["member, team read, section edit", person("member"), doc({ defaultPermission: "read" }), section("edit"), "edit"],
  ["member, team none, section edit", person("member"), doc({ defaultPermission: "none" }), section("edit"), "none"],

  // Members with a grant: the grant replaces the team default for the document; a section gets the most restrictive of grant and override.
  ["member, grant edit, team none", person("member"), doc({ defaultPermission: "none", grant: "edit" }), null, "edit"],
  [
    "member, grant edit, team none, section (no override)",
    person("member"),
    doc({ defaultPermission: "none", grant: "edit" }),
    section(null),
    "edit",
  ],
  [
    "member, grant edit, team none, section none",
    person("member"),
    doc({ defaultPermission: "none", grant: "edit" }),
    section("none"),
    "none",
  ],
  ["member, grant edit, section read", person("member"), doc({ grant: "edit" }), section("read"), "read"],
  ["member, grant edit, section edit", person("member"), doc({ defaultPermission: "read", grant: "edit" }), section("edit"), "edit"],
  ["member, grant read, team edit", person("member"), doc({ grant: "read" }), null, "read"],
  ["member, grant read, section edit", person("member"), doc({ grant: "read" }), section("edit"), "read"],
  ["member, grant read, section none", person("member"), doc({ grant: "read" }), section("none"), "none"],
  ["member, grant none, team edit", person("member"), doc({ grant: "none" }), null, "none"],
  ["member, grant none, section edit", person("member"), doc({ grant: "none" }), section("edit"), "none"],

  // Guests: only a grant opens a document, and it never opens a hidden section.
  ["guest without grant, team edit", person("guest"), doc(), null, "none"],
  ["guest without grant, section edit", person("guest"), doc(), section("edit"), "none"],
  ["guest, grant read", person("guest"), doc({ grant: "read" }), null, "read"],
  ["guest, grant edit, section none", person("guest"), doc({ grant: "edit" }), section("none"), "none"],
  ["guest, grant edit, section read", person("guest"), doc({ grant: "edit" }), section("read"), "read"],
  ["guest, grant read, section edit", person("guest"), doc({ grant: "read" }), section("edit"), "read"],

  // Share links: the link's permission on the document, capped by every section override.
  ["read link, team none", link("read"), doc({ defaultPermission: "none" }), null, "read"],
  ["read link, section (no override)", link("read"), doc(), section(null), "read"],
  ["read link, section none", link("read"), doc(), section("none"), "none"],
  ["read link, section edit", link("read"), doc(), section("edit"), "read"],
  ["edit link, section read", link("edit"), doc(), section("read"), "read"],
  ["edit link, section edit", link("edit"), doc({ defaultPermission: "none" }), section("edit"), "edit"],
  ["edit link, section none", link("edit"), doc(), section("none"), "none"],
  ["read link, section with AI none (links are not agents)", link("read"), doc({ aiAccess: "none" }), section(null, "none"), "read"],

  // Agents (every API-token call): capped by aiAccess, the section's override else the document's.
  ["owner's agent, aiAccess edit", agent("owner"), doc(), null, "edit"],
  ["owner's agent, aiAccess read", agent("owner"), doc({ aiAccess: "read" }), null, "read"],
  ["owner's agent, aiAccess none", agent("owner"), doc({ aiAccess: "none" }), null, "none"],
  ["owner's agent, team-hidden section (owners see it)", agent("owner"), doc(), section("none"), "edit"],
  ["owner's agent, section AI none", agent("owner"), doc(), section(null, "none"), "none"],
  ["owner's agent, document AI none, section AI edit", agent("owner"), doc({ aiAccess: "none" }), section(null, "edit"), "none"],
  ["member's agent, document AI read, section AI edit", agent("member"), doc({ aiAccess: "read" }), section(null, "edit"), "edit"],
  ["member's agent, team read, aiAccess edit", agent("member"), doc({ defaultPermission: "read" }), null, "read"],
  ["member's agent, section read", agent("member"), doc(), section("read"), "read"],
  ["member's agent, grant edit, section none", agent("member"), doc({ defaultPermission: "none", grant: "edit" }), section("none"), "none"],
  ["guest's agent, grant edit, aiAccess read", agent("guest"), doc({ grant: "edit", aiAccess: "read" }), null, "read"],
  ["guest's agent, grant edit, section read, section AI edit", agent("guest"), doc({ grant: "edit" }), section("read", "edit"), "read"],
];

describe("permission table", () => {
  test.each(ROWS)("%s", (_label, subject, facts, overrides, expected) => {
    const got = overrides ? sectionPermission(subject, facts, overrides) : documentPermission(subject, facts);
    expect(got).toBe(expected);
  });
});

describe("a section with defaultPermission none", () => {
  const PERMISSIONS: Permission[] = ["none", "read", "edit"];
  const GRANTS: Array<Permission | null> = [null, ...PERMISSIONS];
  const belowManager: AccessSubject[] = [
    ...(["member", "guest"] as const).flatMap((role) =>
      (["person", "agent"] as Principal[]).map((p) => ({ kind: "member" as const, userId: SOMEONE, role, principal: p })),
    ),
    link("read"),
    link("edit"),
  ];

  test("is hidden from every principal below manager, whatever grant, link, team default or aiAccess", () => {
    for (const subject of belowManager) {
      for (const grant of GRANTS) {
        for (const defaultPermission of PERMISSIONS) {
          for (const aiAccess of PERMISSIONS) {
            for (const sectionAi of GRANTS) {
              const facts = doc({ defaultPermission, aiAccess, grant: subject.kind === "share" ? null : grant });
              expect(sectionPermission(subject, facts, section("none", sectionAi)), JSON.stringify({ subject, facts, sectionAi })).toBe(
                "none",
              );
            }
          }
        }
      }
    }
  });

  test("a section override never lifts a grant or link holder above what the grant or link gives", () => {
    for (const subject of [...belowManager.filter((s) => s.kind === "share"), person("member"), person("guest")]) {
      for (const grant of PERMISSIONS) {
        for (const override of PERMISSIONS) {
          const facts = doc({ defaultPermission: "read", grant: subject.kind === "share" ? null : grant });
          const held = documentPermission(subject, facts);
          const got = sectionPermission(subject, facts, section(override));
          expect(["none", "read", "edit"].indexOf(got)).toBeLessThanOrEqual(["none", "read", "edit"].indexOf(held));
        }
      }
    }
  });
});

describe("changing access", () => {
  test("only a person may; an agent is refused with the reason, whatever its role", () => {
    expect(accessChangeRefusal("person")).toBeNull();
    expect(accessChangeRefusal("agent")).toEqual({ code: "PERMISSION_DENIED", message: AGENT_CANNOT_CHANGE_ACCESS });
    expect(AGENT_CANNOT_CHANGE_ACCESS).toBe(
      "An API token acts as an agent; agents cannot change access, roles, invites, tokens or the workspace's settings. Sign in to do this.",
    );
  });

  test.each([
    ["owner in person", person("owner"), true],
    ["admin in person", person("admin"), true],
    ["creator in person", person("member", CREATOR), true],
    ["owner's agent", agent("owner"), false],
    ["creator's agent", agent("member", CREATOR), false],
    ["member with an edit grant", person("member"), false],
    ["edit link", link("edit"), false],
  ] as const)("%s manages the document: %s", (_label, subject, expected) => {
    expect(canManageDocument(subject, doc({ grant: "edit" }))).toBe(expected);
  });
});

describe("naming the reason for a refusal", () => {
  test("the agent cap is the reason only when the person would be allowed", () => {
    expect(agentCapBelow(agent("owner"), doc({ aiAccess: "read" }), "edit")).toBe(true);
    expect(agentCapBelow(agent("member"), doc({ defaultPermission: "read" }), "edit")).toBe(false);
    expect(agentCapBelow(agent("owner"), doc(), "edit", section(null, "read"))).toBe(true);
    expect(agentCapBelow(person("owner"), doc({ aiAccess: "read" }), "edit")).toBe(false);
    expect(agentCapBelow(link("read"), doc(), "edit")).toBe(false);
  });

  test("a restricted section is one some reader of the document cannot see", () => {
    expect(isRestrictedSection(section("none"))).toBe(true);
    expect(isRestrictedSection(section(null, "none"))).toBe(true);
    expect(isRestrictedSection(section("read", "read"))).toBe(false);
    expect(isRestrictedSection(section(null))).toBe(false);
  });
});
