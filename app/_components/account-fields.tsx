/** Fields shared by the forms that create an account (owner setup, joining by invite). */

export const MIN_PASSWORD_LENGTH = 8;

/** The message for a new password that is too short, or null when it is long enough. */
export function passwordTooShort(password: string): string | null {
  return password.length < MIN_PASSWORD_LENGTH ? `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.` : null;
}

export function NameField() {
  return (
    <label className="field">
      <span>Name</span>
      {/* biome-ignore lint/a11y/noAutofocus: the form is the whole page; its first field is where everyone starts */}
      <input name="name" type="text" autoComplete="name" required maxLength={200} autoFocus />
    </label>
  );
}

export function NewPasswordField() {
  return (
    <label className="field">
      <span>Password</span>
      <input name="password" type="password" autoComplete="new-password" required minLength={MIN_PASSWORD_LENGTH} />
      <small className="muted">At least {MIN_PASSWORD_LENGTH} characters.</small>
    </label>
  );
}
