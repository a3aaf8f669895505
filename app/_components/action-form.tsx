"use client";

/** Client plumbing shared by the forms that call the server (a tool over tRPC, or a server action) and show its error. */
import { useRouter } from "next/navigation";
import { useState, type FormEvent, type ReactNode } from "react";
import type { ActionResult } from "@/app/_lib/action-result";

/** The text of a form's field (every field these forms read is text; a missing one reads as ""). */
export const field = (data: FormData, name: string): string => data.get(name)?.toString() ?? "";

/** An optional field: undefined when left empty, so the tool applies its default. */
export function optionalField(data: FormData, name: string): string | undefined {
  const value = field(data, name);
  return value.trim() === "" ? undefined : value;
}

/** An optional number field (type="number"); the tool's schema judges the number. */
export function optionalNumber(data: FormData, name: string): number | undefined {
  const value = optionalField(data, name);
  return value === undefined ? undefined : Number(value);
}

/**
 * Submits a form's data to the server. While it runs `pending` is true;
 * a failure's message lands in `error`; on success `onSuccess` gets the value,
 * the form is cleared and the page refreshed.
 */
export function useActionForm<T>(submit: (data: FormData) => Promise<ActionResult<T>>, onSuccess?: (value: T) => void) {
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    setPending(true);
    setError(null);
    const result = await submit(data);
    setPending(false);
    if (!result.ok) {
      setError(result.message);
      return;
    }
    onSuccess?.(result.value);
    form.reset();
    router.refresh();
  }

  return { pending, error, onSubmit };
}

/** A form's error message, under the form (`spaced`: with room above it, where the settings pages put it). */
export function FormError({ error, spaced = true }: { error: string | null; spaced?: boolean }) {
  return error ? (
    <p className={spaced ? "form-error form-error-spaced" : "form-error"} role="alert">
      {error}
    </p>
  ) : null;
}

/** An error beside the control it is about (a small form or a button in a row). */
export function InlineError({ error }: { error: string | null | undefined }) {
  return error ? (
    <p className="inline-error" role="alert">
      {error}
    </p>
  ) : null;
}

/** A select saved as soon as it changes; on failure it goes back to `initial` and shows why. */
export function AutoSaveSelect<T extends string>({
  label,
  initial,
  save,
  children,
}: {
  label: string;
  initial: T;
  save: (value: T) => Promise<ActionResult<unknown>>;
  children: ReactNode;
}) {
  const router = useRouter();
  const [value, setValue] = useState<T>(initial);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  return (
    <div className="role-select">
      <select
        aria-label={label}
        value={value}
        disabled={pending}
        onChange={async (event) => {
          const next = event.currentTarget.value as T;
          setValue(next);
          setPending(true);
          setError(null);
          const result = await save(next);
          setPending(false);
          if (!result.ok) {
            setValue(initial);
            setError(result.message);
            return;
          }
          router.refresh();
        }}
      >
        {children}
      </select>
      {pending ? <span className="muted small">Saving…</span> : null}
      <InlineError error={error} />
    </div>
  );
}

/** The optional "expires in days" field of the forms that create links and tokens; empty means never. */
export function OptionalExpiryField() {
  return (
    <label className="field field-narrow">
      <span>
        Expires in days <span className="muted">(optional)</span>
      </span>
      <input name="expiresInDays" type="number" min={1} max={3650} placeholder="Never" />
    </label>
  );
}
