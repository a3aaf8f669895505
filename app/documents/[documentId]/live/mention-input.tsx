"use client";

/**
 * A comment or reply box where typing `@` offers the workspace's members: a
 * listbox of those the server's search finds for what follows the `@` (start
 * of a name, of a word of it, or of an email; a bare `@` lists the first by
 * name), ↑/↓ to move, Enter or Tab to pick, Escape to close (the combobox
 * pattern: focus stays in the box, the active option is
 * `aria-activedescendant`). Picking writes `@Name` into the text; the people
 * whose `@Name` is still in the text when it is sent are its mentions
 * (`mentionedIn`), told in their inbox by the server.
 */
import { type KeyboardEvent, useId, useState } from "react";
import { useMemberSearch } from "@/app/_components/member-picker";
import { MAX_COMMENT_BODY_CHARS } from "@/server/core/comment-markup";
import "./mention-input.css";

export interface Member {
  userId: string;
  name: string;
  email: string;
}

/** At most this many people are offered at once (more typing finds others). */
const SHOWN = 8;
/** The `@query` just before the caret: at the start or after a space, up to the caret, with no space in it. */
const TYPED_MENTION = /(^|\s)@([^\s@]*)$/u;

/** The members whose `@Name` is in the text: whom it mentions. */
export function mentionedIn(text: string, picked: readonly Member[]): string[] {
  return [...new Set(picked.filter((m) => text.includes(`@${m.name}`)).map((m) => m.userId))];
}

export function MentionTextarea({
  name,
  label,
  rows,
  placeholder,
  disabled,
  autoFocus,
  value,
  onChange,
  picked,
  onPick,
}: {
  name: string;
  label: string;
  rows: number;
  placeholder?: string;
  disabled?: boolean;
  autoFocus?: boolean;
  value: string;
  onChange: (value: string) => void;
  /** The people picked so far (their `@Name` may since have been deleted: `mentionedIn` decides). */
  picked: readonly Member[];
  onPick: (member: Member) => void;
}) {
  const listId = useId();
  const [caret, setCaret] = useState(0);
  const [active, setActive] = useState(0);
  const [dismissedAt, setDismissedAt] = useState<number | null>(null);

  const typed = TYPED_MENTION.exec(value.slice(0, caret));
  const query = typed ? typed[2]! : null;
  const found = useMemberSearch(query, { limit: SHOWN, listWhenEmpty: true });
  const options =
    found === null || !("members" in found) || dismissedAt === caret
      ? []
      : found.members.filter((m) => !picked.some((p) => p.userId === m.userId));
  const open = options.length > 0;
  const activeIndex = Math.min(active, options.length - 1);
  const optionId = (index: number) => `${listId}-option-${index}`;

  const pick = (member: Member, textarea: HTMLTextAreaElement) => {
    const start = caret - (query?.length ?? 0) - 1;
    const inserted = `@${member.name} `;
    const next = value.slice(0, start) + inserted + value.slice(caret);
    onChange(next);
    onPick(member);
    const at = start + inserted.length;
    setCaret(at);
    setActive(0);
    // After React writes the value: the caret goes after the name, where typing goes on.
    requestAnimationFrame(() => {
      textarea.setSelectionRange(at, at);
      textarea.focus();
    });
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (!open) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      setActive((activeIndex + step + options.length) % options.length);
    } else if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      pick(options[activeIndex]!, event.currentTarget);
    } else if (event.key === "Escape") {
      // Closes the list only (a surrounding form or dialog keeps its own Escape for a second press).
      event.preventDefault();
      event.stopPropagation();
      setDismissedAt(caret);
    }
  };

  return (
    <div className="mention-input">
      <textarea
        name={name}
        aria-label={label}
        rows={rows}
        required
        maxLength={MAX_COMMENT_BODY_CHARS}
        placeholder={placeholder}
        disabled={disabled}
        // biome-ignore lint/a11y/noAutofocus: the box opens on request, and writing in it is the next step
        autoFocus={autoFocus}
        value={value}
        role="combobox"
        aria-autocomplete="list"
        aria-haspopup="listbox"
        aria-expanded={open}
        aria-controls={listId}
        aria-activedescendant={open ? optionId(activeIndex) : undefined}
        onChange={(event) => {
          onChange(event.target.value);
          setCaret(event.target.selectionStart);
          setActive(0);
        }}
        onSelect={(event) => setCaret(event.currentTarget.selectionStart)}
        onKeyDown={onKeyDown}
        onBlur={() => setDismissedAt(caret)}
        onFocus={() => setDismissedAt(null)}
      />
      <div id={listId} role="listbox" aria-label="Mention someone" className="mention-options" hidden={!open}>
        {options.map((member, index) => (
          <div
            key={member.userId}
            id={optionId(index)}
            role="option"
            // Focus stays in the box (aria-activedescendant): an option is never focused itself.
            tabIndex={-1}
            aria-selected={index === activeIndex}
            className="mention-option"
            // Before the textarea's blur: a click picks without closing the list first.
            onMouseDown={(event) => {
              event.preventDefault();
              const textarea = event.currentTarget.closest(".mention-input")?.querySelector("textarea");
              if (textarea) pick(member, textarea);
            }}
          >
            <span className="mention-option-name">{member.name}</span> <span className="muted">{member.email}</span>
          </div>
        ))}
      </div>
    </div>
  );
}
