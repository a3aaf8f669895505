/** What the `notifications` tool returns (its part of output-schemas.ts). */
import { z } from "zod";
import { EMAIL_SETTINGS, NOTIFICATION_KINDS } from "@/db/schema";
import { mergeActionOutputs, named } from "./flatten";

const notification = z.object({
  notificationId: z.string().describe("Pass to `mark_read`."),
  kind: named(z.enum(NOTIFICATION_KINDS)),
  title: named(z.string()),
  link: z.string().describe("Path on this site."),
  actorId: z.string().nullable().describe("Who did it."),
  actorName: named(z.string().nullable()),
  documentId: named(z.string()),
  mergeRequestId: named(z.string().nullable()),
  createdAt: named(z.string()),
  read: named(z.boolean()),
});

const marked = z.object({ marked: z.number().describe("Items marked read.") });
const settings = z.object({ email: z.enum(EMAIL_SETTINGS).describe("direct: review requests and mentions.") });

export const notificationsOutput = mergeActionOutputs({
  list: z.object({
    notifications: z.array(notification).describe("Newest first."),
    unreadCount: z.number().describe("Your unread items (up to 100)."),
    nextCursor: named(z.string().nullable()),
  }),
  mark_read: marked,
  mark_all_read: marked,
  get_settings: settings,
  set_settings: settings,
});
