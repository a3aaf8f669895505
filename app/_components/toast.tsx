"use client";

/**
 * One short notice at the foot of the screen, with an optional action (e.g.
 * "Section deleted · Undo"). It leaves on its own after `durationMs`, when
 * its action is taken, or when dismissed; a newer notice replaces it. It is
 * announced politely (role=status) and does not take focus, so typing goes on.
 * It stays clear of the bar pinned at the foot (the commit bar), wherever that is.
 */
import "./toast.css";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import { useClearOfFootBar } from "@/app/_lib/foot-inset";

/** How long a notice stays unless told otherwise. */
const TOAST_SHOWN_MS = 8_000;

export interface ToastNotice {
  message: string;
  action?: { label: string; run: () => Promise<string | null> };
  durationMs?: number;
}

const ToastContext = createContext<(notice: ToastNotice) => void>(() => {});

/** Shows a notice from anywhere under a ToastProvider. */
export const useToast = () => useContext(ToastContext);

export function ToastProvider({ children }: { children: ReactNode }) {
  const [shown, setShown] = useState<{ id: number; notice: ToastNotice } | null>(null);
  const show = useCallback((notice: ToastNotice) => setShown((last) => ({ id: (last?.id ?? 0) + 1, notice })), []);
  // Stable, so the notice's timer is not restarted each time the page around it re-renders (it then never left).
  const hide = useCallback(() => setShown(null), []);
  const value = useMemo(() => show, [show]);
  const region = useRef<HTMLDivElement>(null);
  useClearOfFootBar(region, shown?.id ?? null);
  return (
    <ToastContext.Provider value={value}>
      {children}
      <div ref={region} className="toast-region" role="status" aria-live="polite">
        {shown ? <Toast key={shown.id} notice={shown.notice} onDone={hide} /> : null}
      </div>
    </ToastContext.Provider>
  );
}

function Toast({ notice, onDone }: { notice: ToastNotice; onDone: () => void }) {
  const [state, setState] = useState<{ kind: "shown" } | { kind: "pending" } | { kind: "error"; message: string }>({ kind: "shown" });
  const duration = notice.durationMs ?? TOAST_SHOWN_MS;
  useEffect(() => {
    if (state.kind !== "shown") return;
    const timer = window.setTimeout(onDone, duration);
    return () => window.clearTimeout(timer);
  }, [state.kind, duration, onDone]);
  const act = async () => {
    if (!notice.action) return;
    setState({ kind: "pending" });
    const error = await notice.action.run();
    if (error) setState({ kind: "error", message: error });
    else onDone();
  };
  return (
    <div className="toast" data-testid="toast">
      <span>{state.kind === "error" ? state.message : notice.message}</span>
      {notice.action && state.kind !== "error" ? (
        <button type="button" className="toast-action" onClick={act} disabled={state.kind === "pending"}>
          {state.kind === "pending" ? "Working…" : notice.action.label}
        </button>
      ) : null}
      <button type="button" className="toast-close" onClick={onDone} aria-label="Dismiss">
        ×
      </button>
    </div>
  );
}
