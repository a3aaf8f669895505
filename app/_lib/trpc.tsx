"use client";
/**
 * The browser's client of the typed API (/api/trpc, the same procedures
 * outside clients call). Client components call `useTRPC()` and hand its
 * options to TanStack Query (`useQuery(trpc.read.queryOptions(...))`,
 * `useMutation(trpc.sections.mutationOptions())`,
 * `useSubscription(trpc.draftStatus.subscriptionOptions(...))`); inputs and
 * outputs are the server's own types, inferred from `AppRouter`.
 *
 * Calls carry the session cookie, so the server knows the signed-in person;
 * they pass its cross-site guard (server/http/csrf.ts) as the page's own
 * requests: POSTs are `application/json` with this origin, subscriptions are
 * same-origin EventSource GETs.
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { type ReactNode, useState } from "react";
import type { AppRouter } from "@/server/api/router";

/**
 * `useTRPC` gives TanStack Query options (queries and subscriptions a component follows); `useTRPCClient` the
 * plain client, for one-off calls: it costs a context read, where a `useMutation` is an observer per component
 * (thousands on a long document's sections).
 */
export const { TRPCProvider: TypedApiProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

const API_URL = "/api/trpc";

function makeQueryClient(): QueryClient {
  // Fresh data comes from subscriptions and invalidation after mutations, not from refetching on focus.
  return new QueryClient({ defaultOptions: { queries: { staleTime: 30_000, refetchOnWindowFocus: false } } });
}

let browserQueryClient: QueryClient | undefined;

/** One QueryClient per browser tab; on the server a new one per render, so no request sees another's data. */
function queryClientFor(): QueryClient {
  if (typeof window === "undefined") return makeQueryClient();
  browserQueryClient ??= makeQueryClient();
  return browserQueryClient;
}

/** Mounts TanStack Query and the typed client for the pages under it (app/layout.tsx). */
export function TRPCProvider({ children }: { children: ReactNode }) {
  const queryClient = queryClientFor();
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === "subscription",
          true: httpSubscriptionLink({ url: API_URL }),
          false: httpBatchLink({ url: API_URL }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TypedApiProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TypedApiProvider>
    </QueryClientProvider>
  );
}
