"use client";

/**
 * The first rows of a stored CSV file, fetched through the reader's signed
 * download link (the app's own route, asked for by path) and read by
 * papaparse. Only the head of the file is read; the block's own
 * `rowCount` says how many rows there are in all. The table takes the
 * rendered text's table style (it scrolls inside itself when wide).
 */
import Papa from "papaparse";
import { useEffect, useState } from "react";

const PREVIEW_ROWS = 5;
/** Enough bytes for the first rows of any sensible table; a longer file is cut and its last partial row dropped. */
const PREVIEW_BYTES = 64 * 1024;

export function CsvPreview({ url, headers }: { url: string; headers: readonly string[] }) {
  const [rows, setRows] = useState<{ kind: "loading" } | { kind: "rows"; rows: string[][] } | { kind: "error" }>({ kind: "loading" });
  useEffect(() => {
    const target = new URL(url, window.location.href);
    const controller = new AbortController();
    fetch(`${target.pathname}${target.search}`, { signal: controller.signal, headers: { Range: `bytes=0-${PREVIEW_BYTES - 1}` } })
      .then(async (response) => {
        if (!response.ok) throw new Error(String(response.status));
        const text = (await response.text()).slice(0, PREVIEW_BYTES);
        const { data } = Papa.parse<string[]>(text, { skipEmptyLines: true, preview: PREVIEW_ROWS + 1 });
        setRows({ kind: "rows", rows: data.slice(1) });
      })
      .catch(() => {
        if (!controller.signal.aborted) setRows({ kind: "error" });
      });
    return () => controller.abort();
  }, [url]);
  if (rows.kind === "error") return <p className="muted small">The preview could not be loaded; the file can still be downloaded.</p>;
  return (
    <div className="markdown csv-preview" data-testid="csv-preview">
      <table>
        <thead>
          <tr>
            {headers.map((header, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: headers may repeat and never reorder
              <th key={index} scope="col">
                {header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.kind === "loading" ? (
            <tr>
              <td colSpan={Math.max(headers.length, 1)} className="muted">
                Loading preview…
              </td>
            </tr>
          ) : (
            rows.rows.map((row, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a fixed preview of rows that never reorder
              <tr key={index}>
                {headers.map((_, column) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: as above
                  <td key={column}>{row[column] ?? ""}</td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
