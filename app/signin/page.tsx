import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AuthCard } from "@/app/_components/auth-card";
import { getSessionUser, safeCallbackPath } from "@/app/_lib/session";
import { firstParam, type SearchParams } from "@/app/_lib/search-params";
import { signInErrorMessage } from "@/server/auth/sign-in-errors";
import { getBridge } from "@/server/bridge";
import { OwnerSetupForm, SignInForm } from "./forms";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = await searchParams;
  const callbackUrl = safeCallbackPath(firstParam(params.callbackUrl));
  if (await getSessionUser()) redirect(callbackUrl);

  const initialized = await getBridge().hasUsers();
  const errorCode = firstParam(params.error);
  const initialError = errorCode ? signInErrorMessage(errorCode) : undefined;

  return (
    <AuthCard>
      {initialized ? (
        <>
          <h1>Sign in</h1>
          <p className="muted">Documents with branches, history and review.</p>
          <SignInForm callbackUrl={callbackUrl} initialError={initialError} />
        </>
      ) : (
        <>
          <h1>Create the owner account</h1>
          <p className="muted">
            This Quire instance has no accounts yet. The first account owns the workspace and can invite everyone else.
          </p>
          <OwnerSetupForm callbackUrl={callbackUrl} />
        </>
      )}
    </AuthCard>
  );
}
