/**
 * The colour theme a person chose: the system's (prefers-color-scheme), or light or dark whatever the system says.
 * The choice lives in a cookie so the root layout renders the chosen theme on the server (no flash of the other one
 * before a script could run); "system" is the absence of a choice, left to CSS.
 */
export const THEME_COOKIE = "quire-theme";
export const THEMES = ["system", "light", "dark"] as const;
export type Theme = (typeof THEMES)[number];

/** The theme a cookie value names; anything else (no cookie, an old or forged value) is the system's. */
export function parseTheme(value: string | undefined): Theme {
  return THEMES.find((theme) => theme === value) ?? "system";
}

/** The `data-theme` attribute of <html> for a theme: none for "system", so the stylesheet follows the media query. */
export function themeAttribute(theme: Theme): "light" | "dark" | undefined {
  return theme === "system" ? undefined : theme;
}
