"use client";

import { useRouter } from "next/navigation";
import type { ReactNode } from "react";
import { jumpTo } from "./jump";

/** A link to a hit that lands on its section (see jump.ts); a modified click opens it as any link. */
export function HitLink({ href, className, children }: { href: string; className?: string; children: ReactNode }) {
  const router = useRouter();
  return (
    <a
      href={href}
      className={className}
      onClick={(event) => {
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        jumpTo(router, href);
      }}
    >
      {children}
    </a>
  );
}
