"use client";

/**
 * What a page shows in place of content it cannot render (readable-content.ts
 * says why that can happen): a small marked placeholder per block, per
 * section name or per section's content, and `BlockBoundary`, which turns a
 * block that fails while rendering in the browser into the same placeholder
 * instead of taking the page down with it.
 */
import { Component, type ReactNode } from "react";
import { UNREADABLE_NAME } from "./readable-content";

export function UnreadableBlock({ blockType }: { blockType: string | null }) {
  return (
    <div className="block-notice block-unreadable" data-testid="unreadable-block">
      <span className="block-kind">{blockType ?? "Block"}</span>
      <span className="block-detail">This block could not be shown</span>
    </div>
  );
}

export function UnreadableContent() {
  return (
    <div className="block-notice block-unreadable" data-testid="unreadable-content">
      <span className="block-detail">This section's content could not be shown</span>
    </div>
  );
}

export function UnreadableName() {
  return (
    <span className="unreadable-name" data-testid="unreadable-name">
      {UNREADABLE_NAME}
    </span>
  );
}

/** One block's renderer, caught: if it throws, the block is marked and the rest of the page goes on. */
export class BlockBoundary extends Component<{ blockType: string | null; children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override render() {
    return this.state.failed ? <UnreadableBlock blockType={this.props.blockType} /> : this.props.children;
  }
}
