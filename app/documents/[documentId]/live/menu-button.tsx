"use client";

/**
 * A button that opens a menu of actions (the WAI-ARIA menu button pattern):
 * the menu takes focus on its first item, ↑ ↓ Home End move between items,
 * Enter or a click takes one, Escape closes it and gives focus back to the
 * button, and focus leaving it closes it. Used for "+ Insert block", a
 * section's "⋯" and a block's "⋯".
 */
import { type KeyboardEvent, type ReactNode, useEffect, useId, useRef, useState } from "react";

export interface MenuItem {
  label: string;
  onSelect: () => void;
  /** Shown in the danger colour (Delete, Remove). */
  danger?: boolean;
  disabled?: boolean;
}

export function MenuButton({
  label,
  buttonLabel,
  menuLabel,
  items,
  disabled,
  className,
}: {
  /** What the button shows. */
  label: ReactNode;
  /** The button's accessible name when `label` is a symbol. */
  buttonLabel?: string;
  menuLabel: string;
  items: readonly MenuItem[];
  disabled?: boolean;
  className?: string;
}) {
  const [open, setOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const menuId = useId();

  // Opening puts focus on the first item (once: a re-render while open leaves focus where the keys moved it).
  useEffect(() => {
    if (open) menu.current?.querySelector<HTMLButtonElement>("[role=menuitem]:not(:disabled)")?.focus();
  }, [open]);

  const onMenuKey = (event: KeyboardEvent) => {
    const entries = [...(menu.current?.querySelectorAll<HTMLButtonElement>("[role=menuitem]:not(:disabled)") ?? [])];
    const at = entries.indexOf(document.activeElement as HTMLButtonElement);
    const go = (index: number) => entries[(index + entries.length) % entries.length]?.focus();
    if (event.key === "ArrowDown") go(at + 1);
    else if (event.key === "ArrowUp") go(at - 1);
    else if (event.key === "Home") go(0);
    else if (event.key === "End") go(entries.length - 1);
    else if (event.key === "Escape") {
      setOpen(false);
      toggle.current?.focus();
    } else if (event.key === "Tab") setOpen(false);
    else return;
    if (event.key !== "Tab") event.preventDefault();
    event.stopPropagation();
  };

  return (
    <div className={`menu-button${className ? ` ${className}` : ""}`}>
      <button
        ref={toggle}
        type="button"
        className="button button-small button-quiet"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        aria-label={buttonLabel}
        title={buttonLabel}
        disabled={disabled}
        onClick={() => setOpen((shown) => !shown)}
        onKeyDown={(event) => {
          if ((event.key === "ArrowDown" || event.key === "ArrowUp") && !open) {
            event.preventDefault();
            setOpen(true);
          }
        }}
      >
        {label}
      </button>
      {open ? (
        <div
          ref={menu}
          id={menuId}
          className="menu-list"
          data-overlay=""
          role="menu"
          aria-label={menuLabel}
          tabIndex={-1}
          onKeyDown={onMenuKey}
          onBlur={(event) => {
            if (!event.currentTarget.contains(event.relatedTarget as Node | null) && event.relatedTarget !== toggle.current) setOpen(false);
          }}
        >
          {items.map((item) => (
            <button
              key={item.label}
              type="button"
              role="menuitem"
              tabIndex={-1}
              className={item.danger ? "menu-item-danger" : undefined}
              disabled={item.disabled}
              onClick={() => {
                setOpen(false);
                item.onSelect();
              }}
            >
              {item.label}
            </button>
          ))}
        </div>
      ) : null}
    </div>
  );
}
