"use client";

import { useEffect, useRef, useState } from "react";
import { THEME_COOKIE, THEMES, type Theme, themeAttribute } from "@/app/_lib/theme";
import "./theme-switch.css";

const LABELS: Record<Theme, string> = { system: "System", light: "Light", dark: "Dark" };
const ONE_YEAR_SECONDS = 365 * 24 * 60 * 60;

/**
 * The header's theme switch: System, Light or Dark. The choice applies at once (data-theme on <html>) and is kept in
 * a cookie the root layout reads, so the next page is rendered in it from the first paint.
 */
export function ThemeSwitch({ initial }: { initial: Theme }) {
  const [theme, setTheme] = useState(initial);
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);

  // A press anywhere else closes the panel, as a menu would; Escape closes it and returns to the button.
  useEffect(() => {
    if (!open) return;
    const closeOutside = (event: PointerEvent) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    const closeOnEscape = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener("pointerdown", closeOutside);
    document.addEventListener("keydown", closeOnEscape);
    return () => {
      document.removeEventListener("pointerdown", closeOutside);
      document.removeEventListener("keydown", closeOnEscape);
    };
  }, [open]);

  function choose(next: Theme) {
    setTheme(next);
    const attribute = themeAttribute(next);
    if (attribute) document.documentElement.dataset.theme = attribute;
    else delete document.documentElement.dataset.theme;
    // biome-ignore lint/suspicious/noDocumentCookie: one first-party preference cookie; the Cookie Store API is not in every browser Quire supports.
    document.cookie = `${THEME_COOKIE}=${next}; path=/; max-age=${ONE_YEAR_SECONDS}; samesite=lax`;
  }

  return (
    <div className="theme-switch" ref={root}>
      <button
        ref={button}
        type="button"
        className="button button-quiet theme-switch-button"
        aria-label={`Theme: ${LABELS[theme]}`}
        aria-expanded={open}
        aria-controls="theme-switch-menu"
        title="Theme"
        onClick={() => setOpen(!open)}
      >
        <ThemeIcon theme={theme} />
      </button>
      {open ? (
        <div id="theme-switch-menu" className="theme-switch-menu" role="radiogroup" aria-labelledby="theme-switch-title">
          <span id="theme-switch-title" className="theme-switch-title">
            Theme
          </span>
          {THEMES.map((option) => (
            <label key={option} className="theme-switch-option">
              <input type="radio" name="theme" value={option} checked={theme === option} onChange={() => choose(option)} />
              {LABELS[option]}
            </label>
          ))}
        </div>
      ) : null}
    </div>
  );
}

function ThemeIcon({ theme }: { theme: Theme }) {
  return (
    <svg className="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="1.5">
      {theme === "light" ? (
        <>
          <circle cx="8" cy="8" r="3" />
          <path d="M8 1v2M8 13v2M1 8h2M13 8h2M3 3l1.4 1.4M11.6 11.6 13 13M3 13l1.4-1.4M11.6 4.4 13 3" strokeLinecap="round" />
        </>
      ) : theme === "dark" ? (
        <path d="M13.5 10.2A5.8 5.8 0 0 1 5.8 2.5a5.8 5.8 0 1 0 7.7 7.7Z" strokeLinejoin="round" />
      ) : (
        <>
          <circle cx="8" cy="8" r="6" />
          <path d="M8 2a6 6 0 0 1 0 12Z" fill="currentColor" stroke="none" />
        </>
      )}
    </svg>
  );
}
